"""Kernel-efficiency findings from the roofline: time-dominant GEMMs far below the roof that binds them, when
their shapes or precision say why (docs/report.md, "Roofline")."""

from __future__ import annotations

from tb_gpu_advisor.analysis.gpu_fill import PARTIAL_WAVE, SHORT_CALLS, mean_call_us, underfills
from tb_gpu_advisor.analysis.rounding import pct, sig
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.rules.occupancy import KERNELS_LISTED, _dominant_rows
from tb_gpu_advisor.findings.thresholds import (
    DOMINANT_KERNEL_SHARE_PCT,
    GEMM_ALIGN_BYTES,
    GEMM_FAR_BELOW_ROOF_PCT,
    GEMM_REACHABLE_ROOF_PCT,
    GEMM_SMALL_DIM,
    KERNEL_HIGH_PCT,
    KERNEL_LATENCY_FLOOR_US,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


_DOCS = (L.NVIDIA_MATMUL_PERFORMANCE, L.NVIDIA_DL_PERFORMANCE)
# What keeps a GEMM off its roof (the rule's reasons, grouped): the words of the one-line fix and the paragraph
# of the fix text for each. A fix names only the causes its GEMMs show.
_CAUSES = ("align", "small", "fp32")
_SUMMARY_PARTS = {
    "align": "pad GEMM dimensions to multiples of 8 (16-bit) / 64",
    "small": "raise the batch",
    "fp32": "compute in bf16",
}
_FIX_PARTS = {
    "align": """\
- dimensions that are not multiples of 8 (16-bit; 4 for f32, 16 for 8-bit) keep cuBLAS/hipBLASLt off the
  Tensor Core / matrix-core fast paths or force padding inside the kernel: pad hidden sizes, vocabulary and
  head dims to multiples of 64 (128 is better still):
      vocab_size = (vocab_size + 63) // 64 * 64     # pad, mask the extra logits""",
    "small": """\
- small M or N (a small batch or sequence) fills only part of the GPU's tiles and SMs: raise the batch per
  GPU, or concatenate small GEMMs (batch the heads, fuse QKV projections into one matmul);""",
    "fp32": """\
- f32 inputs run at the TF32 rate at best: compute in bf16 (keep f32 master weights):
      {bf16_code}""",
}
_FIX_HEAD = """\
These matrix multiplies reach a small share of the roof that binds them (the dense matrix peak, or HBM
bandwidth for their FLOPs per byte), and their shapes or precision explain it:
"""
_FIX_TAIL = (
    "\nThe estimate assumes each GEMM reaches 70% of its roof once reshaped; roofs are upper bounds at boost clock."
)
_BF16_CODE = {
    "tensorflow": 'tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")',
    "jax": "params_bf16 = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)",
    "pytorch": 'with torch.autocast("cuda", dtype=torch.bfloat16): loss = loss_fn(model(x), y)',
}


def _idiom(causes, framework):
    """The fix for GEMMs held back by `causes` (a subset of _CAUSES), in `framework`'s code."""
    words = [_SUMMARY_PARTS[c] for c in causes]
    summary = (
        words[0]
        if len(words) == 1
        else f"{words[0]} and {words[1]}"
        if len(words) == 2
        else f"{', '.join(words[:-1])}, and {words[-1]}"
    ) + "."
    text = _FIX_HEAD + "\n".join(_FIX_PARTS[c].format(bf16_code=_BF16_CODE[framework]) for c in causes) + _FIX_TAIL
    return Idiom(summary[0].upper() + summary[1:], text, _DOCS)


def _condition(causes):
    """The catalog condition of a set of causes: "align+fp32"."""
    return "+".join(cause for cause in _CAUSES if cause in causes)


_COMBINATIONS = [tuple(c for i, c in enumerate(_CAUSES) if mask >> i & 1) for mask in range(1, 2 ** len(_CAUSES))]
_ALL = _idiom(_CAUSES, "tensorflow")

ENTRIES = register(
    "kernel",
    {
        "kernel.gemm_below_roof": Entry(
            category="kernel",
            title="Time-dominant GEMMs run far below the GPU's matrix roof",
            fix_summary=_ALL.fix_summary,
            fix=_ALL.fix,
            docs=_DOCS,
            jax=_idiom(_CAUSES, "jax"),
            pytorch=_idiom(_CAUSES, "pytorch"),
            variants=tuple(
                (f"{prefix}{_condition(causes)}", _idiom(causes, framework))
                for causes in _COMBINATIONS
                for prefix, framework in (("", "tensorflow"), ("jax:", "jax"), ("pytorch:", "pytorch"))
            ),
        ),
    },
)

# The rule's reason codes by cause (`dims_not_multiple_of_8` is read up to "_of_"); f32/f64 inputs are "fp32".
_CAUSE_OF = {"dims_not_multiple": "align", "small_dims": "small", "small_work_per_call": "small"}
_BYTES_PER_ELEMENT = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8}


def _reasons(row):
    """What in the GEMM's shape or precision keeps it off the roof: a list of short codes (empty: none seen)."""
    dims = row.get("matrix_dims") or {}
    reasons = []
    width = _BYTES_PER_ELEMENT.get(row.get("dtype"), 1)
    multiple = max(1, GEMM_ALIGN_BYTES // width)
    if dims and any(dims.get(key, 0) % multiple for key in ("m", "n", "k")):
        reasons.append(f"dims_not_multiple_of_{multiple}")
    if dims and (min(dims.get("m", 0), dims.get("n", 0)) < GEMM_SMALL_DIM or dims.get("k", 0) < GEMM_SMALL_DIM):
        reasons.append("small_dims")  # only where the shape is known: an unknown one is not small
    if row.get("dtype") in ("f32", "f64"):
        reasons.append(f"{row['dtype']}_inputs")
    return reasons


def _roof_view(row, roof):
    """The fields the rule reads of a KernelRow and its roofline.KernelRoofline, at the report's precision."""
    return {
        "name": row.name,
        "op_name": row.op_name,
        "compute_roof": row.compute,
        "dtype": row.dtype,
        "matrix_dims": dict(zip(("batch", "m", "n", "k"), row.matrix_dims)) if row.matrix_dims else None,
        "peak_pct": pct(roof.peak_pct) if roof else None,
        "bound": roof.bound if roof else None,
        "achieved_tflops": sig(roof.achieved_tflops) if roof else None,
        "roof_tflops": sig(roof.roof_tflops) if roof else None,
    }


def gemm_below_roof(ctx: Context) -> Finding | None:
    """Dominant matrix kernels at < GEMM_FAR_BELOW_ROOF_PCT of their binding roof with odd/small shapes or f32."""
    if not ctx.has_gpu:
        return None
    flagged = []
    roofs = {id(row): roof for row, roof in zip(ctx.analysis.kernels, ctx.analysis.roofline)}
    for kernel_row, share, wall_ms in _dominant_rows(ctx):
        row = _roof_view(kernel_row, roofs.get(id(kernel_row)))
        peak = row.get("peak_pct")
        if row.get("compute_roof") != "matrix" or peak is None or peak >= GEMM_FAR_BELOW_ROOF_PCT:
            continue
        reasons = _reasons(row)
        if not reasons:  # well-shaped 16-bit GEMM: reshaping advice would not apply
            continue
        fill = underfills(kernel_row, ctx.sm_count, KERNEL_LATENCY_FLOOR_US)
        if fill == PARTIAL_WAVE:
            continue  # fewer blocks than SMs: its grid holds it back (occupancy.tiny_grid), not its roof
        call_us = mean_call_us(kernel_row)
        # At the roof a call still takes the device's per-call latency: short calls save only down to it.
        reached_us = max(call_us * peak / GEMM_REACHABLE_ROOF_PCT, KERNEL_LATENCY_FLOOR_US)
        if fill == SHORT_CALLS:
            reasons = ["small_work_per_call"]  # neither precision nor alignment is what holds a short call back
        saving = max(0.0, 1.0 - reached_us / call_us) if call_us else 0.0
        if saving <= 0:
            continue
        flagged.append(
            {
                "kernel": row["name"],
                "op_name": row["op_name"],
                "share_of_kernel_time_pct": share,
                "peak_pct": peak,
                "bound": row["bound"],
                "achieved_tflops": row["achieved_tflops"],
                "roof_tflops": row["roof_tflops"],
                "dtype": row["dtype"],
                "matrix_dims": row["matrix_dims"],
                "reasons": reasons,
                "saving_ms": wall_ms * saving,
                "tensor_cores": kernel_row.uses_tensor_cores,
            }
        )
    if not flagged:
        return None
    recoverable = sum(item["saving_ms"] for item in flagged)
    share = ctx.share_pct(recoverable)
    severity = grade(share, KERNEL_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    flagged = sorted(flagged, key=lambda item: -item["share_of_kernel_time_pct"])[:KERNELS_LISTED]
    top = flagged[0]
    dims = top["matrix_dims"]
    shape = (
        f" {dims.get('batch', 1)}x{dims.get('m')}x{dims.get('n')}x{dims.get('k')} (batch x M x N x K)" if dims else ""
    )
    label = top["kernel"] if not top["op_name"] or top["op_name"].startswith("command_buffer") else top["op_name"]
    return Finding(
        id="kernel.gemm_below_roof",
        severity=severity,
        summary=(
            f"{len(flagged)} time-dominant GEMM(s) run far below their roof, e.g. {label}"
            f" at {top['peak_pct']:.0f}% of its {top['bound']} roof, "
            f"{'tf32' if top['dtype'] == 'f32' and top['tensor_cores'] else top['dtype']}{shape} "
            f"({top['share_of_kernel_time_pct']:.1f}% of kernel time)."
        ),
        evidence=Evidence(
            {
                "kernels_flagged": len(flagged),
                "recoverable_pct": share,
                "per_kernel": [
                    {k: v for k, v in item.items() if k not in ("saving_ms", "tensor_cores")} for item in flagged
                ],
            },
            limit(
                "peak_pct",
                min(item["peak_pct"] for item in flagged),
                GEMM_FAR_BELOW_ROOF_PCT,
                "below",
                min_share_of_kernel_time_pct=DOMINANT_KERNEL_SHARE_PCT,
            ),
            {"kernels": [item["kernel"] for item in flagged]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_kind="model",
        speedup_basis=(
            f"model: each GEMM reaching {GEMM_REACHABLE_ROOF_PCT:g}% of its roof (large aligned GEMMs "
            f"commonly run at 60-80%), its time x its % of the roof / {GEMM_REACHABLE_ROOF_PCT:g}%, but no call "
            f"under the device's {KERNEL_LATENCY_FLOOR_US:g} µs per-call latency; the kernel time saved all off "
            "the step; a 16-bit type raises the roof itself, which the precision findings estimate"
        ),
        fix_note="Why here: "
        + "; ".join(sorted({reason.replace("_", " ") for item in flagged for reason in item["reasons"]}))
        + ".",
        condition=_condition(
            {_CAUSE_OF.get(reason.split("_of_")[0], "fp32") for item in flagged for reason in item["reasons"]}
        ),
    )


RULES = (gemm_below_roof,)
