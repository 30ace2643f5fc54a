"""Precision findings: FP32 matrix multiplies on GPUs with Tensor Cores."""

from __future__ import annotations

from dataclasses import replace

from tb_gpu_advisor.analysis.breakdown import COMPUTE_CATEGORIES
from tb_gpu_advisor.analysis.configuration import is_matmul_kernel
from tb_gpu_advisor.analysis.gpu_fill import underfills
from tb_gpu_advisor.analysis.kernel_names import is_fp32_matmul, is_low_precision, kernel_class
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import estimated, limit
from tb_gpu_advisor.findings.modeled import busiest_gpu, gpu_peaks, modeled_finding, top_kernel_names
from tb_gpu_advisor.findings.thresholds import (
    FP32_MATMUL_MIN_SHARE_PCT,
    GEMM_REACHABLE_ROOF_PCT,
    KERNEL_LATENCY_FLOOR_US,
    LOW_PRECISION_MAX_SHARE_PCT,
    MIXED_PRECISION_GAIN,
    TENSOR_CORE_MIN_CC,
    TF32_MIN_CC,
)
from tb_gpu_advisor.whatif.precision import MatmulKernel, mixed_precision
from tb_gpu_advisor.whatif.precision import tf32 as whatif_tf32

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.kernels import KernelRow
    from tb_gpu_advisor.findings.context import Context
    from tb_gpu_advisor.findings.finding import Finding


ENTRIES = register(
    "precision",
    {
        "precision.fp32_matmul": Entry(
            category="precision",
            title="Matrix math runs in 32-bit on a Tensor Core GPU",
            fix_summary="Enable mixed precision: set_global_policy('mixed_bfloat16') (cc 8.0+) or 'mixed_float16'.",
            fix="""\
Matrix multiplies and convolutions run as 32-bit kernels that do not use Tensor Cores. Compute in 16 bits
and keep variables in 32 bits:

    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")  # Ampere (cc 8.0) and newer
    tf.keras.mixed_precision.set_global_policy("mixed_float16")   # Volta/Turing (cc 7.x)
    # keep the final softmax/logits in float32: layers.Activation("softmax", dtype="float32")
    # custom loops with float16: optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)

Keep layer sizes (units, channels, batch) multiples of 8 so Tensor Cores apply.""",
            docs=(L.TF_MIXED_PRECISION, L.NVIDIA_MIXED_PRECISION),
            variants=(
                (
                    "pytorch:tf32_off",
                    Idiom(
                        fix_summary="bf16 autocast for the estimate; TF32, off by default in PyTorch, gains less.",
                        fix="""\
On Ampere and newer GPUs these float32 matmuls could run on Tensor Cores in TF32, but PyTorch leaves TF32
off for matmuls by default (convolutions use it by default). Allow it where full float32 is not needed:

    torch.set_float32_matmul_precision("high")      # TF32 for float32 matmuls
    torch.backends.cudnn.allow_tf32 = True          # convolutions (the default)

Mixed precision is faster still: compute the forward pass and loss in bfloat16:

    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = loss_fn(model(x), y)""",
                        docs=(L.TORCH_TF32, L.TORCH_AMP),
                    ),
                ),
                (
                    "pytorch:fp16_only",
                    Idiom(
                        fix_summary='torch.autocast("cuda", dtype=torch.float16) with a GradScaler (no bf16 Tensor Cores '
                        "before cc 8.0).",
                        fix="""\
Matrix multiplies and convolutions run as 32-bit kernels that do not use Tensor Cores. This GPU (compute
capability 7.x: Volta, Turing) has float16 Tensor Cores but none for bfloat16 or TF32, so autocast to
float16, with loss scaling against gradient underflow:

    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer); scaler.update()
    optimizer.zero_grad(set_to_none=True)

Keep layer sizes multiples of 8 so Tensor Cores apply.""",
                        docs=(L.TORCH_AMP, L.NVIDIA_MIXED_PRECISION),
                    ),
                ),
                (
                    "jax:fp16_only",
                    Idiom(
                        fix_summary="Compute in float16 with dynamic loss scaling (no bf16/TF32 Tensor Cores before cc 8.0).",
                        fix="""\
Matrix multiplies and convolutions run as 32-bit kernels that do not use Tensor Cores. This GPU (compute
capability 7.x) has float16 Tensor Cores but none for bfloat16 or TF32: compute in float16 and keep the
parameters in float32, with dynamic loss scaling (the jmp library: jmp.DynamicLossScale) against gradient
underflow:

    compute_params = jax.tree.map(lambda p: p.astype(jnp.float16), params)   # inside the jitted step
    logits = model.apply(compute_params, x.astype(jnp.float16)).astype(jnp.float32)

Keep dimensions multiples of 8.""",
                        docs=(L.JAX_MATMUL_PRECISION, L.NVIDIA_MIXED_PRECISION),
                    ),
                ),
                (
                    "tf32_off",
                    Idiom(
                        fix_summary="Mixed precision for the estimate; turning TF32 back on (something disabled it) gains "
                        "less.",
                        fix="""\
On Ampere and newer GPUs TensorFlow (2.4+) runs float32 matmuls and convolutions on Tensor Cores in TF32 by
default; plain 32-bit kernels (sgemm, scudnn) mean something turned that off. Look for and remove:

    NVIDIA_TF32_OVERRIDE=0                                            # environment variable
    tf.config.experimental.enable_tensor_float_32_execution(False)   # in the code or a library

and turn it back on explicitly (before building the model):

    tf.config.experimental.enable_tensor_float_32_execution(True)

If these ops need full float32 precision (TF32 keeps float32's range with a 10-bit mantissa), keep TF32 off
and this finding does not apply to them. Otherwise mixed precision is faster still: compute in 16 bits,
keep variables in float32:

    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    # keep the final softmax/logits in float32: layers.Activation("softmax", dtype="float32")""",
                        docs=(L.TF_TF32, L.TF_MIXED_PRECISION, L.NVIDIA_MIXED_PRECISION),
                    ),
                ),
            ),
            jax=Idiom(
                fix_summary="Compute in bfloat16 (jmp / jnp.bfloat16 casts), or at least let matmuls use TF32.",
                fix="""\
Matrix multiplies and convolutions run as 32-bit kernels that do not use Tensor Cores. Compute in 16 bits
and keep the parameters (and the optimizer state) in float32:

    compute_params = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)   # inside the jitted step
    logits = model.apply(compute_params, x.astype(jnp.bfloat16)).astype(jnp.float32)
    # Flax: nn.Dense(..., dtype=jnp.bfloat16, param_dtype=jnp.float32); or the jmp library's policies

bfloat16 needs compute capability 8.0; on 7.x use float16 with loss scaling (jmp.DynamicLossScale). Keep
dimensions multiples of 8.""",
                docs=(L.JAX_MATMUL_PRECISION, L.NVIDIA_MIXED_PRECISION),
            ),
        ),
    },
)


def fp32_matmul(ctx: Context) -> Finding | None:
    """32-bit matrix math without Tensor Cores on a GPU that has them."""
    cc = ctx.compute_capability
    if not ctx.has_gpu or cc is None or cc < TENSOR_CORE_MIN_CC:
        return None
    eligible = {row.name for row in ctx.analysis.kernels if row.tensor_core_eligible and not row.uses_tensor_cores}
    unfilled = _unfilled_names(ctx)

    def is_target(name: str) -> bool:
        return name not in unfilled and (is_fp32_matmul(name) or (name in eligible and not is_low_precision(name)))

    ordinal, fp32_ps = busiest_gpu(ctx.kernel_ps_by_gpu(is_target))
    if fp32_ps <= 0:
        return None
    kernel_ps = ctx.kernel_ps_all[ordinal]
    share = round(100.0 * fp32_ps / kernel_ps, 2)
    if share < FP32_MATMUL_MIN_SHARE_PCT:
        return None
    breakdown = ctx.analysis.breakdown_pct
    compute = sum(breakdown.get(key) or 0.0 for key in COMPUTE_CATEGORIES)
    low_share = round(100.0 * (breakdown["compute_16bit"] or 0.0) / compute, 2) if compute else None
    fp32_ms = ms(fp32_ps)
    highest = any(row.matrix_precision == "HIGHEST" for row in ctx.analysis.kernels if is_target(row.name))
    condition, note = _tf32_off(ctx, cc, highest)
    if cc < TF32_MIN_CC and ctx.framework.name in ("pytorch", "jax"):
        condition = "fp16_only"  # bfloat16 and TF32 Tensor Cores arrive with compute capability 8.0
    finding = modeled_finding(
        ctx,
        "precision.fp32_matmul",
        f"32-bit matmul/conv kernels without Tensor Cores take {share:.1f}% of GPU kernel time "
        f"on a compute capability {cc[0]}.{cc[1]} GPU.",
        fp32_ms * (1.0 - 1.0 / MIXED_PRECISION_GAIN),
        f"estimate: those kernels {MIXED_PRECISION_GAIN:g}× faster in 16 bits, nothing else changing",
        {
            "fp32_matmul_ms": fp32_ms,
            "fp32_matmul_share_of_kernel_time_pct": share,
            "compute_16bit_share_pct": low_share,
            "compute_capability": f"{cc[0]}.{cc[1]}",
            **({"hlo_matmul_precision": "HIGHEST"} if highest else {}),
        },
        limit(
            "fp32_matmul_share_of_kernel_time_pct",
            share,
            FP32_MATMUL_MIN_SHARE_PCT,
            xprof_16bit_share_below_pct=LOW_PRECISION_MAX_SHARE_PCT,
        ),
        {"kernels": top_kernel_names(ctx, is_target)},
        condition=condition,
        fix_note=note,
    )
    estimate = _what_if(ctx, ordinal, fp32_ms, is_target)
    if finding is None or estimate is None:
        return finding
    if condition == "tf32_off":
        finding = replace(finding, fix_note=_join(note, _tf32_step_note(ctx, ordinal, fp32_ms, is_target, estimate)))
    return estimated(finding, estimate)


def _unfilled_names(ctx):
    """Kernel names none of whose launches fill the GPU (analysis.gpu_fill: fewer blocks than SMs, or calls about
    as short as the per-call latency): their grid or latency holds them back, so a faster precision would not
    shorten them, and they count neither toward the finding nor its what-if."""
    filling, unfilled = set(), set()
    for row in ctx.analysis.kernels:
        (unfilled if underfills(row, ctx.sm_count, KERNEL_LATENCY_FLOOR_US) else filling).add(row.name)
    return frozenset(unfilled - filling)


def _tf32_step_note(ctx, ordinal, fp32_ms, is_target, estimate):
    """The fix proposes two steps, TF32 and 16-bit mixed precision: the finding's estimate is the 16-bit one; this
    sentence gives TF32's own (whatif.precision.tf32), smaller, figure. "" without the TF32 peak."""
    peaks = gpu_peaks(ctx, ordinal)
    if peaks is None or not peaks.tf32_factor:
        return ""
    rows = [
        MatmulKernel(row.total_ps / 1e9, row.flops, row.bytes, _latency_ms(row))
        for row in ctx.analysis.kernels
        if is_target(row.name)
    ]
    step = whatif_tf32(
        ctx.window_ms,
        fp32_ms,
        rows,
        peaks.vector_roof("f32"),
        peaks.matrix_roof("f32"),
        peaks.hbm_gbps,
        GEMM_REACHABLE_ROOF_PCT / 100.0,
    )
    if step is None or step.speedup <= 1.0:
        return ""
    kind = "about" if step.kind == "model" else "up to"
    whole = "about" if estimate.kind == "model" else "up to"
    return (
        f"Per step of the fix: TF32 alone ({peaks.matrix_roof('f32'):g} TFLOP/s, float32 bytes) {kind} "
        f"{step.speedup:.2f}×; 16-bit mixed precision ({peaks.matrix_roof('bf16'):g} TFLOP/s, half the bytes) "
        f"{whole} {estimate.speedup:.2f}×, the estimate of this finding."
        + (" Peak rates are rarely reached: a bound is above the usual gain." if "up to" in (kind, whole) else "")
    )


def _join(*sentences):
    return " ".join(s for s in sentences if s)


def _what_if(ctx, ordinal, fp32_ms, is_target):
    """whatif.precision.mixed_precision of the target kernels, and of the 32-bit matrix kernels that run on
    Tensor Cores in TF32 (attention, GEMMs) and the 32-bit element-wise kernels, which mixed precision also moves
    to 16 bits, under the busiest GPU's peaks; None without them."""
    peaks = gpu_peaks(ctx, ordinal)
    if peaks is None:
        return None
    tf32 = _f32_names(
        ctx.analysis.kernels, lambda row: row.uses_tensor_cores and is_matmul_kernel(row) and not is_target(row.name)
    )
    vector = _f32_names(
        ctx.analysis.kernels,
        lambda row: (
            not is_matmul_kernel(row) and not is_target(row.name) and kernel_class(row.name) in ("elementwise", "xla")
        ),
    )
    rows = [
        MatmulKernel(row.total_ps / 1e9, row.flops, row.bytes, _latency_ms(row))
        for row in ctx.analysis.kernels
        if is_target(row.name) or row.name in tf32
    ]
    target_ms = fp32_ms
    if tf32:
        target_ms = ms(ctx.kernel_ps_by_gpu(lambda name: is_target(name) or name in tf32)[ordinal])
    vector_ms = ms(ctx.kernel_ps_by_gpu(lambda name: name in vector)[ordinal]) if vector else 0.0
    return mixed_precision(
        ctx.window_ms,
        target_ms,
        rows,
        peaks.vector_roof("f32"),
        peaks.matrix_roof("bf16"),
        peaks.hbm_gbps,
        GEMM_REACHABLE_ROOF_PCT / 100.0,
        vector_ms,
    )


def _latency_ms(row: KernelRow) -> float:
    """The least a kernel row's calls take on the device however fast their math: calls x the per-call latency."""
    return row.occurrences * KERNEL_LATENCY_FLOOR_US / 1000.0


def _f32_names(rows, predicate):
    """Names of the kernels that satisfy `predicate` (a KernelRow test) whose every row of known type is 32-bit
    (op input types, HLO)."""
    dtypes = {}
    for row in rows:
        if predicate(row):
            dtypes.setdefault(row.name, set()).add(row.dtype)
    return frozenset(name for name, found in dtypes.items() if found - {None} == {"f32"})


def _tf32_off(ctx, cc, highest=False):
    """On NVIDIA Ampere or newer, 32-bit SIMT matmul kernels mean TF32 (on by default) was turned off; `highest`:
    the HLO of these matmuls asks for precision HIGHEST, which says how."""
    vendors = {(g.capabilities.vendor or "nvidia").lower() for g in ctx.active_gpus}
    if cc < TF32_MIN_CC or not vendors <= {"nvidia"}:
        return None, ""
    if ctx.framework.name in ("tensorflow", "pytorch"):
        return "tf32_off", ""  # the catalog's tf32_off variants say it all
    seen = (
        'The compiled program\'s dots carry precision HIGHEST (jax.default_matmul_precision("highest") or '
        "precision=jax.lax.Precision.HIGHEST), so cuBLAS runs them as fp32 FMA on the CUDA cores. "
        if highest
        else ""
    )
    jax = (
        seen + f"On compute capability {cc[0]}.{cc[1]} JAX runs float32 matmuls in TF32 on Tensor Cores by default; "
        'these 32-bit kernels mean it was turned off: jax_default_matmul_precision set to "highest" or '
        '"float32", precision=jax.lax.Precision.HIGHEST on these dots, or NVIDIA_TF32_OVERRIDE=0. Where full '
        'float32 is not needed, allow TF32 again: jax.config.update("jax_default_matmul_precision", '
        '"tensorfloat32") (or the jax.default_matmul_precision("tensorfloat32") context manager), or '
        "compute in bfloat16 as below."
    )
    return "tf32_off", jax if ctx.framework.is_jax else f"JAX: {jax}"


RULES = (fp32_matmul,)
