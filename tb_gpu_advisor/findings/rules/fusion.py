"""Fusion findings: many small element-wise kernels that XLA would fuse; attention not fused."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tb_gpu_advisor.analysis.configuration import is_matmul_kernel
from tb_gpu_advisor.analysis.elementwise_runs import elementwise_runs
from tb_gpu_advisor.analysis.kernel_names import is_xla_kernel
from tb_gpu_advisor.analysis.op_types import is_elementwise_kernel, is_xla_fusible_kernel
from tb_gpu_advisor.analysis.unfused_attention import ATTENTION_MATMUL_OPS, SOFTMAX_OPS
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, limit
from tb_gpu_advisor.findings.modeled import busiest_gpu, gpu_peaks, modeled_finding
from tb_gpu_advisor.findings.thresholds import (
    FUSION_MIN_KERNELS_PER_STEP,
    FUSION_MIN_SHARE_PCT,
    FUSION_SAVED_FRACTION,
    UNFUSED_ATTENTION_FUSED_ROOF_PCT,
)
from tb_gpu_advisor.whatif.fusion import chained, fused

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


ENTRIES = register(
    "fusion",
    {
        "fusion.elementwise_kernels": Entry(
            category="fusion",
            title="Many small element-wise kernels that XLA could fuse",
            fix_summary="Compile the step with XLA: @tf.function(jit_compile=True) (Keras: compile(jit_compile=True)).",
            fix="""\
Most GPU kernels are separate element-wise operations (casts, adds, activations, dropout), each reading
and writing memory and costing a launch. XLA fuses chains of them into a few kernels:

    @tf.function(jit_compile=True)
    def train_step(x, y): ...
    # Keras: model.compile(..., jit_compile=True)
    # or for the whole program: TF_XLA_FLAGS=--tf_xla_auto_jit=2 python train.py

Check the next profile: kernel names become fusion_* / loop_* and their count per step drops.""",
            docs=(L.TF_XLA,),
            jax=Idiom(
                fix_summary="jax.jit the whole training step (model, loss, gradients and optimizer update).",
                fix="""\
Most GPU kernels are separate element-wise operations, each reading and writing memory and costing a
launch. Under jax.jit XLA fuses them; make sure the whole step is one jitted function:

    @jax.jit
    def train_step(state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(state.params, batch)
        return state.apply_gradients(grads=grads), loss

Check the next profile: kernel names become fusion_* / loop_* and their count per step drops.""",
                docs=(L.JAX_JIT,),
            ),
            variants=(
                (
                    "xla_blocked",
                    Idiom(
                        fix_summary="Move the ops XLA cannot compile out of the step (into tf.data), then jit_compile=True.",
                        fix="""\
Most GPU kernels are separate element-wise operations that XLA would fuse, but the step also runs ops XLA
cannot compile (named above): @tf.function(jit_compile=True) on this step would fail. Move those ops out
of the step first, usually into the input pipeline, then compile the step:

    ds = ds.map(tokenize_or_py_fn, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)

    @tf.function(jit_compile=True)       # now only tensor math inside
    def train_step(x, y): ...

If some of them must stay, compile only the model part: wrap the model call and loss in a
tf.function(jit_compile=True) helper and keep the string/Python ops outside it.""",
                        docs=(L.TF_XLA, L.TF_DATA_PERFORMANCE),
                    ),
                ),
            ),
        ),
        "fusion.unfused_attention": Entry(
            category="fusion",
            title="Attention runs as separate matmuls and softmax, not a fused kernel",
            fix_summary="Use F.scaled_dot_product_attention (flash / cuDNN / memory-efficient backends).",
            fix="""\
Attention is computed as batched matmuls with a softmax between them (or by SDPA's math backend): the S x S
score matrix is written to and read back from memory, and each piece is its own kernel. A fused attention
kernel keeps the scores on chip:

    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    # q, k, v: [batch, heads, seq, head_dim] in bf16/fp16 for the flash and cuDNN backends

If SDPA already runs but falls back to its math backend, check why (fp32 inputs, an unsupported mask or head
dim): torch.nn.attention.sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION]) raises with the
reason.""",
            docs=(L.TORCH_TUNING,),
        ),
    },
)


def elementwise_kernels(ctx: Context) -> Finding | None:
    """Many element-wise kernels, a large share of kernel time, and no sign of XLA."""
    if not ctx.has_gpu or "jax_version" in ctx.model.environment:
        return None
    if any(is_xla_kernel(name) for gpu in ctx.active_gpus for name in gpu.activity.names):
        return None
    pytorch = ctx.framework.name == "pytorch"
    if pytorch and any(name.startswith("triton_") for gpu in ctx.active_gpus for name in gpu.activity.names):
        return None  # torch.compile's Inductor kernels: fusion is already in use
    # The scaling, masking and dropout kernels of attention computed piece by piece are the attention's
    # (fusion.unfused_attention), not a separate fusion.
    # The kernels the fix would fuse: torch.compile's element-wise chains for PyTorch; for TensorFlow with XLA off,
    # XLA's loop and input fusions, which take the reductions, concatenations and gathers with them.
    fusible = is_elementwise_kernel if pytorch else is_xla_fusible_kernel
    what = "element-wise kernel" if pytorch else "fusible kernel (element-wise, reductions, concatenations, gathers)"
    masks = {
        gpu.ordinal: elementwise_mask(gpu, fusible)
        & ~ctx.attention_kernels.get(gpu.ordinal, np.zeros(len(gpu.activity), dtype=bool))
        for gpu in ctx.active_gpus
    }
    ordinal, elementwise_ps = busiest_gpu(
        {gpu.ordinal: ctx.masked_ps(gpu, masks[gpu.ordinal]) for gpu in ctx.active_gpus}
    )
    if elementwise_ps <= 0:
        return None
    gpu = next(g for g in ctx.active_gpus if g.ordinal == ordinal)
    count = ctx.kernel_count_in_windows(gpu, masks[ordinal])
    per_step = count / ctx.step_count if ctx.step_count else float(count)
    kernel_ps = ctx.kernel_ps_all[ordinal]
    share = round(100.0 * elementwise_ps / kernel_ps, 2)
    if per_step < FUSION_MIN_KERNELS_PER_STEP or share < FUSION_MIN_SHARE_PCT:
        return None
    elementwise_ms = ms(elementwise_ps)
    condition, note = ctx.xla_advice()
    optimizer_share = ctx.optimizer_kernel_share(lambda device: masks[device.ordinal])
    condition = ctx.with_optimizer_kernels(condition, optimizer_share)
    if not any(is_matmul_kernel(row) for row in ctx.analysis.kernels):
        return _partial_capture(
            ctx, count, share, elementwise_ms, gpu, pytorch, per_step, condition, note, fusible, what
        )
    pointers = {
        "kernels": _elementwise_names(ctx, fusible),
        "device": gpu.name,
        "xla_incompatible_ops": list(ctx.step_ops.xla_blockers) if condition == "xla_blocked" else [],
    }
    finding_summary = (
        f"{_count_text(ctx, count, what)} take {share:.1f}% of GPU kernel time "
        f"({ctx.time_text(elementwise_ms)} on {ctx.device_text(gpu.name)}); "
        f"{'torch.compile' if pytorch else 'XLA'} is not in use"
        + (
            f"; {optimizer_share:.0%} of them are launched by the optimizer step (per-parameter updates)."
            if condition == "optimizer_kernels"
            else "."
        )
    )
    finding_metrics = {
        "elementwise_kernels_per_step": round(per_step, 1),
        "elementwise_ms": elementwise_ms,
        "elementwise_share_of_kernel_time_pct": share,
        "elementwise_kernel_mean_us": round(elementwise_ms * 1000.0 / count, 3) if count else None,
        **({} if optimizer_share is None else {"optimizer_step_share_pct": round(100.0 * optimizer_share, 1)}),
    }
    finding_limit = limit(
        "elementwise_kernels_per_step",
        round(per_step, 1),
        FUSION_MIN_KERNELS_PER_STEP,
        share_of_kernel_time_pct_above=FUSION_MIN_SHARE_PCT,
    )
    peaks = gpu_peaks(ctx, ordinal)
    rows = [(row.total_ps / 1e9, row.bytes) for row in ctx.analysis.kernels if fusible(row.name, row.op_name)]
    kinds = "element-wise kernels" if pytorch else "fusible kernels"
    estimate = fused(ctx.window_ms, elementwise_ms, rows, peaks.hbm_gbps if peaks is not None else None, kinds)
    if estimate is None:
        estimate = chained(ctx.window_ms, elementwise_ms, elementwise_runs(gpu.activity, masks[ordinal]), kinds)
    # Graded on what the model removes, not on the element-wise time (a fused chain still moves its bytes once).
    finding = modeled_finding(
        ctx,
        "fusion.elementwise_kernels",
        finding_summary,
        elementwise_ms,
        f"upper bound: fusion removes at most all of the {kinds}' time (fused, they still move their bytes once)",
        finding_metrics,
        finding_limit,
        pointers,
        condition=condition,
        fix_note=note,
        graded_ms=elementwise_ms * FUSION_SAVED_FRACTION
        if estimate is None
        else estimate.recoverable_of(ctx.window_ms),
    )
    return finding if finding is None or estimate is None else estimated(finding, estimate)


def elementwise_mask(gpu, fusible=is_elementwise_kernel):
    """Boolean mask over a GPU's events: the kernels `fusible` (name, op) accepts, by default those
    analysis.op_types.op_type calls element-wise, as the Kernels card's Element-wise bar does (one classifier for
    both, issue 31)."""
    activity = gpu.activity
    if not len(activity):
        return np.zeros(0, dtype=bool)
    names, ops = activity.names, activity.op_names
    # One int64 key per (name, op) pair: a 1-D unique sorts far faster than np.unique(axis=1) on stacked rows.
    stride = len(ops) + 1
    keys = (activity.name_id.astype(np.int64) + 1) * stride + (activity.op_id.astype(np.int64) + 1)
    pairs, inverse = np.unique(keys, return_inverse=True)
    by_pair = np.array(
        [
            fusible(names[n] if n >= 0 else "", ops[o] if o >= 0 else "")
            for n, o in zip(pairs // stride - 1, pairs % stride - 1)
        ],
        dtype=bool,
    )
    return by_pair[inverse.reshape(-1)] & (activity.kind == ActivityKind.KERNEL)


def _elementwise_names(ctx, fusible=is_elementwise_kernel, limit=3):
    """The largest kernels `fusible` accepts, by the Kernels card's classifier (name and op)."""
    return [row.name for row in ctx.analysis.kernels if fusible(row.name, row.op_name)][:limit]


def _count_text(ctx, count, what):
    """'N element-wise kernels per step', or for XLA 'N fusible kernels per step (element-wise, reductions, ...)'."""
    noun, paren, kinds = what.partition(" (")
    return ctx.count_text(count, noun) + (f" ({kinds}" if paren else "")


def _partial_capture(ctx, count, share, elementwise_ms, gpu, pytorch, per_step, condition, note, fusible, what):
    """Element-wise kernels only, no matmul or convolution: a training step of TensorFlow or PyTorch runs some, so
    the capture missed part of the step, and no share of it can be promised to fusion."""
    return Finding(
        id="fusion.elementwise_kernels",
        severity="low",
        summary=f"{_count_text(ctx, count, what)} take {share:.1f}% of GPU kernel time "
        f"({ctx.time_text(elementwise_ms)} on {ctx.device_text(gpu.name)}); "
        f"{'torch.compile' if pytorch else 'XLA'} is not "
        "in use. No matmul or convolution kernel was captured, yet a model's step runs them: the capture "
        "looks partial, so how much fusion would save cannot be judged; recapture the whole step first.",
        evidence=Evidence(
            {
                "elementwise_kernels_per_step": round(per_step, 1),
                "elementwise_ms": elementwise_ms,
                "elementwise_share_of_kernel_time_pct": share,
                "matmul_kernels": 0,
            },
            limit(
                "elementwise_kernels_per_step",
                round(per_step, 1),
                FUSION_MIN_KERNELS_PER_STEP,
                share_of_kernel_time_pct_above=FUSION_MIN_SHARE_PCT,
            ),
            {"kernels": _elementwise_names(ctx, fusible), "device": gpu.name},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis="none: the capture has no matmul or convolution kernel, so it looks partial",
        condition=condition,
        fix_note=note,
    )


_FUSED_ATTENTION_MARKS = ("flash", "fmha", "sdpa", "attention", "attn")


def unfused_attention(ctx: Context) -> Finding | None:
    """PyTorch attention as batched matmuls around a softmax with no fused attention kernel in the trace. Model:
    those matmuls' FLOPs on a fused kernel at UNFUSED_ATTENTION_FUSED_ROOF_PCT of the matrix roof replace every
    kernel of the attention (analysis.unfused_attention: the matmuls, softmax, scaling, masking, dropout and
    their casts, forward and backward)."""
    if ctx.framework.name != "pytorch" or not ctx.has_gpu:
        return None
    rows = ctx.analysis.kernels
    if any(mark in row.name.lower() for row in rows for mark in _FUSED_ATTENTION_MARKS):
        return None  # a fused attention kernel runs: the fix is applied (or attention is not the matmuls)
    matmuls = [
        row for row in rows if row.op_name in ATTENTION_MATMUL_OPS and row.matrix_dims and row.matrix_dims[0] > 1
    ]
    softmax = [row for row in rows if row.op_name in SOFTMAX_OPS]
    if not matmuls or not softmax or any(row.flops is None for row in matmuls):
        return None
    ordinal, _ = busiest_gpu(ctx.kernel_ps_all)
    peaks = gpu_peaks(ctx, ordinal)
    roof = peaks.matrix_roof(matmuls[0].dtype) if peaks is not None else None
    if not roof:
        return None
    gpus = max(1, len(ctx.active_gpus))
    whole_ms = sum(ms(ctx.masked_ps(gpu, ctx.attention_kernels[gpu.ordinal])) for gpu in ctx.active_gpus) / gpus
    attention_ms = whole_ms or sum(ms(row.total_ps) for row in matmuls + softmax) / gpus
    flops = sum(row.flops for row in matmuls) / gpus
    fused_ms = flops / (roof * 1e12 * UNFUSED_ATTENTION_FUSED_ROOF_PCT / 100.0) * 1e3
    recoverable = max(0.0, attention_ms - fused_ms)
    replaced = (
        "every kernel from the first to the last matmul of each attention (softmax, scaling, masking, "
        "dropout and casts between them)"
        if whole_ms
        else "the matmul and softmax kernels (masking and scaling kernels are left as they are)"
    )
    finding = modeled_finding(
        ctx,
        "fusion.unfused_attention",
        f"Attention runs as batched matmuls ({len(matmuls)} kernel rows, {matmuls[0].dtype}) around a softmax: "
        f"{attention_ms:.2f} ms of kernels over the window for {flops / 1e12:.3g} TFLOP, with no fused attention "
        "kernel in the trace.",
        recoverable,
        (
            f"model: the matmuls' FLOPs on one fused kernel at {UNFUSED_ATTENTION_FUSED_ROOF_PCT:g}% of the "
            f"{roof:g} TFLOP/s matrix roof replace {replaced}"
        ),
        {
            "attention_kernel_ms": round(attention_ms, 3),
            "attention_tflop": round(flops / 1e12, 4),
            "fused_estimate_ms": round(fused_ms, 3),
        },
        limit("softmax_kernel_rows", len(softmax), 1, "at least", batched_matmul_rows=len(matmuls)),
        {"kernels": [row.name for row in (matmuls + softmax)[:5]]},
    )
    if finding is None:
        return None
    return replace(finding, speedup_kind="model", what_if=True)


RULES = (elementwise_kernels, unfused_attention)
