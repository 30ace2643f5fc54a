"""The PyTorch optimizer step as the trace shows it: the kernels launched inside `Optimizer.step#...` and whether
they come from a per-tensor loop (one small `aten::add_`/`mul_`/`addcmul_`... per parameter) or from foreach /
fused implementations (`aten::_foreach_*`, `aten::_fused_adam*`, `multi_tensor_apply` kernels)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import DeviceActivity, HostActivity, TraceModel


OPTIMIZER_STEP_TAG = "optimizer_step"
OPTIMIZER_STEP_PREFIX = "Optimizer.step#"
# The in-place tensor ops a for-loop optimizer (SGD, Adam, AdamW... with foreach=False) calls once per parameter.
PER_TENSOR_OPS = frozenset(
    {
        "aten::add_",
        "aten::mul_",
        "aten::addcmul_",
        "aten::addcdiv_",
        "aten::lerp_",
        "aten::sqrt",
        "aten::sqrt_",
        "aten::div",
        "aten::div_",
        "aten::add",
        "aten::mul",
        "aten::sub_",
        "aten::maximum",
        "aten::neg",
        "aten::copy_",
        "aten::pow",
        "aten::clamp_",
        "aten::sign_",
        "aten::zero_",
        "aten::fill_",
    }
)


@dataclass(frozen=True)
class OptimizerLoop:
    """Over the profiled optimizer steps: their count, kernels launched inside them, the share of those launched
    by per-tensor ops, whether a foreach/fused implementation shows, the steps' summed host time and the summed
    device time of their kernels (ps)."""

    steps: int
    kernels: int
    per_tensor_share: float
    fused_seen: bool
    host_ps: int
    device_ps: int
    classes: tuple = ()  # the optimizer classes named by `Optimizer.step#<Class>.step`, sorted

    @property
    def optimizer_class(self):
        """The one optimizer class the steps name, or None (none or several)."""
        return self.classes[0] if len(self.classes) == 1 else None

    @property
    def kernels_per_step(self) -> float:
        return self.kernels / self.steps if self.steps else 0.0


def _is_fused(name):
    lower = name.lower()
    return "_foreach_" in lower or "_fused_" in lower or "multi_tensor_apply" in lower


def optimizer_classes(names):
    """The classes in `Optimizer.step#<Class>.step` names (PyTorch's record_function of Optimizer.step), sorted."""
    found = set()
    for name in names:
        if name.startswith(OPTIMIZER_STEP_PREFIX) and name.endswith(".step"):
            found.add(name[len(OPTIMIZER_STEP_PREFIX) : -len(".step")])
    return tuple(sorted(cls for cls in found if cls.isidentifier()))


def launched_in_optimizer_step(host: HostActivity, activity: DeviceActivity) -> np.ndarray | None:
    """Per event of a GPU's `activity`, whether its launch call (paired by Kineto's correlation id) ran inside a
    PyTorch optimizer step (`Optimizer.step#...`, host tag OPTIMIZER_STEP_TAG); None where the trace has no
    optimizer step or no launch calls to pair with."""
    spans = host.tagged.get(OPTIMIZER_STEP_TAG)
    if spans is None or not len(spans) or not len(host.launch_correlation_id):
        return None
    index = pair_launches(host, activity)
    launched = host.launch_start_ps[np.maximum(index, 0)]
    slot = np.searchsorted(spans.start_ps, launched, side="right") - 1
    return (index >= 0) & (slot >= 0) & (launched < spans.end_ps[np.maximum(slot, 0)])


def optimizer_loop(model: TraceModel) -> OptimizerLoop | None:
    """OptimizerLoop of a trace with `Optimizer.step#` annotations, else None."""
    host = model.host_activity
    spans = host.tagged.get(OPTIMIZER_STEP_TAG)
    if spans is None or not len(spans) or not len(host.launch_correlation_id):
        return None
    kernels = per_tensor = device_ps = 0
    fused = any(_is_fused(name) for name in host.op_totals)
    for gpu in model.gpus:
        activity = gpu.activity
        inside = launched_in_optimizer_step(host, activity)
        events = np.flatnonzero((activity.kind == ActivityKind.KERNEL) & inside) if inside is not None else ()
        if not len(events):
            continue
        names = [activity.op_names[op] if op >= 0 else "" for op in activity.op_id[events].tolist()]
        kernels += len(events)
        per_tensor += sum(name in PER_TENSOR_OPS for name in names)
        fused = fused or any(_is_fused(activity.names[n]) for n in set(activity.name_id[events].tolist()))
        device_ps += int(activity.duration_ps[events].sum())
    return OptimizerLoop(
        steps=len(spans),
        kernels=kernels,
        per_tensor_share=per_tensor / kernels if kernels else 0.0,
        fused_seen=fused,
        host_ps=int(spans.total_ps),
        device_ps=device_ps,
        classes=optimizer_classes(host.op_totals),
    )
