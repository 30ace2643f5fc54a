"""GPUs the program does not use: none used at all, or some idle beside busy ones."""

from __future__ import annotations

import re
from tb_gpu_advisor.analysis.gpu_signals import gpu_library_versions, gpu_requests
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, limit
from tb_gpu_advisor.whatif.communication import spread_over_idle_gpus

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


_VERSION_KEY = re.compile(r"version$")


def gpu_not_used(ctx: Context) -> Finding | None:
    """A TensorFlow or JAX profile in which no GPU worked although something GPU-specific says the job meant one
    to: GPU planes without activity, host events that ask for a GPU, CUDA or ROCm versions in the metadata. A
    tf.distribute strategy is no such sign: it runs over CPU devices as well (the real tf_mirrored capture)."""
    model = ctx.model
    if ctx.has_gpu or model.tpu_count or not (ctx.framework.is_tensorflow or ctx.framework.is_jax):
        return None
    if any(len(gpu.activity) for gpu in model.gpus):
        return None  # GPUs worked, outside the steps: not this case
    idle_gpus = [
        f"{gpu.name} ({gpu.capabilities.model_name})" if gpu.capabilities.model_name else gpu.name for gpu in model.gpus
    ]
    requests = gpu_requests(model)
    libraries = gpu_library_versions(model.environment)
    signals = (
        (
            [f"{len(idle_gpus)} GPU plane{'s' if len(idle_gpus) > 1 else ''} without kernels or copies"]
            if idle_gpus
            else []
        )
        + ([f"host events that ask for a GPU ({requests[0][:60]})"] if requests else [])
        + (
            [f"GPU libraries in the metadata ({', '.join(f'{k} {v}' for k, v in libraries.items())})"]
            if libraries
            else []
        )
    )
    if not signals:
        return None
    versions = {
        key: value for key, value in model.environment.items() if _VERSION_KEY.search(key) and key not in libraries
    }
    # GPU planes in the file are the job's own GPUs: sure. The other signals say it meant one: likely.
    certainty = "high" if idle_gpus else "medium"
    return Finding(
        id="environment.gpu_not_used",
        severity="high" if idle_gpus else "medium",
        summary=(
            "No GPU ran any work in this profile, although the trace shows the job was set up for one: "
            + "; ".join(signals[:2])
            + "."
        ),
        evidence=Evidence(
            {"gpu_planes": len(model.gpus), "active_gpus": 0, "signals": len(signals), "certainty": certainty},
            limit("active_gpus", 0, 1, "below"),
            {"devices": idle_gpus, "host_ops": requests[:5], "signals": signals, "versions": {**libraries, **versions}},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis="none: the run used no GPU, so no GPU time is measured; on the GPU the step would be "
        "another profile",
    )


def idle_gpus(ctx: Context) -> Finding | None:
    """GPUs this process's profile lists ran no kernel while others worked, the job meant several GPUs
    (analysis.unused_gpus: several working GPUs, a strategy, replica names, collectives over the working GPUs) and
    nothing says the capture missed their work or other processes own them (unused.claim)."""
    unused = ctx.analysis.unused_gpus
    if unused is None or not unused.claim or not ctx.has_gpu:
        return None
    idle, working = unused.idle, unused.working
    total = len(idle) + len(working)
    compute_ms = ms(max(ctx.kernel_ps_by_gpu(lambda name: not is_nccl(name)).values(), default=0))
    models = sorted({work.model for work in idle if work.model})
    steps = (
        f"any of the {unused.complete_steps} captured steps"
        if unused.complete_steps
        else "the capture (no step markers)"
    )
    summary = (
        f"{_gpu_list(idle)} ({len(idle)} of {total} GPUs{', ' + ', '.join(models) if models else ''}) ran "
        f"no kernel in {steps} while {_gpu_list(working)} computed "
        f"{ctx.time_text(compute_ms)} on the busiest."
    )
    finding = Finding(
        id="environment.idle_gpus",
        severity="high" if unused.certainty == "high" and len(idle) >= len(working) else "medium",
        summary=summary,
        evidence=Evidence(
            {
                "gpus_in_profile": total,
                "working_gpus": len(working),
                "idle_gpus": len(idle),
                "complete_steps": unused.complete_steps,
                "certainty": unused.certainty,
                "replicas": unused.replicas,
                "busiest_compute_ms": compute_ms,
                "working": [
                    {
                        "device": work.name,
                        "kernels": work.kernels,
                        "kernel_ms": work.kernel_ms,
                        "steps_with_kernels": work.steps_with_kernels,
                    }
                    for work in working
                ],
            },
            limit("idle_gpus", len(idle), 0),
            {
                "devices": [work.label for work in idle],
                "working": [work.label for work in working],
                "copies_only": [work.label for work in idle if work.copies],
                "signals": list(unused.intent),
            },
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis="",
        fix_note=f"What says the job meant several GPUs: {'; '.join(unused.intent)}. Nothing in the profile says "
        "the capture missed their work or that other processes own them"
        + ("" if unused.certainty == "high" else " (no step markers, so how sure is medium)")
        + ".",
    )
    return estimated(finding, spread_over_idle_gpus(ctx.window_ms, compute_ms, len(working), total))


def _gpu_list(works):
    labels = [f"GPU {work.ordinal}" for work in works]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
