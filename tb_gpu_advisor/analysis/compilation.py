"""What the trace shows compiled: torch.compile (Dynamo, AOTAutograd, Inductor), CUDA/HIP graph replays and XLA
command buffers, XLA modules (JAX jit, TensorFlow jit_compile), tf.function; so no fix advises what is on."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.model.host import TF_FUNCTION_TAG
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.framework import Framework
    from tb_gpu_advisor.model.trace import TraceModel


# Host events of torch.compile: Dynamo's compiled regions and cache lookups, AOTAutograd's compiled function and
# its backward, Inductor's compiled graphs (`## Call CompiledFxGraph <hash> ##`).
_TORCH_COMPILE_EVENT = re.compile(
    r"^(Torch-Compiled Region|TorchDynamo Cache Lookup|CompiledFunction(Backward)?$|"
    r"## Call CompiledFxGraph|autograd::engine::evaluate_function: CompiledFunction|"
    r"Pregraph bytecode|inductor)",
    re.IGNORECASE,
)
# Inductor's generated Triton kernels (pointwise, reduction, persistent, template, foreach).
_INDUCTOR_KERNEL = re.compile(r"^triton_(poi|red|per|tem|for|fused|mm|bmm|tma)_")
_GRAPH_LAUNCH = re.compile(r"^(cuda|cu|hip)GraphLaunch\b")
# JAX's compiled modules and dispatches; TensorFlow's XLA (jit_compile) launch ops.
_XLA_EVENT = re.compile(r"^(PjitFunction\(|jit_\w+|XlaModule|_XlaRun|XlaLaunch|TfrtCompileAndExecute)")
# The share of the device events replayed from graphs above which per-kernel launch cost is not in the trace.
GRAPH_HIDES_LAUNCHES_SHARE = 0.5


@dataclass(frozen=True)
class Compilation:
    """What the trace shows compiled; empty tuples and zeros where it shows nothing.

    `graph_events` are device events replayed from a graph: several sharing the correlation id of one launch call
    (a CUDA/HIP graph launch, an XLA command buffer), or a graph recorded as one event; `launched_events` are the
    device events paired with any launch call.
    """

    torch_compile: tuple  # host event names and Inductor kernel names that show torch.compile, a few
    graph_launch_calls: int  # cudaGraphLaunch / cuGraphLaunch / hipGraphLaunch calls
    graph_events: int
    launched_events: int
    xla: tuple  # host events of XLA modules or dispatches, a few
    tf_function: bool
    jax_dispatch_calls: int = 0  # JAX's `PjitFunction(...)` dispatches: one per step when jitted, one per op eagerly

    @property
    def graph_share(self) -> float:
        """Share of the launched device events that graphs replayed (0 without launches)."""
        return self.graph_events / self.launched_events if self.launched_events else 0.0

    @property
    def graphs_hide_launches(self) -> bool:
        """Most device work is replayed from graphs: the trace has no per-kernel launch to measure."""
        return self.graph_events > 0 and self.graph_share >= GRAPH_HIDES_LAUNCHES_SHARE

    def graph_note(self, framework: str | None = None) -> str | None:
        """One sentence on what graph replays hide from the launch analysis; None without graphs hiding them."""
        if not self.graphs_hide_launches:
            return None
        what = (
            "XLA command buffers (CUDA graphs)"
            if framework == "jax" or self.xla and not self.torch_compile
            else "CUDA graphs"
        )
        return (
            f"{what} replay {100 * self.graph_share:.0f}% of the device work ({self.graph_events:,} events from "
            f"{self.graph_launch_calls or 'a few'} graph launches): their kernels have no launch call of their "
            "own, so the launch analysis sees only the graph launches, not per-kernel launch cost."
        )


def _graph_events(gpu, host):
    """(graph-replayed events, launched events) of one GPU."""
    activity = gpu.activity
    if not len(activity):
        return 0, 0
    launched = pair_launches(host, activity) >= 0
    graphs = int((activity.kind == int(ActivityKind.GRAPH)).sum())
    correlation = activity.correlation_id[launched]
    if not len(correlation):
        return graphs, graphs
    _, inverse, counts = np.unique(correlation, return_inverse=True, return_counts=True)
    return int((counts[inverse] > 1).sum()) + graphs, int(launched.sum()) + graphs


def compilation(model: TraceModel, framework: Framework) -> Compilation:
    """The Compilation of a host's trace; pure."""
    names = model.host_activity.op_totals
    torch_events = sorted({name[:60] for name in names if _TORCH_COMPILE_EVENT.match(name)})
    kernels = (
        sorted({name[:60] for gpu in model.gpus for name in gpu.activity.names if _INDUCTOR_KERNEL.match(name)})
        if framework.name == "pytorch"
        else []
    )
    graph_events = launched = 0
    for gpu in model.gpus:
        replayed, total = _graph_events(gpu, model.host_activity)
        graph_events += replayed
        launched += total
    return Compilation(
        torch_compile=tuple(torch_events[:3] + kernels[:2]),
        graph_launch_calls=sum(count for name, (count, _) in names.items() if _GRAPH_LAUNCH.match(name)),
        graph_events=graph_events,
        launched_events=launched,
        xla=tuple(sorted({name[:60] for name in names if _XLA_EVENT.match(name)})[:3]),
        tf_function=TF_FUNCTION_TAG in model.host_activity.tagged,
        jax_dispatch_calls=sum(count for name, (count, _) in names.items() if name.startswith("PjitFunction(")),
    )
