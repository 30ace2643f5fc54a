"""The PyTorch optimizer step as the trace shows it: the kernels launched inside `Optimizer.step#...` and whether
they come from a per-tensor loop (one small `aten::add_`/`mul_`/`addcmul_`... per parameter) or from foreach /
fused implementations (`aten::_foreach_*`, `aten::_fused_adam*`, `multi_tensor_apply` kernels)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import TraceModel


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


def optimizer_loop(model: TraceModel) -> OptimizerLoop | None:
    """OptimizerLoop of a trace with `Optimizer.step#` annotations, else None."""
    host = model.host_activity
    spans = host.tagged.get(OPTIMIZER_STEP_TAG)
    if spans is None or not len(spans) or not len(host.launch_correlation_id):
        return None
    corr, starts = host.launch_correlation_id, host.launch_start_ps
    kernels = per_tensor = device_ps = 0
    fused = any(_is_fused(name) for name in host.op_totals)
    for gpu in model.gpus:
        activity = gpu.activity
        chosen = (activity.kind == ActivityKind.KERNEL) & (activity.correlation_id >= 0)
        if not chosen.any():
            continue
        events = np.flatnonzero(chosen)
        position = np.minimum(np.searchsorted(corr, activity.correlation_id[events]), len(corr) - 1)
        paired = corr[position] == activity.correlation_id[events]
        events, launched = events[paired], starts[position[paired]]
        slot = np.searchsorted(spans.start_ps, launched, side="right") - 1
        inside = (slot >= 0) & (launched < spans.end_ps[np.maximum(slot, 0)])
        events = events[inside]
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
