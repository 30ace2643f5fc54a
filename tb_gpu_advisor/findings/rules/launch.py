"""Launch findings: the GPU starved by kernel launches, and kernels too short to hide them."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.analysis.rounding import pct, us
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.compiled import (
    GRAPHS_LAUNCH_IDIOM,
    JITTED_LAUNCH_IDIOM,
    TF_GRAPHS_LAUNCH_IDIOM,
    XLA_GRAPHS_LAUNCH_IDIOM,
    launch_condition,
)
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import (
    LAUNCH_GAP_MAX_US,
    LAUNCH_GPU_BUSY_MAX_PCT,
    LAUNCH_HIGH_PCT,
    LAUNCH_MEDIUM_PCT,
    MODELED_LOW_PCT,
    OPTIMIZER_LOOP_MIN_KERNELS,
    OPTIMIZER_LOOP_MIN_SHARE,
    TINY_KERNEL_MIN_SHARE_PCT,
)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


# Launch time measured during warm-up is mostly first-use setup; the framework-specific fix comes after.
WARMUP_IDIOM = Idiom(
    fix_summary="Recapture after warm-up: this launch time includes first-use setup (module loading).",
    fix="""\
Warm-up is inside this capture (see the trace confidence): a kernel's first launch loads its module and the
first calls create the context and streams, taking milliseconds where a warm launch takes microseconds.
Profile steady-state steps before changing code:

    TensorFlow/Keras: TensorBoard(log_dir, profile_batch=(10, 19))
    JAX: jax.profiler.start_trace(logdir) after the first steps have compiled
    PyTorch: torch.profiler.profile(schedule=torch.profiler.schedule(wait=5, warmup=2, active=10))

If launch time is still large there, launch fewer kernels: compile the step (XLA jit_compile=True, jax.jit,
torch.compile) and replay it as a graph (torch.compile(mode="reduce-overhead") records
CUDA graphs on NVIDIA, HIP graphs on ROCm).""",
    docs=(L.CUDA_GRAPHS,),
)

ENTRIES = register(
    "launch",
    {
        "launch.per_tensor_optimizer": Entry(
            category="launch",
            title="The optimizer updates each parameter with its own small kernels",
            fix_summary="Keep the optimizer class and pass fused=True (Adam, AdamW, SGD, Adagrad) or foreach=True.",
            fix="""\
The optimizer step runs a Python loop over the parameters: each update is several small element-wise kernels
(add_, mul_, addcmul_, addcdiv_, sqrt...) per parameter, each with its own launch. The multi-tensor
implementations of the same optimizer (same class, same math) update all parameters in a few kernels:

    optimizer = torch.optim.Adam(model.parameters(), lr=lr, fused=True)    # one fused kernel per group
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)  # multi-tensor kernels

(the default is foreach when every parameter is on the GPU; foreach=False, a custom optimizer or
parameters on several devices give the per-tensor loop). Custom optimizers: use torch._foreach_* ops.""",
            docs=(L.TORCH_TUNING,),
        ),
        "launch.gpu_starved_by_launches": Entry(
            category="launch",
            title="The GPU idles while kernels are being launched",
            fix_summary="Launch fewer, larger kernels: XLA jit_compile=True, steps_per_execution, larger batch.",
            fix="""\
Between kernels the GPU waits for the host to launch the next one. Fewer, bigger kernels fix it:

    @tf.function(jit_compile=True)        # XLA fuses kernels, so fewer launches per step
    def train_step(x, y): ...
    model.compile(..., jit_compile=True, steps_per_execution=32)   # Keras

A custom loop can run several steps per call: loop over N batches inside one tf.function.""",
            docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA),
            jax=Idiom(
                fix_summary="jax.jit the entire step so it runs as one compiled program; scan over micro-batches.",
                fix="""\
Between kernels the GPU waits for the host to launch the next one. Run the whole step as one compiled
program (not op by op, not several small jitted functions called from Python):

    train_step = jax.jit(train_step, donate_argnums=0)   # one dispatch per step

XLA can replay the compiled step's kernels as command buffers (CUDA graphs on NVIDIA, HIP graphs on ROCm;
see XLA_FLAGS=--xla_gpu_enable_command_buffer), and jax.lax.scan over several micro-batches runs more work
per dispatch.""",
                docs=(L.JAX_JIT, L.JAX_GPU_TIPS, L.CUDA_GRAPHS),
            ),
            pytorch=Idiom(
                fix_summary="Launch less often: torch.compile(mode='reduce-overhead') replays CUDA graphs.",
                fix="""\
Between kernels the GPU waits for the host to launch the next one. Fuse and replay:

    model = torch.compile(model, mode="reduce-overhead")   # fused kernels replayed as CUDA graphs
    # or capture a static step yourself with torch.cuda.graphs (torch.cuda.CUDAGraph)

Keep shapes static (drop_last=True in the DataLoader) so the graphs can be reused.""",
                docs=(L.TORCH_COMPILE, L.CUDA_GRAPHS),
            ),
            variants=(
                (
                    "xla_blocked",
                    Idiom(
                        fix_summary="Launch less often: steps_per_execution, gpu_private threads; XLA after moving out "
                        "string ops.",
                        fix="""\
Between kernels the GPU waits for the host to launch the next one. The step runs ops XLA cannot compile
(named above), so jit_compile=True would fail on it as it is. First cut per-step host overhead:

    model.compile(..., steps_per_execution=32)                  # Keras: many steps per call
    TF_GPU_THREAD_MODE=gpu_private TF_GPU_THREAD_COUNT=2 python train.py   # dedicated launch threads

then move the string/Python ops into tf.data (ds.map(..., num_parallel_calls=tf.data.AUTOTUNE)) and
compile the remaining step with @tf.function(jit_compile=True) so XLA fuses kernels.""",
                        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA),
                    ),
                ),
                (
                    "xla_in_use",
                    Idiom(
                        fix_summary="XLA is in use already: run several steps per call, larger batch, XLA command buffers.",
                        fix="""\
Between kernels the GPU waits for the host to launch the next one, and the step is already compiled with
XLA (its kernels are fusions). What is left is fewer launches per example:

    model.compile(..., steps_per_execution=32)      # Keras: many steps per call
    XLA_FLAGS=--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN python train.py   # replay as CUDA graphs

a larger batch (more work per kernel), and, if tf.data shares the CPU with the launch threads,
TF_GPU_THREAD_MODE=gpu_private.""",
                        docs=(L.TF_GPU_PERFORMANCE, L.CUDA_GRAPHS),
                    ),
                ),
                (
                    "jax:jitted",
                    Idiom(
                        fix_summary="The step is jitted already: more work per dispatch (lax.scan, larger batch), command "
                        "buffers.",
                        fix="""\
Between kernels the GPU waits for the host to launch the next one, and the step is jitted already (a few
dispatches per step), so jax.jit is not the fix. What is left is fewer launches per example:

    XLA_FLAGS=--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN python train.py   # replay as CUDA graphs

(on by default in recent JAX: cuGraphLaunch events in the trace say it is in use, and then the graph
launch itself is what the GPU waits for), jax.lax.scan over several micro-batches inside the jitted step,
and a larger batch: more work for each launch.""",
                        docs=(L.JAX_GPU_TIPS, L.CUDA_GRAPHS),
                    ),
                ),
                ("any:warmup", WARMUP_IDIOM),
                ("pytorch:graphs", GRAPHS_LAUNCH_IDIOM),
                ("jax:graphs", XLA_GRAPHS_LAUNCH_IDIOM),
                ("graphs", TF_GRAPHS_LAUNCH_IDIOM),
            ),
        ),
        "launch.tiny_kernels": Entry(
            category="launch",
            title="Kernels run shorter than it takes to launch them",
            fix_summary="Fuse tiny kernels (XLA jit_compile=True) or do more work per kernel (larger batch).",
            fix="""\
Most kernels finish sooner than the host needs to launch them, so the GPU runs in short bursts with gaps in
between. Make each launch do more:

    @tf.function(jit_compile=True)
    def train_step(x, y): ...
    ds = ds.batch(2 * BATCH)             # more work per kernel, if memory allows

Avoid Python-side loops over small tensors inside the step (vectorize them: tf.vectorized_map, batched
ops).""",
            docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA),
            jax=Idiom(
                fix_summary="jax.jit the whole step; jax.vmap / jax.lax.scan instead of Python loops; larger batch.",
                fix="""\
Most kernels finish sooner than the host needs to launch them, so the GPU runs in short bursts with gaps in
between. Make each dispatch do more: jax.jit the whole step (XLA fuses small ops), replace Python loops
over small arrays with jax.vmap or jax.lax.scan, and raise the batch if memory allows.""",
                docs=(L.JAX_JIT, L.JAX_GPU_TIPS),
            ),
            pytorch=Idiom(
                fix_summary="Fuse tiny kernels (torch.compile) or do more work per kernel (larger batch).",
                fix="""\
Most kernels finish sooner than the host needs to launch them, so the GPU runs in short bursts. Make each
launch do more: torch.compile the model (fusion, and CUDA graphs with mode="reduce-overhead"), replace
Python loops over small tensors with batched ops (torch.vmap, bmm), and raise the batch if memory allows.""",
                docs=(L.TORCH_COMPILE,),
            ),
            variants=(
                (
                    "xla_blocked",
                    Idiom(
                        fix_summary="Do more work per kernel (larger batch, vectorized ops); XLA after moving out string "
                        "ops.",
                        fix="""\
Most kernels finish sooner than the host needs to launch them. The step runs ops XLA cannot compile (named
above), so jit_compile=True would fail on it as it is. Make each launch do more:

    ds = ds.batch(2 * BATCH)             # more work per kernel, if memory allows

vectorize Python-side loops (tf.vectorized_map, batched ops), and move the string/Python ops into
tf.data so the rest of the step can be compiled with @tf.function(jit_compile=True).""",
                        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA),
                    ),
                ),
                ("jax:jitted", JITTED_LAUNCH_IDIOM),
                (
                    "xla_in_use",
                    Idiom(
                        fix_summary="XLA is in use already: do more work per kernel (larger batch, vectorized loops).",
                        fix="""\
Most kernels finish sooner than the host needs to launch them, and the step is already compiled with XLA.
Make each kernel do more: a larger batch (ds.batch(2 * BATCH), if memory allows), vectorized instead of
Python-unrolled loops (tf.vectorized_map, tf.while_loop over batched tensors), and several steps per call
(Keras steps_per_execution).""",
                        docs=(L.TF_GPU_PERFORMANCE,),
                    ),
                ),
            ),
        ),
    },
)


def _kernels_per_step(launch):
    return None if launch.launches_per_step is None else round(launch.launches_per_step, 3)


def _launch_metrics(ctx):
    launch = ctx.analysis.launch
    calls = launch.launch_call_count
    return {
        "kernels_per_step": _kernels_per_step(launch),
        "launch_latency_p50_us": us(launch.latency_p50_ps),
        "launch_latency_p95_us": us(launch.latency_p95_ps),
        "launch_call_mean_us": round(us(launch.launch_call_ps) / calls, 3) if calls else None,
        "tiny_kernel_pct": pct(100.0 * launch.tiny_kernel_count / launch.kernel_count) if launch.kernel_count else None,
    }


def _kernels_text(ctx):
    launch = ctx.analysis.launch
    compiled = ctx.analysis.compilation
    if compiled is not None and compiled.graphs_hide_launches and compiled.graph_launch_calls:
        replaying = (
            f" replaying {_kernels_per_step(launch):,.0f} kernels" if launch.launches_per_step is not None else ""
        )
        return f"{ctx.count_text(compiled.graph_launch_calls, 'graph launch', 'graph launches')}{replaying}"
    if launch.launches_per_step is not None:
        return f"{_kernels_per_step(launch):,.0f} kernels per step"
    return ctx.count_text(launch.kernel_count, "kernel")


def gpu_starved_by_launches(ctx: Context) -> Finding | None:
    """Time the GPUs idle waiting for the launch call of the kernel that ends the gap (analysis.idle_attribution:
    the call was running, or started, after the GPU went idle); copies, syncs and blocked calls are not launches."""
    if not ctx.has_gpu or not ctx.model.has_host_plane:
        return None
    launch_ms = ctx.idle_cause_ms("launch")
    share = ctx.share_pct(launch_ms)
    severity = grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT)
    if severity is None:
        return None
    starved = ctx.idle_spans("launch")
    condition, note = ctx.xla_advice()
    if ctx.jax_step_jitted:
        condition = "jitted"
    compiled, compiled_note = launch_condition(ctx)
    if ctx.confidence.warmup:
        condition, note = "warmup", ""
    elif compiled is not None:
        condition, note = compiled, compiled_note
    elif ctx.framework.name == "pytorch" and ctx.on_amd:
        condition = "rocm"
    condition = ctx.with_optimizer_fused(condition)
    return Finding(
        id="launch.gpu_starved_by_launches",
        severity=severity,
        summary=f"The GPU idles {share:.1f}% {ctx.of_the_step} while kernels are being launched "
        f"({_kernels_text(ctx)}).",
        evidence=Evidence(
            {
                "launch_exposed_pct": share,
                "launch_exposed_ms": round(launch_ms, 3),
                "launch_exposed_ms_per_step": ctx.per_step_ms(launch_ms),
                **_launch_metrics(ctx),
            },
            ladder("launch_exposed_pct", share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT),
            {
                "time_ranges_ms": ctx.longest_ranges_ms(starved),
                "steps": ctx.steps_overlapping(starved),
                "xla_incompatible_ops": list(ctx.step_ops.xla_blockers) if condition == "xla_blocked" else [],
            },
        ),
        recoverable_ms=launch_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the step time if the GPU never waited for a kernel's launch call",
        condition=condition,
        fix_note=note,
    )


def _short_gaps(ctx, gpu):
    """(total ps, count, median ps) of the gaps of at most LAUNCH_GAP_MAX_US between a GPU's activities."""
    busy = ctx.busy_by_gpu[gpu.ordinal]
    if len(busy) < 2:
        return 0, 0, 0
    gap_start, gap_end = busy.end_ps[:-1], busy.start_ps[1:]
    short = (gap_end - gap_start) <= LAUNCH_GAP_MAX_US * 1e6
    gaps = intervals.union(gap_start[short], gap_end[short])
    windows = ctx.gpu_windows(gpu)
    inside = intervals.intersect(gaps, windows) if len(windows) else gaps
    lengths = inside.end_ps - inside.start_ps
    return int(lengths.sum()), int(len(lengths)), int(np.median(lengths)) if len(lengths) else 0


def tiny_kernels(ctx: Context) -> Finding | None:
    """Most kernels run shorter than their launch call and the GPU works in bursts with short gaps. Kernels replayed
    from a graph have no launch call of their own: not when graphs replay most of the work, and never counted."""
    busy_pct = ctx.analysis.gpu_busy_pct
    compiled = ctx.analysis.compilation
    if (
        not ctx.has_gpu
        or busy_pct is None
        or busy_pct >= LAUNCH_GPU_BUSY_MAX_PCT
        or (compiled is not None and compiled.graphs_hide_launches)
    ):
        return None
    paired = shorter = 0
    worst = (0, 0, 0, None)
    for gpu in ctx.active_gpus:
        activity = gpu.activity
        index = pair_launches(ctx.host, activity)
        kernels = (activity.kind == ActivityKind.KERNEL) & (index >= 0)
        if kernels.any():  # one launch call with several device events is a graph launch
            _, inverse, counts = np.unique(activity.correlation_id[kernels], return_inverse=True, return_counts=True)
            kernels[np.flatnonzero(kernels)[counts[inverse] > 1]] = False
        paired += int(kernels.sum())
        shorter += int((activity.duration_ps[kernels] < ctx.host.launch_duration_ps[index[kernels]]).sum())
        gaps = _short_gaps(ctx, gpu)
        if gaps[0] > worst[0]:
            worst = (*gaps, gpu.name)
    if not paired:
        return None
    shorter_pct = round(100.0 * shorter / paired, 2)
    gap_ms = ms(worst[0])
    share = ctx.share_pct(gap_ms)
    severity = grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT, MODELED_LOW_PCT)
    if shorter_pct < TINY_KERNEL_MIN_SHARE_PCT or severity is None:
        return None
    condition, note = ctx.xla_advice()
    if ctx.jax_step_jitted:
        condition, note = "jitted", ""
    condition = ctx.with_optimizer_fused(condition)
    return Finding(
        id="launch.tiny_kernels",
        severity=severity,
        summary=f"{shorter_pct:.0f}% of kernels run shorter than their launch call; the GPU sits in "
        f"{ctx.count_text(worst[1], 'short gap')} ({ctx.time_text(gap_ms)}, {share:.1f}% of the step time).",
        evidence=Evidence(
            {
                "kernels_shorter_than_launch_pct": shorter_pct,
                "kernels_shorter_than_launch": shorter,
                "kernels_paired": paired,
                "short_gap_ms": gap_ms,
                "short_gap_count": worst[1],
                "short_gap_median_us": round(worst[2] / 1e6, 3),
                "short_gap_pct": share,
                "gpu_busy_pct": busy_pct,
                **_launch_metrics(ctx),
            },
            limit(
                "kernels_shorter_than_launch_pct",
                shorter_pct,
                TINY_KERNEL_MIN_SHARE_PCT,
                gap_max_us=LAUNCH_GAP_MAX_US,
                gpu_busy_pct_below=LAUNCH_GPU_BUSY_MAX_PCT,
            ),
            {
                "device": worst[3],
                "xla_incompatible_ops": list(ctx.step_ops.xla_blockers) if condition == "xla_blocked" else [],
            },
        ),
        recoverable_ms=gap_ms,
        window_ms=ctx.window_ms,
        speedup_basis=f"upper bound: the step time without the GPU's gaps of at most {LAUNCH_GAP_MAX_US:g} \u00b5s",
        condition=condition,
        fix_note=note,
    )


def per_tensor_optimizer(ctx: Context) -> Finding | None:
    """PyTorch optimizer steps that launch many kernels, nearly all from per-parameter element-wise ops, with no
    foreach/fused implementation in the trace. Bound: the optimizer's host time shrinks to its kernels' device
    time (one fused launch per group does the same memory traffic)."""
    loop = ctx.analysis.optimizer_loop
    if (
        ctx.framework.name != "pytorch"
        or loop is None
        or loop.fused_seen
        or loop.kernels_per_step < OPTIMIZER_LOOP_MIN_KERNELS
        or loop.per_tensor_share < OPTIMIZER_LOOP_MIN_SHARE
    ):
        return None
    recoverable = max(0.0, (loop.host_ps - loop.device_ps) / 1e9)
    share = ctx.share_pct(recoverable)
    severity = grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    per_step = round(loop.kernels_per_step)
    return Finding(
        id="launch.per_tensor_optimizer",
        severity=severity,
        summary=(
            f"Each optimizer step launches {per_step} kernels, {100 * loop.per_tensor_share:.0f}% of them from "
            f"per-parameter element-wise ops (add_, mul_, addcmul_...); the step's optimizer takes "
            f"{ms(loop.host_ps) / loop.steps:.2f} ms on the host for {ms(loop.device_ps) / loop.steps:.2f} ms "
            "of GPU work."
        ),
        evidence=Evidence(
            {
                "kernels_per_optimizer_step": per_step,
                "per_tensor_share_pct": round(100 * loop.per_tensor_share, 1),
                "optimizer_host_ms_per_step": round(ms(loop.host_ps) / loop.steps, 3),
                "optimizer_gpu_ms_per_step": round(ms(loop.device_ps) / loop.steps, 3),
                "recoverable_pct": share,
            },
            limit(
                "kernels_per_optimizer_step",
                per_step,
                OPTIMIZER_LOOP_MIN_KERNELS,
                per_tensor_share_at_least=OPTIMIZER_LOOP_MIN_SHARE,
            ),
            {"ops": ["Optimizer.step"]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis=(
            "upper bound: the optimizer's host time falls to its kernels' GPU time (a fused or foreach "
            "optimizer does the same memory traffic in a few launches)"
        ),
        fix_note=_optimizer_note(loop.optimizer_class),
    )


# torch.optim classes with a fused=True implementation (PyTorch 2.x); the others have foreach=True.
FUSED_OPTIMIZERS = frozenset({"Adam", "AdamW", "SGD", "Adagrad"})
FOREACH_OPTIMIZERS = frozenset({"Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop"})


def _optimizer_note(cls):
    """The fix line for the optimizer class the trace names (`Optimizer.step#<Class>.step`); "" when unknown."""
    if cls in FUSED_OPTIMIZERS:
        return (
            f"The trace's optimizer is torch.optim.{cls} (Optimizer.step#{cls}.step): keep it and construct it "
            f"with fused=True: torch.optim.{cls}(model.parameters(), ..., fused=True) (or foreach=True)."
        )
    if cls in FOREACH_OPTIMIZERS:
        return (
            f"The trace's optimizer is torch.optim.{cls} (Optimizer.step#{cls}.step), which has no fused "
            f"implementation: construct it with foreach=True: torch.optim.{cls}(model.parameters(), ..., "
            "foreach=True)."
        )
    if cls:
        return (
            f"The trace's optimizer is {cls} (Optimizer.step#{cls}.step), not a torch.optim class with a fused "
            "form: write its update with torch._foreach_* ops, or use the fused torch.optim class with the same math."
        )
    return ""


RULES = (gpu_starved_by_launches, tiny_kernels, per_tensor_optimizer)
