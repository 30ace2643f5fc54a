"""The GPU, CUDA runtime, driver and framework versions fit each other and the model's dtypes."""

from __future__ import annotations

import re
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.thresholds import (
    BF16_MIN_CC,
    KERNEL_HIGH_PCT,
    MIXED_PRECISION_GAIN,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
    TENSOR_CORE_MIN_CC,
)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


_BF16 = re.compile(r"bf16|bfloat16|__nv_bfloat", re.IGNORECASE)


# First CUDA version with native (SASS) support for a compute capability.
CUDA_FOR_CC = {
    (6, 0): (8, 0),
    (7, 0): (9, 0),
    (7, 5): (10, 0),
    (8, 0): (11, 0),
    (8, 6): (11, 1),
    (8, 9): (11, 8),
    (9, 0): (11, 8),
    (10, 0): (12, 8),
    (12, 0): (12, 8),
}


NOT_A_SPEEDUP = "none: a correctness/compatibility note, no time is measured as recoverable"


def cuda_version(value: str) -> tuple[int, int] | None:
    """(major, minor) from "12020" / 12020 (CUDA_VERSION style) or "12.2[.x]"; None when unreadable."""
    text = str(value).strip()
    if re.fullmatch(r"\d{4,6}", text):
        number = int(text)
        return (number // 1000, (number % 1000) // 10)
    match = re.match(r"(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _cc_text(cc):
    return f"{cc[0]}.{cc[1]}"


def no_tensor_cores(ctx: Context) -> Finding | None:
    cc = ctx.compute_capability
    if not ctx.has_gpu or cc is None or cc >= TENSOR_CORE_MIN_CC:
        return None
    return Finding(
        id="environment.no_tensor_cores",
        severity="low",
        summary=f"Compute capability {_cc_text(cc)}: no Tensor Cores, so mixed precision is not suggested.",
        evidence=Evidence(
            {"compute_capability": _cc_text(cc)},
            limit("compute_capability", _cc_text(cc), _cc_text(TENSOR_CORE_MIN_CC), "below"),
            {"devices": [g.name for g in ctx.active_gpus]},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis=NOT_A_SPEEDUP,
    )


def bf16_without_hardware(ctx):
    cc = ctx.compute_capability
    if not ctx.has_gpu or cc is None or cc >= BF16_MIN_CC:
        return None
    by_gpu = ctx.kernel_ps_by_gpu(lambda name: bool(_BF16.search(name)))
    bf16_ms = ms(max(by_gpu.values(), default=0))
    if bf16_ms <= 0:
        return None
    recoverable = bf16_ms * (1.0 - 1.0 / MIXED_PRECISION_GAIN)
    severity = grade(ctx.share_pct(recoverable), KERNEL_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    names = sorted({n for g in ctx.active_gpus for n in g.activity.names if _BF16.search(n)})
    return Finding(
        id="environment.bf16_without_hardware",
        severity=severity,
        summary=f"bfloat16 kernels take {ctx.time_text(bf16_ms)} on a compute capability {_cc_text(cc)} GPU, "
        "which has no bfloat16 Tensor Cores.",
        evidence=Evidence(
            {"bf16_kernel_ms": bf16_ms, "compute_capability": _cc_text(cc)},
            limit("compute_capability", _cc_text(cc), _cc_text(BF16_MIN_CC), "below"),
            {"kernels": names[:5]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis=f"estimate: those kernels {MIXED_PRECISION_GAIN:g}× faster in float16 on Tensor Cores",
    )


def _runtime_version(environment):
    for key in ("cuda_runtime_version", "cuda_version"):
        if key in environment and cuda_version(environment[key]):
            return key, cuda_version(environment[key])
    return None, None


def cuda_older_than_gpu(ctx: Context) -> Finding | None:
    cc = ctx.compute_capability
    key, version = _runtime_version(ctx.model.environment)
    if not ctx.has_gpu or cc is None or version is None:
        return None
    known = [c for c in CUDA_FOR_CC if c <= cc]
    if not known:
        return None
    needed = CUDA_FOR_CC[max(known)]
    if version >= needed:
        return None
    return Finding(
        id="environment.cuda_older_than_gpu",
        severity="medium",
        summary=f"CUDA {version[0]}.{version[1]} predates native support for compute capability {_cc_text(cc)} "
        f"(CUDA {needed[0]}.{needed[1]}+).",
        evidence=Evidence(
            {key: ctx.model.environment[key], "compute_capability": _cc_text(cc)},
            limit("cuda_version", f"{version[0]}.{version[1]}", f"{needed[0]}.{needed[1]}", "below"),
            {"devices": [g.name for g in ctx.active_gpus]},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis=NOT_A_SPEEDUP,
    )


def driver_older_than_runtime(ctx: Context) -> Finding | None:
    environment = ctx.model.environment
    key, runtime = _runtime_version(environment)
    driver = cuda_version(environment["cuda_driver_version"]) if "cuda_driver_version" in environment else None
    if runtime is None or driver is None or driver >= runtime:
        return None
    return Finding(
        id="environment.driver_older_than_runtime",
        severity="medium",
        summary=f"The driver supports CUDA {driver[0]}.{driver[1]}, older than the CUDA {runtime[0]}.{runtime[1]} "
        "runtime in use.",
        evidence=Evidence(
            {"cuda_driver_version": environment["cuda_driver_version"], key: environment[key]},
            limit("cuda_driver_version", f"{driver[0]}.{driver[1]}", f"{runtime[0]}.{runtime[1]}", "below"),
            {},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis=NOT_A_SPEEDUP,
    )


def _release(text):
    """(major, minor, patch) of a version text such as `0.4.30` or `0.4.30.dev20240701`, or None."""
    match = re.match(r"^(\d+)\.(\d+)\.(\d+)", str(text).strip())
    return tuple(int(part) for part in match.groups()) if match else None


def versions_misaligned(ctx: Context) -> Finding | None:
    """The trace's metadata records jax and jaxlib versions of different releases (JAX writes both)."""
    environment = ctx.model.environment
    jax, jaxlib = _release(environment.get("jax_version", "")), _release(environment.get("jaxlib_version", ""))
    if jax is None or jaxlib is None or jax == jaxlib:
        return None
    return Finding(
        id="environment.versions_misaligned",
        severity="low",
        summary=f"jax {environment['jax_version']} runs with jaxlib {environment['jaxlib_version']}: "
        "releases that were not tested together.",
        evidence=Evidence(
            {"jax_version": environment["jax_version"], "jaxlib_version": environment["jaxlib_version"]},
            limit("jaxlib_version", environment["jaxlib_version"], environment["jax_version"], "differs from"),
            {},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis=NOT_A_SPEEDUP,
    )
