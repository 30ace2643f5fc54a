"""Roofline of each kernel row (achieved FLOP/s and bytes/s against the device's roofs) and the FLOP
utilization of the window (docs/report.md, "Roofline").

Physics caps both: an HLO op whose counted FLOPs would run faster than any unit of its GPU has a cost that
cannot be right (a corrupt or crafted module), so it is left out (plausible_costs); a row above the roof that
binds it shows no share of that roof, and says why (KernelRoofline.implausible)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.command_buffers import command_buffer_work
from tb_gpu_advisor.analysis.kernel_families import is_simt_gemm
from tb_gpu_advisor.analysis.kernel_names import is_fp32_matmul
from tb_gpu_advisor.analysis.kernels import event_costs
from tb_gpu_advisor.analysis.peaks import device_peaks
from tb_gpu_advisor.analysis.tf_op_cost import tf_op_cost
from tb_gpu_advisor.readers.hlo.op_cost import MATRIX
from tb_gpu_advisor.readers.hlo.modules import op_costs
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.kernels import KernelRow
    from tb_gpu_advisor.analysis.peaks import DevicePeaks


_PS_PER_S = 1e12
COMPUTE, MEMORY = "compute", "memory"


@dataclass(frozen=True)
class KernelRoofline:
    """One kernel row on the roofline; every field None where its FLOPs, bytes or the roofs are unknown."""

    flops: float | None  # per occurrence
    bytes: float | None  # per occurrence, logical
    achieved_tflops: float | None
    achieved_gbps: float | None
    arithmetic_intensity: float | None  # FLOPs per logical byte
    bound: str | None  # COMPUTE or MEMORY: the roof under the kernel's arithmetic intensity
    roof_tflops: float | None  # the compute roof of its kind and precision
    peak_pct: float | None  # achieved share of the roof that binds; never above 100
    implausible: str | None = None  # why the share is left out: the row runs above the roof that binds it

    @property
    def lost_fraction(self):
        return None if self.peak_pct is None else max(0.0, 1.0 - self.peak_pct / 100.0)


@dataclass(frozen=True)
class ImplausibleCost:
    """An HLO op whose FLOPs, as counted from its module, would run faster than any unit of its GPU."""

    program_id: int
    op_name: str
    gpu: int  # ordinal of the GPU where it ran fastest
    achieved_tflops: float
    fastest_roof_tflops: float  # the GPU's fastest roof (its 8-bit matrix rate where it has one)


@dataclass(frozen=True)
class FlopUtilization:
    """Costed FLOPs of the window over the active GPUs' dense 16-bit matrix peak."""

    flops: float
    pct: float | None
    costed_kernel_time_pct: float | None


class KernelCosts(dict):
    """{(program id, op name) or ("tf", op type, shape): OpCost or None}, and in `events` the per-event work of
    GPUs whose kernels the keys cannot name ({DeviceActivity: command_buffers.EventWork})."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.events = {}

    def __bool__(self):
        return bool(self.events) or len(self) > 0


def kernel_costs(model):
    """KernelCosts of every op a GPU kernel runs: XLA kernels through their HLO module (inside command buffers
    through their names and the module's library calls), TensorFlow kernels outside XLA through their op type
    and input shapes."""
    pairs, costs = set(), KernelCosts()
    for gpu in model.gpus:
        activity = gpu.activity
        if activity.program_id is not None and model.hlo_protos:
            keyed = np.flatnonzero((activity.program_id >= 0) & (activity.op_id >= 0))
            for program_id, op_id in set(zip(activity.program_id[keyed].tolist(), activity.op_id[keyed].tolist())):
                pairs.add((program_id, activity.op_names[op_id]))
        for op_type, shape in activity.tf_signatures:
            costs[("tf", op_type, shape)] = tf_op_cost(op_type, shape)
    modules = {}
    costs.update(op_costs(model.hlo_protos, pairs, modules) if pairs else {})
    indexes = {program: index for program, index in modules.items() if index is not None}
    for gpu in model.gpus if indexes else ():
        work = command_buffer_work(gpu.activity, indexes, device_peaks(gpu.capabilities))
        if work is not None:
            costs.events[gpu.activity] = work
    return costs


def fastest_roof(peaks: DevicePeaks) -> float | None:
    """The most TFLOP/s any unit of a GPU with these DevicePeaks does (None when not known)."""
    roofs = [
        roof for roof in (peaks.matrix_roof("f8e4m3fn"), peaks.matrix_roof("bf16"), peaks.vector_roof("bf16")) if roof
    ]
    return max(roofs) if roofs else None


def plausible_costs(model, costs):
    """(KernelCosts `costs` with None for each HLO op whose counted FLOPs, over its kernels' time on some GPU,
    exceed that GPU's fastest roof, (ImplausibleCost, ...) of those ops)."""
    dropped = {}
    for gpu in model.gpus:
        activity = gpu.activity
        roof = fastest_roof(device_peaks(gpu.capabilities))
        if activity.program_id is None or not roof or not costs:
            continue
        flops, _, index, found = event_costs(activity, costs)
        costed = np.flatnonzero(
            (activity.kind == ActivityKind.KERNEL)
            & (index > 0)
            & ~np.isnan(flops)
            & (activity.program_id >= 0)
            & (activity.op_id >= 0)
        )
        if not len(costed):
            continue
        pairs = np.stack([activity.program_id[costed], activity.op_id[costed]], axis=1)
        unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
        inverse = np.asarray(inverse).reshape(-1)
        work = np.bincount(inverse, weights=flops[costed])
        seconds = np.bincount(inverse, weights=activity.duration_ps[costed].astype(float)) / _PS_PER_S
        for (program_id, op_id), op_flops, op_seconds in zip(unique.tolist(), work, seconds):
            if op_seconds <= 0:
                continue
            tflops = op_flops / op_seconds / 1e12
            key = (program_id, activity.op_names[op_id])
            if costs.get(key) is None:
                continue  # kernels of a command buffer, costed (and checked) event by event
            if tflops > roof and tflops > getattr(dropped.get(key), "achieved_tflops", 0.0):
                dropped[key] = ImplausibleCost(program_id, key[1], gpu.ordinal, tflops, roof)
    if not dropped:
        return costs, ()
    kept = KernelCosts({key: (None if key in dropped else cost) for key, cost in costs.items()})
    kept.events = costs.events
    return kept, tuple(dropped[key] for key in sorted(dropped))


def shared_peaks(gpus: tuple) -> DevicePeaks | None:
    """The DevicePeaks all GPUs with kernels share, or None if they differ (rows merge across GPUs)."""
    found = {device_peaks(gpu.capabilities) for gpu in gpus if len(gpu.activity)}
    return found.pop() if len(found) == 1 else None


def runs_on_fp32_units(row: KernelRow) -> bool:
    """A 32-bit matrix kernel row that cannot use Tensor Cores: its name says fp32 FMA (SIMT), or its op asks for
    full float32 (precision HIGHEST), so its roof is the fp32 vector peak, not the TF32 one."""
    return row.dtype == "f32" and (
        is_simt_gemm(row.name) or is_fp32_matmul(row.name) or row.matrix_precision == "HIGHEST"
    )


def is_3xtf32_attention(name: str) -> bool:
    """PyTorch's memory-efficient attention (CUTLASS `fmha_cutlassF/B_f32_*`, from xformers): on float32 inputs on
    sm80+ its GEMMs use CUTLASS's OpMultiplyAddFastF32, three TF32 products per multiply, so its roof is a third of
    the TF32 peak."""
    lower = name.lower()
    return lower.startswith("fmha_cutlass") and "_f32" in lower


def kernel_roofline(row, peaks):
    """KernelRoofline of a KernelRow under DevicePeaks (or None peaks)."""
    seconds = row.total_ps / _PS_PER_S
    flops = None if row.flops is None else row.flops / row.occurrences
    nbytes = None if row.bytes is None else row.bytes / row.occurrences
    tflops = None if row.flops is None or seconds <= 0 else row.flops / seconds / 1e12
    gbps = None if row.bytes is None or seconds <= 0 else row.bytes / seconds / 1e9
    intensity = None if flops is None or not nbytes else flops / nbytes
    roof = None
    if peaks is not None and row.compute is not None:
        roof = peaks.matrix_roof(row.dtype) if row.compute == MATRIX else peaks.vector_roof(row.dtype)
        if row.compute == MATRIX and runs_on_fp32_units(row):
            roof = peaks.vector_roof("f32")
        elif row.compute == MATRIX and row.dtype == "f32" and is_3xtf32_attention(row.name) and peaks.tf32_factor:
            roof = peaks.matrix_roof("f32") / 3.0
    bound = pct = implausible = None
    hbm = peaks.hbm_gbps if peaks is not None else None
    if flops is not None and nbytes is not None and roof and hbm:
        ridge = roof * 1e12 / (hbm * 1e9)
        bound = COMPUTE if nbytes == 0 or (intensity is not None and intensity >= ridge) else MEMORY
        if bound == COMPUTE and tflops is not None:
            pct = 100.0 * tflops / roof
            if pct > 100.0:
                implausible = (
                    f"{tflops:.4g} TFLOP/s is above the {roof:g} TFLOP/s {row.compute} roof of its "
                    f"{row.dtype or 'unknown'} inputs: the FLOPs counted for its op cannot all be this "
                    "kernel's, or its precision is not the one its HLO says"
                )
        elif bound == MEMORY and gbps is not None:
            pct = 100.0 * gbps / hbm
            if pct > 100.0:
                implausible = (
                    f"{gbps:.4g} GB/s of logical bytes is above the {hbm:g} GB/s HBM peak: its data "
                    "came from on-chip caches, or the bytes counted for its op are not all this kernel's"
                )
    if implausible:
        bound = pct = None  # above the hardware's roof: the costing is wrong (or the data was cached), not a fact
    return KernelRoofline(
        flops=flops,
        bytes=nbytes,
        achieved_tflops=tflops,
        achieved_gbps=gbps,
        arithmetic_intensity=intensity,
        bound=bound,
        roof_tflops=roof,
        peak_pct=pct,
        implausible=implausible,
    )


def flop_utilization(gpus, costs, window):
    """FlopUtilization of kernels starting in the window's intervals on `gpus` (the active ones)."""
    flops_total = costed_ps = kernel_ps = 0.0
    peak_tflops = 0.0
    window_s = window.total_ps / _PS_PER_S
    for gpu in gpus:
        activity = gpu.activity
        kernels = activity.kind == ActivityKind.KERNEL
        if len(window):
            slot = np.searchsorted(window.start_ps, activity.start_ps, side="right") - 1
            inside = (slot >= 0) & (activity.start_ps < window.end_ps[np.maximum(slot, 0)])
            kernels &= inside
        flops, _, _, _ = event_costs(activity, costs)
        known = kernels & ~np.isnan(flops)
        flops_total += float(flops[known].sum())
        costed_ps += float(activity.duration_ps[known].sum())
        kernel_ps += float(activity.duration_ps[kernels].sum())
        peak = device_peaks(gpu.capabilities).matrix_tflops
        peak_tflops = None if peak is None or peak_tflops is None else peak_tflops + peak
    pct = None
    if peak_tflops and window_s > 0 and costed_ps > 0:
        pct = 100.0 * flops_total / (peak_tflops * 1e12 * window_s)
    return FlopUtilization(
        flops=flops_total, pct=pct, costed_kernel_time_pct=100.0 * costed_ps / kernel_ps if kernel_ps else None
    )
