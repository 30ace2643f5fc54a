"""Fixes for a step the trace shows compiled already (torch.compile, CUDA graphs, XLA command buffers, a jitted JAX
step): what is left to do, never what is on; and the condition a rule picks them with."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Idiom

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


GRAPHS_LAUNCH_IDIOM = Idiom(
    fix_summary="Graphs replay the step already: fewer graph launches (graph breaks), a larger batch.",
    fix="""\
The step's kernels are replayed from CUDA graphs already (torch.compile(mode="reduce-overhead") or
torch.cuda.graphs), so recording graphs again changes nothing. The GPU waits for the graph launch calls
themselves and for the host work between them. What is left:

    fewer graphs per step: each graph break splits the step (torch._dynamo.explain(model)(*inputs)
    or TORCH_LOGS="graph_breaks" lists them; keep the optimizer step inside a compiled function)
    less Python between the replays (logging, .item() reads, per-step tensor creation)
    more work per replay: a larger batch""",
    docs=(L.TORCH_CUDA_GRAPHS, L.CUDA_GRAPHS),
)

# The same for XLA's command buffers, in JAX's and TensorFlow's vocabulary (not torch.compile's).
XLA_GRAPHS_LAUNCH_IDIOM = Idiom(
    fix_summary="XLA replays the step as command buffers already: fewer dispatches per step, more work per replay.",
    fix="""\
The step's kernels are replayed from XLA command buffers (CUDA graphs) already, so enabling them again
changes nothing. The GPU waits for the graph launch calls themselves and for the host work between them.
What is left:

    fewer compiled calls per step: one jitted function for the whole step (the update included), not
    several jitted pieces called from Python
    less Python between the calls (logging, reading results back, per-step array creation)
    more work per replay: a larger batch, or several micro-batches per call (jax.lax.scan)""",
    docs=(L.JAX_GPU_TIPS, L.CUDA_GRAPHS),
)

TF_GRAPHS_LAUNCH_IDIOM = Idiom(
    fix_summary="XLA replays the step as command buffers already: more steps per call, more work per replay.",
    fix="""\
The step's kernels are replayed from XLA command buffers (CUDA graphs) already, so enabling them again
changes nothing. The GPU waits for the graph launch calls themselves and for the host work between them.
What is left:

    fewer calls per step: one tf.function(jit_compile=True) for the whole step (the update included);
    Keras: model.compile(..., steps_per_execution=32) runs many steps per call
    less Python between the calls (logging, reading results back, per-step tensor creation)
    more work per replay: a larger batch""",
    docs=(L.TF_GPU_PERFORMANCE, L.CUDA_GRAPHS),
)

COMPILED_HOST_IDIOM = Idiom(
    fix_summary="Compiled already (torch.compile): cut graph breaks, compile the optimizer, thin the loop.",
    fix="""\
The trace shows torch.compile in use (compiled regions, Inductor's kernels), so compiling the model again
changes nothing. The host time left is outside the compiled graphs:

    graph breaks: torch._dynamo.explain(model)(*inputs) or TORCH_LOGS="graph_breaks" names each one
    the optimizer: torch.optim.AdamW(params, fused=True), or compile the optimizer step
    (torch.compile(optimizer.step)); zero_grad(set_to_none=True)
    the loop: no .item()/.cpu() reads, logging or tensor creation every step

A larger batch amortizes the host's fixed cost per step over more examples.""",
    docs=(L.TORCH_COMPILE, L.TORCH_PERFORMANCE),
)

COMPILED_FUSED_OPTIMIZER_HOST_IDIOM = Idiom(
    fix_summary="Compiled already (torch.compile), optimizer fused or compiled: cut graph breaks, thin the loop.",
    fix="""\
The trace shows torch.compile in use (compiled regions, Inductor's kernels) and an optimizer update that is
fused, foreach or compiled already, so compiling again changes nothing. The host time left is outside the
compiled graphs:

    graph breaks: torch._dynamo.explain(model)(*inputs) or TORCH_LOGS="graph_breaks" names each one
    the loop: no .item()/.cpu() reads, logging or tensor creation every step; zero_grad(set_to_none=True)

A larger batch amortizes the host's fixed cost per step over more examples.""",
    docs=(L.TORCH_COMPILE, L.TORCH_PERFORMANCE),
)


def launch_condition(ctx: Context) -> tuple:
    """("graphs", why the launch analysis sees only graph launches) when graphs replay most device work, else
    (None, "") (a jitted JAX step: Context.jax_step_jitted)."""
    compiled = ctx.analysis.compilation
    if compiled is not None and compiled.graphs_hide_launches:
        return "graphs", compiled.graph_note(ctx.framework.name)
    return None, ""


def host_condition(ctx: Context) -> tuple:
    """("compiled", what shows it) for a PyTorch step under torch.compile, else (None, "")."""
    compiled = ctx.analysis.compilation
    if ctx.framework.name == "pytorch" and compiled is not None and compiled.torch_compile:
        graphs = " CUDA graphs replay it." if compiled.graphs_hide_launches else ""
        return "compiled", f"torch.compile is in use ({', '.join(compiled.torch_compile[:2])}).{graphs}"
    return None, ""


JITTED_LAUNCH_IDIOM = Idiom(
    fix_summary="Jitted already: replay its kernels as command buffers; more work per kernel.",
    fix="""\
The trace shows the step dispatched as one compiled program per step (jax.jit), so jitting it again changes
nothing; the GPU still waits between its kernels for their launches. Let XLA replay them as CUDA graphs and
give each kernel more work:

    XLA_FLAGS=--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL python train.py

and a larger batch, or several micro-batches per call (jax.lax.scan inside the jitted step).""",
    docs=(L.JAX_GPU_TIPS, L.CUDA_GRAPHS),
)
