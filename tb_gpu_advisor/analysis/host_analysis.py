"""Every analysis of one host's TraceModel, computed once: what the report renders and the rules read."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.balance import balance
from tb_gpu_advisor.analysis.batch_prep import batch_prep
from tb_gpu_advisor.analysis.collective_bandwidth import collective_bandwidth, link_of
from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES, category_spans, compute_busy, split_windows
from tb_gpu_advisor.analysis.compilation import compilation
from tb_gpu_advisor.analysis.confidence import trace_confidence
from tb_gpu_advisor.analysis.configuration import configuration
from tb_gpu_advisor.analysis.cpu_load import cpu_load
from tb_gpu_advisor.analysis.framework import detect_framework
from tb_gpu_advisor.analysis.feeder_waits import feeder_blocking
from tb_gpu_advisor.analysis.gc_pauses import gc_pauses
from tb_gpu_advisor.analysis.gpu_memory import gpu_memory
from tb_gpu_advisor.analysis.host_wait_spans import host_wait_spans
from tb_gpu_advisor.analysis.idle_attribution import attribute_idle
from tb_gpu_advisor.analysis.launch_queue import queue_full_launches
from tb_gpu_advisor.analysis.host_cores import host_cores
from tb_gpu_advisor.analysis.kernels import kernel_table, op_dtypes_by_name
from tb_gpu_advisor.analysis.launch import launch_stats
from tb_gpu_advisor.analysis.input_dtypes import wide_image_inputs
from tb_gpu_advisor.analysis.peaks import device_peaks
from tb_gpu_advisor.analysis.placement import cpu_placed_ops
from tb_gpu_advisor.analysis.optimizer_loop import optimizer_loop
from tb_gpu_advisor.analysis.py_function_calls import gil_waits, py_function_calls
from tb_gpu_advisor.analysis.roofline import (
    flop_utilization,
    kernel_costs,
    kernel_roofline,
    plausible_costs,
    shared_peaks,
)
from tb_gpu_advisor.analysis.rounding import ms, pct
from tb_gpu_advisor.analysis.step_variance import step_variance
from tb_gpu_advisor.analysis.steps import analysis_window, find_steps, step_time_stats_ms
from tb_gpu_advisor.analysis.kernel_types import in_window, kernel_types_in_window
from tb_gpu_advisor.analysis.stream_idle import stream_idle
from tb_gpu_advisor.analysis.transfers import transfer_stats
from tb_gpu_advisor.analysis.unused_gpus import unused_gpus
from tb_gpu_advisor.analysis.utilization import device_usage, input_wait
from tb_gpu_advisor.analysis.xplane_collectives import xplane_collectives
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import HOST_STAGING_TAG, TF_FUNCTION_TAG


@dataclass(frozen=True)
class HostAnalysis:
    step_set: object  # steps.StepSet
    window: object  # model.intervals.Intervals: the analysis window (the steps, or the span of activity)
    usages: tuple  # utilization.DeviceUsage per GPU, in model.gpus order
    active_ordinals: tuple  # the GPUs that took part in the steps
    compute_busy: object  # Intervals when any GPU computes (breakdown.compute_mask)
    input_wait: object  # utilization.InputWait
    kernels: tuple  # kernels.KernelRow, most time first
    launch: object  # launch.LaunchStats
    whole: object  # breakdown.Breakdown over the window
    per_step: object  # breakdown.Breakdown per step
    transfers: dict  # transfers.TransferStats per direction key
    balance: object  # balance.Balance
    framework: object  # framework.Framework: whose idiom the fixes are written in
    confidence: object  # confidence.Confidence: how far the capture supports a verdict
    work_by_type: tuple  # kernel_types.KernelTypeTimes per GPU over the window, in model.gpus order
    stream_idle: tuple  # stream_idle.stream_idle per GPU over the window, in model.gpus order
    roofline: tuple = ()  # roofline.KernelRoofline per kernel row, in `kernels` order
    device_peaks: tuple = ()  # peaks.DevicePeaks per GPU, in model.gpus order
    flop_utilization: object = None  # roofline.FlopUtilization of the active GPUs over the window
    implausible_costs: tuple = ()  # roofline.ImplausibleCost: HLO ops left out, faster than their GPU allows
    batch_prep: object = None  # batch_prep.BatchPrep: the device idle at each step's start (None without a device)
    cpu_ops: tuple = ()  # placement.CpuOp: the step's compute ops that launched no GPU work, most time first
    wide_inputs: tuple = ()  # input_dtypes.WideInput: image-shaped 32-bit program inputs copied to the GPU
    cpu_load: object = None  # cpu_load.CpuLoad: host threads' busy cores against the machine's
    link: object = None  # collective_bandwidth.Link of the active GPUs, or None
    gc_pauses: object = None  # gc_pauses.GcPauses, or None when the trace records no collection
    feeder_waits: object = None  # feeder_waits.FeederWaits, or None when no feeding thread waits with the device idle
    configuration: object = None  # configuration.Configuration: what the trace says about how the job ran
    gpu_memory: tuple = ()  # gpu_memory.GpuMemory per GPU allocator in the trace
    collective_bandwidth: tuple = ()  # collective_bandwidth.CollectiveBandwidth per collective kind
    collectives: tuple = ()  # model.trace.CollectiveCall: the Kineto reader's, or XPlane's collective kernels
    unused_gpus: object = None  # unused_gpus.UnusedGpus: GPUs without kernels beside working ones, or None
    compilation: object = None  # compilation.Compilation: torch.compile, graph replays, XLA, tf.function seen
    optimizer_loop: object = None  # optimizer_loop.OptimizerLoop: the PyTorch optimizer step's kernels, or None
    py_function_calls: object = None  # py_function_calls.PyFunctionCalls: tf.data's Python calls alone vs together
    idle: object = None  # idle_attribution.IdleAttribution: each GPU's idle time by cause
    idle_causes: object = None  # {IDLE_CAUSES cause: Intervals}: the one cause of each instant every GPU idles
    variance: object = None  # step_variance.StepVariance of the steady steps, or None under 3 steps

    @property
    def active_busy_pct(self) -> tuple[float, ...]:
        """Busy % of the GPUs that took part in the steps."""
        return tuple(u.busy_pct for u in self.usages if u.ordinal in self.active_ordinals)

    @property
    def active_compute_busy_pct(self) -> tuple[float, ...]:
        """Compute busy % (collectives alone excluded) of the GPUs that took part in the steps."""
        return tuple(u.compute_busy_pct for u in self.usages if u.ordinal in self.active_ordinals)

    @property
    def active_kernel_busy_pct(self) -> tuple[float, ...]:
        """Kernel busy % (copies, memsets and collectives alone excluded) of the GPUs that took part in the
        steps."""
        return tuple(u.kernel_busy_pct for u in self.usages if u.ordinal in self.active_ordinals)

    # The summary numbers, at the report's precision: the report shows them and the rules quote them.
    @property
    def gpu_busy_pct(self) -> float | None:
        """Mean busy % of the GPUs that took part in the steps."""
        active = self.active_busy_pct
        return pct(sum(active) / len(active)) if active else None

    @property
    def gpu_compute_busy_pct(self) -> float | None:
        """Mean compute busy % of the GPUs that took part in the steps."""
        active = self.active_compute_busy_pct
        return pct(sum(active) / len(active)) if active else None

    @property
    def gpu_kernel_busy_pct(self) -> float | None:
        """Mean kernel busy % of the GPUs that took part in the steps."""
        active = self.active_kernel_busy_pct
        return pct(sum(active) / len(active)) if active else None

    @property
    def input_wait_pct(self):
        """The time line's input wait (breakdown_pct's `input_wait`: the instants every GPU idles while the host
        waits for or prepares its input, by the idle attribution's one cause per instant): one figure under one
        definition wherever the report says "input wait"."""
        return self.breakdown_pct["input_wait"]

    @property
    def pipeline_wait_pct(self):
        """The input wait's % of the analysis window without the step thread's waits on loader threads: tf.data's
        or the DataLoader's own wait (what the tf.data and DataLoader rules read)."""
        window_ps = self.window_ps
        return pct(100.0 * int(self.whole.pipeline_wait_ps.sum()) / window_ps) if window_ps else None

    @property
    def step_time_ms(self):
        """{mean, median, stdev, count} of the step times in ms."""
        stats = step_time_stats_ms(self.step_set)
        return {key: (round(value, 6) if isinstance(value, float) else value) for key, value in stats.items()}

    @property
    def window_ps(self):
        return int(self.whole.window_ps.sum())

    @property
    def breakdown_pct(self):
        """{category: % of the analysis window} (None for an empty window)."""
        window_ps = self.window_ps
        return {
            name: pct(100.0 * int(self.whole.category_ps[name].sum()) / window_ps) if window_ps else None
            for name in BREAKDOWN_CATEGORIES
        }

    def step_breakdown_ms(self, index):
        """{category: ms} of step `index`."""
        return {name: ms(int(self.per_step.category_ps[name][index])) for name in BREAKDOWN_CATEGORIES}

    def step_pipeline_wait_ms(self, index):
        """The input wait of step `index` without its waits on loader threads (pipeline_wait_pct), in ms."""
        return ms(int(self.per_step.pipeline_wait_ps[index]))


def analyze_host(model):
    """The HostAnalysis of a TraceModel."""
    step_set = find_steps(model)
    window = analysis_window(model, step_set)
    usages = tuple(device_usage(gpu, step_set, window) for gpu in model.gpus)
    # In pre-grouped traces a GPU without its own Steps marker took no part in any step (e.g. GPU:1 of the
    # real 8xV100 trace, which only ran 19 copies before the step): it does not lower the mean.
    active = tuple(
        u.ordinal
        for u in usages
        if u.busy_pct is not None and (step_set.source != "device" or u.ordinal in step_set.device_markers)
    )
    framework = detect_framework(model)
    compiled = compilation(model, framework)
    costs, implausible_costs = plausible_costs(model, kernel_costs(model))
    kernels = tuple(kernel_table(model.gpus, costs))
    dtypes = op_dtypes_by_name(kernels)
    peaks = shared_peaks(model.gpus)
    active_gpus = [gpu for gpu in model.gpus if gpu.ordinal in set(active)]
    world = model.environment.get("world_size")
    link = link_of(active_gpus[0].capabilities, world if isinstance(world, int) else 0) if active_gpus else None
    load = cpu_load(model)
    calls = model.collectives or xplane_collectives(model)
    unused = unused_gpus(model, step_set, framework, calls)
    # The step thread's waits on its loader and its batch preparation are input time in the breakdown.
    feeders = feeder_blocking(model, step_set, window)
    prep = batch_prep(model, step_set)
    loader_waits = feeders.input_blocked if feeders is not None else intervals.EMPTY
    input_prep = prep.input_spans if prep is not None else intervals.EMPTY
    starts, ends = [s.start_ps for s in step_set.timed_steps], [s.end_ps for s in step_set.timed_steps]
    queue_full = queue_full_launches(model)
    waits = host_wait_spans(model, queue_full)
    py_calls = py_function_calls(
        model.host_activity.py_function_calls,
        model.host_activity.input_waits,
        model.host_activity.tagged.get(TF_FUNCTION_TAG),
    )
    gil = gil_waits(prep, py_calls)
    idle = attribute_idle(
        model, loader_waits, waits, input_prep, prep.fed_gaps if prep is not None else intervals.EMPTY, gil
    )
    # One attribution: the breakdown's host-side time where every GPU idles is the idle attribution's.
    spans = category_spans(model, dtypes, loader_waits, input_prep, waits, idle, gil)
    per_step = split_windows(spans, starts, ends)
    return HostAnalysis(
        step_set=step_set,
        window=window,
        usages=usages,
        active_ordinals=active,
        compute_busy=compute_busy(model),
        input_wait=input_wait(model, step_set, loader_waits),
        kernels=kernels,
        launch=launch_stats(model, step_set, queue_full),
        whole=split_windows(spans, window.start_ps, window.end_ps),
        per_step=per_step,
        variance=step_variance(
            np.array([s.duration_ps for s in step_set.timed_steps], dtype=np.float64) / 1e9, per_step, bool(active)
        ),
        transfers=transfer_stats(model.gpus, model.host_activity.tagged.get(HOST_STAGING_TAG, intervals.EMPTY)),
        balance=balance(list(usages)),
        framework=framework,
        confidence=trace_confidence(model, step_set, framework, unused),
        roofline=tuple(kernel_roofline(row, peaks) for row in kernels),
        device_peaks=tuple(device_peaks(gpu.capabilities) for gpu in model.gpus),
        flop_utilization=flop_utilization(active_gpus, costs, window),
        implausible_costs=implausible_costs,
        batch_prep=prep,
        cpu_ops=cpu_placed_ops(model, len(step_set.steps)),
        wide_inputs=wide_image_inputs(model),
        cpu_load=load,
        link=link,
        gc_pauses=gc_pauses(model.host_activity),
        feeder_waits=feeders,
        gpu_memory=gpu_memory(model),
        configuration=configuration(
            model,
            framework,
            kernels,
            active,
            load.machine_cores,
            step_set.steps,
            host_cores(model.environment, model.host_activity.thread_busy),
            compiled,
        ),
        compilation=compiled,
        collective_bandwidth=collective_bandwidth(calls, link),
        collectives=calls,
        unused_gpus=unused,
        optimizer_loop=optimizer_loop(model),
        py_function_calls=py_calls,
        idle=idle,
        idle_causes=spans.causes,
        work_by_type=tuple(kernel_types_in_window(gpu.activity, window) for gpu in model.gpus),
        stream_idle=tuple(
            stream_idle(gpu.activity, model.host_activity, in_window(gpu.activity, window)) for gpu in model.gpus
        ),
    )
