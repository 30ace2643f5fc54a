"""What every rule reads: the model, the HostReport so far, the steps and windows, and shared measurements."""

from __future__ import annotations

import functools
from functools import cached_property

import numpy as np

from tb_gpu_advisor.analysis import rounding
from tb_gpu_advisor.analysis.host_wait_spans import host_wait_spans
from tb_gpu_advisor.analysis.launch_queue import queue_full_launches
from tb_gpu_advisor.analysis.step_ops import step_ops
from tb_gpu_advisor.analysis.tf_data import tf_data_pipeline
from tb_gpu_advisor.analysis.unfused_attention import attention_kernel_mask
from tb_gpu_advisor.analysis.xla_cpu_thunks import xla_cpu_thunks
from tb_gpu_advisor.findings.fix_conditions import FixConditions
from tb_gpu_advisor.findings.thresholds import EAGER_MIN_OPS_PER_STEP, HOST_MEDIUM_PCT
from tb_gpu_advisor.findings.thresholds import INPUT_MEDIUM_PCT, PREP_UNTRACED_MIN_MS
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.vocabulary import device_label
from tb_gpu_advisor.model.host import HOST_STAGING_TAG, OP_STALL_PREFIX
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.report.units import duration_ms
from tb_gpu_advisor.vocabulary import counted

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from tb_gpu_advisor.analysis.step_ops import StepOps
    from tb_gpu_advisor.analysis.tf_data import TfDataPipeline
    from tb_gpu_advisor.analysis.xla_cpu_thunks import XlaCpuThunks
    from tb_gpu_advisor.model.trace import GpuDevice
    from tb_gpu_advisor.model.trace import Intervals
    from typing import Any


# Evidence times: milliseconds with 3 decimals (the one ms() helper, analysis.rounding.ms).
ms = functools.partial(rounding.ms, decimals=3)


class Context(FixConditions):
    """Read-only inputs of the rules; derived measurements are computed once, on first use."""

    def __init__(self, model, analysis):
        self.model = model
        self.analysis = analysis
        self.framework = analysis.framework  # analysis.framework.Framework
        self.confidence = analysis.confidence  # analysis.confidence.Confidence
        self.step_set = analysis.step_set
        self.window = analysis.window
        self.window_ps = self.window.total_ps
        self.window_ms = self.window_ps / rounding.PS_PER_MS
        self.host = model.host_activity

    def say(self, tensorflow: str, jax: str, pytorch: str | None = None) -> str:
        """A sentence in the idiom of the framework that ran: TensorFlow's, JAX's, PyTorch's, or TensorFlow's and
        JAX's when unknown."""
        if self.framework.name == "tensorflow":
            return tensorflow
        if self.framework.name == "jax":
            return jax
        if self.framework.name == "pytorch" and pytorch is not None:
            return pytorch
        return f"TensorFlow: {tensorflow} JAX: {jax}"

    # --- time shares ---------------------------------------------------------------------------------------
    @property
    def step_count(self) -> int:
        return len(self.step_set.steps)

    @property
    def mean_step_ms(self) -> float | None:
        mean = self.analysis.step_time_ms["mean"]
        return None if mean is None else round(mean, 3)

    def per_step_ms(self, total_ms: float) -> float | None:
        return round(total_ms / self.step_count, 3) if self.step_count else None

    def device_text(self, name: str) -> str:
        """A GPU as the trace's framework names it in a sentence: `cuda:0` in a PyTorch trace, else its device path."""
        return device_label(name, self.model.format)

    def time_text(self, total_ms: float) -> str:
        """`2.37 ms per step` (`70.0 µs per step`), or `2.37 ms in total` for a profile without steps."""
        if self.step_count:
            return f"{duration_ms(total_ms / self.step_count)} per step"
        return f"{duration_ms(total_ms)} in total"

    def count_text(self, count: int, singular: str, plural: str | None = None) -> str:
        """`665 kernels per step` (`1 copy per step`), or `665 kernels in the profile` without steps; the noun
        agrees with the number (vocabulary.counted)."""
        if self.step_count:
            return f"{counted(round(count / self.step_count), singular, plural)} per step"
        return f"{counted(count, singular, plural)} in the profile"

    @property
    def of_the_step(self) -> str:
        """What a share of the window is a share of: "of the step", or "of the profiled time" without steps."""
        return "of the step" if self.step_count else "of the profiled time"

    @property
    def of_the_step_time(self) -> str:
        """ "of the step time", or "of the profiled time" without steps."""
        return "of the step time" if self.step_count else "of the profiled time"

    def share_pct(self, total_ms: float) -> float:
        return round(100.0 * total_ms / self.window_ms, 2) if self.window_ms > 0 else 0.0

    def category_ms(self, name: str) -> float:
        """Exposed time of one breakdown category over the analysis window, in ms."""
        if self.step_set.steps:
            return round(
                sum(self.analysis.step_breakdown_ms(index)[name] for index in range(len(self.step_set.steps))), 6
            )
        share = self.analysis.breakdown_pct.get(name)
        return round(share * self.window_ms / 100.0, 6) if share else 0.0

    @property
    def pipeline_wait_ms(self) -> float:
        """The exposed input wait in tf.data's IteratorGetNext or the DataLoader over the analysis window, in ms:
        category_ms("input_wait") without the step thread's waits on loader threads (host.feeder_blocked's)."""
        if self.step_set.steps:
            return round(
                sum(self.analysis.step_pipeline_wait_ms(index) for index in range(len(self.step_set.steps))), 6
            )
        share = self.analysis.pipeline_wait_pct
        return round(share * self.window_ms / 100.0, 6) if share else 0.0

    def in_window_ps(self, spans: Intervals) -> int:
        if len(spans) == 0 or len(self.window) == 0:
            return 0
        return int(intervals.covered_ps(spans, self.window.start_ps, self.window.end_ps).sum())

    @cached_property
    def host_work_ms(self) -> float:
        """The host's own work over the window, in ms: host events less the spans blocked on the device
        (analysis.host_wait_spans, full launch queues included) and the input waits. What a step loop must still
        do once a wait in it is gone."""
        work = intervals.subtract(intervals.subtract(self.host.busy, self.host_waits), self.host.input_waits)
        return ms(self.in_window_ps(work))

    @cached_property
    def host_waits(self) -> Intervals:
        """When a host thread was blocked on the device (analysis.host_wait_spans, full launch queues included)."""
        return host_wait_spans(self.model, queue_full_launches(self.model))

    # --- GPUs ----------------------------------------------------------------------------------------------
    @cached_property
    def active_gpus(self) -> tuple[GpuDevice, ...]:
        """GPUs that took part in the steps (pre-grouped traces: those with Steps markers)."""
        return tuple(gpu for gpu in self.model.gpus if gpu.ordinal in self.analysis.active_ordinals)

    @property
    def has_gpu(self) -> bool:
        return bool(self.active_gpus)

    def gpu_windows(self, gpu: GpuDevice) -> Intervals:
        """The windows a GPU's own time is measured in (its own Steps markers in pre-grouped traces)."""
        return self.step_set.device_windows(gpu.ordinal) if self.step_set.steps else self.window

    def covered_ps(self, gpu: GpuDevice, spans: Intervals) -> int:
        windows = self.gpu_windows(gpu)
        if len(spans) == 0 or len(windows) == 0:
            return 0
        return int(intervals.covered_ps(spans, windows.start_ps, windows.end_ps).sum())

    def idle_spans(self, cause: str) -> Intervals:
        """The instants every GPU idled for `cause`: the idle attribution's one cause per instant
        (analysis.all_idle), which the breakdown's host-side categories are made of."""
        causes = self.analysis.idle_causes
        return causes[cause] if causes and self.has_gpu else intervals.EMPTY

    def idle_union_ms(self, causes: tuple, after_wait: bool = False) -> float:
        """The mean over active GPUs of their idle time for any of `causes` (and, with `after_wait`, in
        GpuIdle.after_wait: the serialization after a wait) in their windows, in ms."""
        idle = self.analysis.idle
        if idle is None or not self.active_gpus:
            return 0.0
        total = sum(
            self.covered_ps(
                gpu,
                intervals.union_all(
                    *(found.spans[c] for c in causes), found.after_wait if after_wait else intervals.EMPTY
                ),
            )
            for gpu in self.active_gpus
            if (found := idle.by_ordinal(gpu.ordinal)) is not None
        )
        return round(ms(total) / len(self.active_gpus), 6)

    def idle_cause_ms(self, cause: str, leave_out: Intervals = intervals.EMPTY) -> float:
        """The time every GPU idled for `cause` (idle_spans, less `leave_out`) in the breakdown's windows (each
        step, or the analysis window), in ms: with one GPU its Idle line's share, with any number the Time
        line's."""
        spans = self.idle_spans(cause)
        if len(leave_out):
            spans = intervals.subtract(spans, leave_out)
        if not len(spans):
            return 0.0
        steps = self.step_set.timed_steps if self.step_set.steps else ()
        if not steps:
            return round(ms(self.in_window_ps(spans)), 6)
        starts, ends = [s.start_ps for s in steps], [s.end_ps for s in steps]
        return round(ms(int(intervals.covered_ps(spans, starts, ends).sum())), 6)

    @cached_property
    def jax_step_jitted(self) -> bool:
        """A JAX step dispatched as a few compiled calls (`PjitFunction`) per step, not one jnp op at a time:
        jax.jit is in use already."""
        if not self.framework.is_jax or not self.step_count:
            return False
        calls = sum(
            count
            for name, (count, _) in self.host.op_totals.items()
            if name.startswith(("PjitFunction(", "PmapFunction("))
        )
        return 0 < calls / self.step_count < EAGER_MIN_OPS_PER_STEP

    @property
    def compute_busy(self) -> Intervals:
        """Union over GPUs of compute: kernels and CUDA graphs other than NCCL."""
        return self.analysis.compute_busy

    @cached_property
    def gpu_busy(self) -> Intervals:
        return intervals.union_all(*self.busy_by_gpu.values())

    def exposed(self, spans: Intervals) -> Intervals:
        """The part of `spans` no GPU computes during."""
        return intervals.subtract(spans, self.compute_busy)

    def kernel_mask(self, gpu: GpuDevice, predicate: Callable[..., Any]) -> np.ndarray:
        """Boolean mask over a GPU's events: kernels whose name satisfies `predicate`."""
        activity = gpu.activity
        if not len(activity):
            return np.zeros(0, dtype=bool)
        by_name = np.array([bool(predicate(name)) for name in activity.names] + [False], dtype=bool)
        return by_name[activity.name_id] & (activity.kind == ActivityKind.KERNEL)

    @cached_property
    def kernel_ps_all(self) -> dict[int, int]:
        """{ordinal: ps} of all kernels inside each GPU's windows."""
        return self._kernel_ps_by_gpu(lambda name: True)

    @cached_property
    def busy_by_gpu(self) -> dict[int, Intervals]:
        """{ordinal: Intervals} when each GPU has any activity."""
        return {gpu.ordinal: intervals.union(gpu.activity.start_ps, gpu.activity.end_ps) for gpu in self.model.gpus}

    @cached_property
    def attention_kernels(self) -> dict[int, np.ndarray]:
        """{ordinal: mask over its events} of each active GPU's unfused attention kernels (PyTorch only)."""
        if self.framework.name != "pytorch":
            return {}
        return {gpu.ordinal: attention_kernel_mask(gpu.activity) for gpu in self.active_gpus}

    def masked_ps(self, gpu: GpuDevice, mask: np.ndarray) -> int:
        """The time `mask`'s events of `gpu` cover inside its windows (overlaps counted once)."""
        return self.covered_ps(gpu, intervals.union(gpu.activity.start_ps[mask], gpu.activity.end_ps[mask]))

    def kernel_ps_by_gpu(self, predicate: Callable[..., Any]) -> dict[int, int]:
        """{ordinal: ps} of kernels matching `predicate` inside each GPU's windows (overlaps counted once)."""
        return self._kernel_ps_by_gpu(predicate)

    def _kernel_ps_by_gpu(self, predicate):
        result = {}
        for gpu in self.active_gpus:
            mask = self.kernel_mask(gpu, predicate)
            spans = intervals.union(gpu.activity.start_ps[mask], gpu.activity.end_ps[mask])
            result[gpu.ordinal] = self.covered_ps(gpu, spans)
        return result

    def kernel_count_in_windows(self, gpu: GpuDevice, mask: np.ndarray) -> int:
        windows = self.gpu_windows(gpu)
        starts = gpu.activity.start_ps[mask]
        if len(windows) == 0:
            return 0
        index = np.searchsorted(windows.end_ps, starts, side="right")
        inside = index < len(windows)
        inside[inside] = starts[inside] >= windows.start_ps[index[inside]]
        return int(inside.sum())

    @cached_property
    def compute_capability(self) -> tuple[int, int] | None:
        """The lowest compute capability among the active GPUs, or None when the trace omits it."""
        found = [g.capabilities.compute_capability for g in self.active_gpus if g.capabilities.compute_capability]
        return min(found) if found else None

    @cached_property
    def on_amd(self) -> bool:
        """Every active GPU is an AMD GPU (ROCm: HIP graphs, hipBLASLt, RCCL)."""
        vendors = {(g.capabilities.vendor or "").upper() for g in self.active_gpus}
        return vendors == {"AMD"}

    @cached_property
    def sm_count(self) -> int | None:
        found = [g.capabilities.sm_count for g in self.active_gpus if g.capabilities.sm_count]
        return min(found) if found else None

    # --- host ----------------------------------------------------------------------------------------------
    @cached_property
    def pipeline(self) -> TfDataPipeline:
        return tf_data_pipeline(self.host.op_totals, self.host.thread_busy, self.window_ps, self.host.map_ops_in_flight)

    def host_ops(self, predicate: Callable[..., Any]) -> list[tuple[str, int, int]]:
        """[(name, count, total_ps)] of host event names matching `predicate`, most time first."""
        found = [(name, count, total) for name, (count, total) in self.host.op_totals.items() if predicate(name)]
        return sorted(found, key=lambda item: (-item[2], item[0]))

    @cached_property
    def step_ops(self) -> StepOps:
        """analysis.step_ops.StepOps: the step's own host ops, tf.data's per-element ops, XLA blockers."""
        return step_ops(self.host.op_totals, self.step_count)

    @cached_property
    def xla_cpu_thunks(self) -> XlaCpuThunks:
        """analysis.xla_cpu_thunks.XlaCpuThunks: the thunks XLA's CPU runtime ran, by what they compute."""
        return xla_cpu_thunks(self.host.executor_op_totals, self.model.hlo_protos)

    @cached_property
    def op_stalls(self) -> Intervals:
        """The step thread's stalls inside op calls (readers.kineto.op_stalls: `op_stall:<op>` host tags) where the
        GPU idles during them for at least HOST_MEDIUM_PCT of the window (host.op_stall claims them), else EMPTY."""
        stalls = intervals.union_all(
            *(spans for tag, spans in self.host.tagged.items() if tag.startswith(OP_STALL_PREFIX))
        )
        if not len(stalls) or self.share_pct(self.idle_cause_ms("host_stall")) < HOST_MEDIUM_PCT:
            return intervals.EMPTY
        return stalls

    @cached_property
    def explained_host_time(self) -> Intervals:
        """Intervals of host time a more specific rule explains: a step's batch preparation where
        input.host_batch_prep reports it, or the step thread's wait there for the GIL (host.python_function; time
        no finding names stays the Time line's host compute), the runs of compute ops placed on the CPU
        (placement.ops_on_host), JAX's staging of host batches for the device (transfer.pageable_memory) and the
        step thread's stalls inside op calls (host.op_stall)."""
        spans = [
            self.host.tagged[f"cpu_op:{op.name}"]
            for op in self.analysis.cpu_ops
            if f"cpu_op:{op.name}" in self.host.tagged
        ]
        spans.append(self.host.tagged.get(HOST_STAGING_TAG, intervals.EMPTY))
        spans.append(self.op_stalls)
        if self.batch_prep_reported or self.batch_prep_waits_for_gil:
            spans.append(self.analysis.batch_prep.gaps)
        return intervals.union_all(*spans)

    @cached_property
    def batch_prep_reported(self) -> bool:
        """input.host_batch_prep reports the batch preparation: shown, at INPUT_MEDIUM_PCT of the step or more, and,
        where the trace shows little in it (an untraced stall), PREP_UNTRACED_MIN_MS per step or more."""
        prep = self.analysis.batch_prep
        if not self.batch_prep_shown or not self.step_count or prep.total_ps <= 0 or self.window_ms <= 0:
            return False
        prep_ms = ms(prep.total_ps)
        steady = len(self.step_set.timed_steps) or 1
        untraced_short = prep.certainty == "low" and prep_ms / steady < PREP_UNTRACED_MIN_MS
        return round(100.0 * prep_ms / self.window_ms, 2) >= INPUT_MEDIUM_PCT and not untraced_short

    @cached_property
    def input_time(self) -> Intervals:
        """Intervals the breakdown counts as input beyond tf.data's and the DataLoader's waits: the step thread
        blocked on its loader threads (input_wait) and its batch preparation (input_prep)."""
        feeders, prep = self.analysis.feeder_waits, self.analysis.batch_prep
        return intervals.union_all(
            feeders.input_blocked if feeders is not None else intervals.EMPTY,
            prep.input_spans if prep is not None else intervals.EMPTY,
        )

    @cached_property
    def has_dataloader(self) -> bool:
        """PyTorch's DataLoader ran in the trace: its `enumerate(DataLoader)#...__next__` events or iterator calls."""
        return any(name.startswith("enumerate(DataLoader)") or "DataLoaderIter" in name for name in self.host.op_totals)

    def has_thread(self, prefix: str) -> bool:
        return any(kind.startswith(prefix) for kind in self.host.thread_busy)

    def steps_overlapping(self, spans: Intervals, limit: int = 3) -> list[dict[str, float | str]]:
        """[{name, time_ms, overlap_ms}] of the steps that overlap `spans` most."""
        found = []
        for step in self.step_set.timed_steps:
            overlap = int(intervals.covered_ps(spans, [step.start_ps], [step.end_ps])[0]) if len(spans) else 0
            if overlap > 0:
                found.append({"step": step.name, "time_ms": ms(step.duration_ps), "overlap_ms": ms(overlap)})
        found.sort(key=lambda item: (-item["overlap_ms"], item["step"]))
        return found[:limit]

    def longest_ranges_ms(self, spans: Intervals, limit: int = 3) -> list[list[float]]:
        """The `limit` longest intervals of `spans` inside the window, as [start_ms, end_ms]."""
        clipped = intervals.intersect(spans, self.window) if len(self.window) else spans
        if len(clipped) == 0:
            return []
        lengths = clipped.end_ps - clipped.start_ps
        order = np.argsort(-lengths, kind="stable")[:limit]
        return [[ms(clipped.start_ps[i]), ms(clipped.end_ps[i])] for i in sorted(order)]
