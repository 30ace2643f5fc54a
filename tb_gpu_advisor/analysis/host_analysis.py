"""Every analysis of one host's TraceModel, computed once: what the report renders and the rules read."""

from dataclasses import dataclass

from tb_gpu_advisor.analysis.balance import balance
from tb_gpu_advisor.analysis.breakdown import breakdown
from tb_gpu_advisor.analysis.kernels import kernel_table
from tb_gpu_advisor.analysis.launch import launch_stats
from tb_gpu_advisor.analysis.steps import analysis_window, find_steps
from tb_gpu_advisor.analysis.transfers import transfer_stats
from tb_gpu_advisor.analysis.utilization import device_usage, input_wait


@dataclass(frozen=True)
class HostAnalysis:
    step_set: object  # steps.StepSet
    window: object  # model.intervals.Intervals: the analysis window (the steps, or the span of activity)
    usages: tuple  # utilization.DeviceUsage per GPU, in model.gpus order
    active_busy_pct: tuple  # busy % of the GPUs that took part in the steps
    input_wait: object  # utilization.InputWait
    kernels: tuple  # kernels.KernelRow, most time first
    launch: object  # launch.LaunchStats
    whole: object  # breakdown.Breakdown over the window
    per_step: object  # breakdown.Breakdown per step
    transfers: dict  # transfers.TransferStats per direction key
    balance: object  # balance.Balance


def analyze_host(model):
    """The HostAnalysis of a TraceModel."""
    step_set = find_steps(model)
    usages = tuple(device_usage(gpu, step_set) for gpu in model.gpus)
    # In pre-grouped traces a GPU without its own Steps marker took no part in any step (e.g. GPU:1 of the
    # real 8xV100 trace, which only ran 19 copies before the step): it does not lower the mean.
    active = tuple(u.busy_pct for u in usages if u.busy_pct is not None
                   and (step_set.source != "device" or u.ordinal in step_set.device_markers))
    window = analysis_window(model, step_set)
    return HostAnalysis(
        step_set=step_set,
        window=window,
        usages=usages,
        active_busy_pct=active,
        input_wait=input_wait(model, step_set),
        kernels=tuple(kernel_table(model.gpus)),
        launch=launch_stats(model, step_set),
        whole=breakdown(model, window.start_ps, window.end_ps),
        per_step=breakdown(model, [s.start_ps for s in step_set.steps], [s.end_ps for s in step_set.steps]),
        transfers=transfer_stats(model.gpus),
        balance=balance(list(usages)),
    )
