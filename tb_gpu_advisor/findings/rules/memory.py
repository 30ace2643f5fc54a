"""Memory findings: a GPU allocator near its limit; optimizer.zero_grad() filling gradients with zeros; device
allocator calls every step (allocator churn)."""

from __future__ import annotations

from tb_gpu_advisor.analysis.allocator_churn import allocator_churn
from tb_gpu_advisor.analysis.idle_attribution import HOST_CAUSES
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import HOST_HIGH_PCT, HOST_MEDIUM_PCT, MEMORY_NEAR_LIMIT_PCT, MODELED_LOW_PCT
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.report.units import size_bytes

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


ENTRIES = register(
    "memory",
    {
        "memory.near_limit": Entry(
            category="memory",
            title="GPU memory is nearly full",
            fix_summary="Free memory before growing the batch: mixed precision, recomputation, the async allocator.",
            fix="""\
The allocator's peak is close to its limit. Near the limit TensorFlow's allocator retries and fragments
("Allocator ran out of memory ... there could be performance gains if more memory were available" in the
log), XLA may rematerialize, and the batch cannot grow. In order:

    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")   # halves activation memory (float16 before cc 8.0)
    TF_GPU_ALLOCATOR=cuda_malloc_async python train.py             # CUDA's pool allocator: less fragmentation
    @tf.recompute_grad                                             # recompute activations of big blocks in backprop
    def block(x): ...

or keep the per-GPU batch and accumulate gradients over micro-batches to reach the global batch.""",
            docs=(L.TF_GPU_GUIDE, L.TF_MIXED_PRECISION),
            jax=Idiom(
                fix_summary="Free memory before growing the batch: bfloat16, jax.checkpoint, allocator settings.",
                fix="""\
The allocator's peak is close to its limit, so the batch cannot grow and XLA may rematerialize. In order:
compute in bfloat16, recompute activations of big blocks in the backward pass, and check the fraction JAX
preallocates:

    params = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)   # or a bf16 compute dtype in the model
    block = jax.checkpoint(block)                                      # remat: recompute in backprop
    XLA_PYTHON_CLIENT_MEM_FRACTION=.95 python train.py                 # default preallocation is 75%""",
                docs=(L.JAX_GPU_MEMORY, L.JAX_GPU_TIPS),
            ),
            pytorch=Idiom(
                fix_summary="Free memory before growing the batch: autocast, checkpointing, expandable segments.",
                fix="""\
The caching allocator's peak is close to the GPU's memory, so the batch cannot grow and allocations may
retry after emptying the cache. In order:

    with torch.autocast("cuda", dtype=torch.bfloat16): loss = model(x)   # halves activation memory
    out = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False) # recompute in backward
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py       # less fragmentation""",
                docs=(L.TORCH_CUDA_MEMORY, L.TORCH_AMP),
            ),
        ),
        "memory.zero_grad_fills": Entry(
            category="memory",
            title="optimizer.zero_grad() writes zeros into every gradient",
            fix_summary="Call optimizer.zero_grad(set_to_none=True) (the default from PyTorch 2.0 on).",
            fix="""\
The optimizer's zero_grad runs aten::zero_ on each gradient: one memset kernel and one launch per parameter
every step, and a read-modify-write of the gradients in the next backward. Setting them to None instead
skips all of it, and backward then writes the gradients directly:

    optimizer.zero_grad(set_to_none=True)   # or model.zero_grad(set_to_none=True)

Code that reads `.grad` before backward must then handle None (e.g. `p.grad is not None`).""",
            docs=(L.TORCH_ZERO_GRAD, L.TORCH_TUNING),
        ),
        "memory.allocator_churn": Entry(
            category="host",
            title="Device memory is allocated and freed every step (allocator churn)",
            fix_summary="Keep allocated memory: TF_FORCE_GPU_ALLOW_GROWTH unset, TF_GPU_ALLOCATOR=cuda_malloc_async.",
            fix="""\
The device allocator is called inside every step: a free synchronizes the device and the next step
allocates the same memory again, while the GPU idles. TensorFlow's BFC allocator keeps what it allocates
unless told to grow and shrink; check the process is not set to allocate on demand:

    unset TF_FORCE_GPU_ALLOW_GROWTH                                # preallocate instead of growing
    TF_GPU_ALLOCATOR=cuda_malloc_async python train.py             # CUDA's stream-ordered pool

and keep tensor shapes fixed from step to step so freed blocks are reused.""",
            docs=(L.TF_GPU_GUIDE,),
            jax=Idiom(
                fix_summary="Let XLA keep its memory: preallocation on (the default), not the platform allocator.",
                fix="""\
The device allocator is called inside every step: a free synchronizes the device and the next step
allocates the same memory again, while the GPU idles. JAX preallocates a pool by default; these settings
turn that off and must not be set for training:

    XLA_PYTHON_CLIENT_PREALLOCATE=true python train.py          # the default: one pool, no per-step calls
    # not XLA_PYTHON_CLIENT_ALLOCATOR=platform: it allocates and frees on demand, every step

and keep shapes fixed between steps (no recompilation, buffers reused).""",
                docs=(L.JAX_GPU_MEMORY,),
            ),
            pytorch=Idiom(
                fix_summary="No torch.cuda.empty_cache() in the loop; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.",
                fix="""\
cudaFree/hipFree and cudaMalloc/hipMalloc run inside every step: a free synchronizes the device and the
next step allocates the same memory again, while the GPU idles. PyTorch's caching allocator calls them only
when its cache is emptied or must grow:

    # no torch.cuda.empty_cache() (or gc.collect() + empty_cache) inside the training loop
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py   # grow segments, no new blocks
    # on ROCm: PYTORCH_HIP_ALLOC_CONF=expandable_segments:True

Keep shapes fixed from step to step (drop_last=True, padding to fixed lengths) so cached blocks are reused;
near the memory limit the allocator frees its cache and retries (torch.cuda.memory_stats()
"num_alloc_retries"): then lower the memory peak first.""",
                docs=(L.TORCH_CUDA_MEMORY,),
            ),
        ),
    },
)


def zero_grad_fills(ctx: Context) -> Finding | None:
    """optimizer.zero_grad() without set_to_none: aten::zero_ on each gradient every step."""
    if ctx.framework.name != "pytorch":
        return None
    fills = ctx.host.tagged.get("zero_grad_fill")
    if fills is None or not len(fills):
        return None
    fill_ms = ms(ctx.in_window_ps(fills))
    share = ctx.share_pct(fill_ms)
    if fill_ms <= 0:
        return None
    return Finding(
        id="memory.zero_grad_fills",
        severity="low",
        summary=f"optimizer.zero_grad() zeroed the gradients for {ctx.time_text(fill_ms)} of host time "
        f"({share:.1f}% {ctx.of_the_step_time}) instead of setting them to None.",
        evidence=Evidence(
            {"zero_grad_fill_ms": fill_ms, "zero_grad_fill_pct": share}, limit("zero_grad_fill_ms", fill_ms, 0.0)
        ),
        recoverable_ms=fill_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the host time of the zero fills inside zero_grad",
    )


def near_limit(ctx: Context) -> Finding | None:
    """An active GPU's allocator peak at >= MEMORY_NEAR_LIMIT_PCT of its limit (TensorFlow's memory profile)."""
    active = {gpu.ordinal for gpu in ctx.active_gpus}
    full = [
        row
        for row in ctx.analysis.gpu_memory
        if row.ordinal in active and row.peak_pct is not None and row.peak_pct >= MEMORY_NEAR_LIMIT_PCT
    ]
    if not full:
        return None
    worst = max(full, key=lambda row: (row.peak_pct, -row.ordinal))
    return Finding(
        id="memory.near_limit",
        severity="low",
        summary=f"GPU {worst.ordinal}'s allocator peaked at {size_bytes(worst.peak_bytes)} of its "
        f"{size_bytes(worst.limit_bytes)} limit ({worst.peak_pct:.0f}%): no headroom for a larger batch.",
        evidence=Evidence(
            {
                "device": worst.ordinal,
                "allocator": worst.allocator,
                "peak_bytes_in_use": worst.peak_bytes,
                "limit_bytes": worst.limit_bytes,
                "headroom_bytes": worst.headroom_bytes,
                "peak_pct_of_limit": worst.peak_pct,
                "gpus_near_limit": len(full),
            },
            limit("peak_pct_of_limit", worst.peak_pct, MEMORY_NEAR_LIMIT_PCT),
            {"devices": [f"/device:GPU:{row.ordinal}" for row in full]},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis="none: a capacity limit, no time is measured as recoverable",
    )


def allocator_calls_every_step(ctx):
    """Device allocator calls (cudaMalloc/cudaFree, hipMalloc/hipFree) in at least two steps and half of them;
    recoverable: the time the GPUs idle inside them, with the host late for the next work (idle attribution)."""
    if not ctx.has_gpu or not ctx.step_count:
        return None
    churn = allocator_churn(ctx.host, ctx.step_set.steps)
    if churn is None:
        return None
    host_late = intervals.union_all(*(ctx.idle_spans(cause) for cause in HOST_CAUSES))
    stalled = intervals.intersect(churn.spans, host_late)
    stall_ms = ms(ctx.in_window_ps(stalled))
    share = ctx.share_pct(stall_ms)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    names = ", ".join(f"{name} ({count:,})" for name, count, _ in churn.calls[:4])
    return Finding(
        id="memory.allocator_churn",
        severity=severity,
        summary=(
            f"Device allocator calls run in {churn.steps_with} of {churn.steps} steps ({names}); the GPU idles "
            f"inside them {ctx.time_text(stall_ms)} ({share:.1f}% of the step time). Recurring, so this is "
            "the run's own pattern, not warm-up."
        ),
        evidence=Evidence(
            {
                "allocator_stall_ms": stall_ms,
                "allocator_stall_pct": share,
                "allocator_call_ms": ms(churn.spans.total_ps),
                "steps_with_calls": churn.steps_with,
                "steps": churn.steps,
            },
            ladder("allocator_stall_pct", share, HOST_HIGH_PCT, HOST_MEDIUM_PCT),
            {
                "calls": [{"name": n, "count": c, "total_ms": ms(t)} for n, c, t in churn.calls[:5]],
                "time_ranges_ms": ctx.longest_ranges_ms(stalled),
                "steps": ctx.steps_overlapping(stalled),
            },
        ),
        recoverable_ms=stall_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the GPU idle time inside the allocator calls",
    )


RULES = (near_limit, zero_grad_fills, allocator_calls_every_step)
