"""Multi-GPU balance: spread of busy time across GPUs, the least busy one, NCCL's share of kernel time."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Balance:
    active_gpu_count: int
    busy_pct_min: float | None
    busy_pct_max: float | None
    busy_pct_spread: float | None
    least_busy_device: str | None
    most_busy_device: str | None
    kernel_ps_min: int | None
    kernel_ps_max: int | None
    nccl_ps: int
    nccl_share_pct: float | None  # NCCL kernel time / all kernel time


def balance(usages):
    """Balance over the DeviceUsage of every GPU that has activity."""
    active = [u for u in usages if u.busy_pct is not None]
    kernel_ps = sum(u.kernel_ps for u in active)
    nccl_ps = sum(u.nccl_ps for u in active)
    if not active:
        return Balance(0, None, None, None, None, None, None, None, 0, None)
    least = min(active, key=lambda u: u.busy_pct)
    most = max(active, key=lambda u: u.busy_pct)
    return Balance(
        active_gpu_count=len(active),
        busy_pct_min=least.busy_pct,
        busy_pct_max=most.busy_pct,
        busy_pct_spread=most.busy_pct - least.busy_pct,
        least_busy_device=least.name,
        most_busy_device=most.name,
        kernel_ps_min=min(u.kernel_ps for u in active),
        kernel_ps_max=max(u.kernel_ps for u in active),
        nccl_ps=nccl_ps,
        nccl_share_pct=100.0 * nccl_ps / kernel_ps if kernel_ps > 0 else None,
    )
