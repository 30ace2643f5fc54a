"""The headline GPU busy figures: time computing, then with copies and with collectives where they add to it."""

from __future__ import annotations

# Copies or memsets that add less than this many points to the busy share are not shown apart.
COPY_SPLIT_MIN_POINTS = 1.0


def busy_figures(summary):
    """[(label, pct)] of a HostReport summary: `[("GPU busy", busy)]`, or, when copies add at least
    COPY_SPLIT_MIN_POINTS or several GPUs run collective kernels, `("GPU compute busy", …)` first and then
    `("with copies", …)` and `("with collectives", …)` where they apply."""
    busy, compute = summary.get("gpu_busy_pct"), summary.get("gpu_compute_busy_pct")
    kernel = summary.get("gpu_kernel_busy_pct")
    copies = None not in (kernel, compute) and compute - kernel >= COPY_SPLIT_MIN_POINTS
    multi = (
        (summary.get("active_gpu_count") or 0) > 1 and None not in (busy, compute) and busy > compute
    )  # collective kernels add to the busy time
    if not copies and not multi:
        return [("GPU busy", busy)]
    figures = [("GPU compute busy", kernel if copies else compute)]
    if copies:
        figures.append(("with copies", compute))
    if multi or (copies and busy is not None and busy - compute >= COPY_SPLIT_MIN_POINTS):
        figures.append(("with collectives", busy))
    return figures


def busy_scope(summary):
    """`mean of 4 GPUs` where several GPUs take part: the headline busy figures are their mean (each GPU's own
    share is on its Idle line and in the device table); None for one GPU."""
    count = summary.get("active_gpu_count") or 0
    return f"mean of {count} GPUs" if count > 1 else None
