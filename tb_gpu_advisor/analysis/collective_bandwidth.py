"""Algorithm and bus bandwidth of each sized collective (NCCL's definitions), against the link the GPUs have."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from typing import TYPE_CHECKING
from tb_gpu_advisor.analysis.rounding import ms


if TYPE_CHECKING:
    from collections.abc import Iterator
    from tb_gpu_advisor.model.trace import DeviceCapabilities
    from typing import Any


# NCCL-tests: bus bandwidth = algorithm bandwidth x this factor of the rank count n, so that it compares with
# the link's own bandwidth whatever the collective.
_BUS_FACTOR = {
    "allreduce": lambda n: 2.0 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}
# The collectives whose size NCCL-tests counts as the whole (output) buffer, not one rank's input.
_WHOLE_BUFFER = {"allgather", "reducescatter", "alltoall"}
# Practical per-GPU, one-direction bandwidth (GB/s) NCCL reaches on a link: NVLink by compute capability
# (V100 NVLink2 6 links, A100 NVLink3 12, H100 NVLink4 18; about 80% of the link's 25 GB/s per link), PCIe by
# the generation GPUs of that capability ship with (gen3 x16 12, gen4 24, gen5 48).
NVLINK_GBPS_BY_CC = (((9, 0), 360.0), ((8, 0), 240.0), ((7, 0), 120.0))
PCIE_GBPS_BY_CC = (((9, 0), 48.0), ((8, 0), 24.0), ((0, 0), 12.0))
# Calls this large run at bus bandwidth rather than at NCCL's latency (NCCL-tests curves flatten from a few MB).
LARGE_COLLECTIVE_BYTES = 8 * 1024 * 1024
_NVLINK_NAMES = ("SXM", "NVL", "DGX", "HGX", "PG509")  # PG509: the A100 SXM4 board's part number
_PCIE_NAMES = ("PCIE",)


@dataclass(frozen=True)
class Link:
    """The link the collectives' bandwidth is judged against; `known` False: the trace does not say which the
    GPUs have, and the slowest one a GPU of that generation has (PCIe) is used."""

    kind: str  # "nvlink" or "pcie"
    gbps: float
    known: bool
    basis: str


@dataclass(frozen=True)
class CollectiveBandwidth:
    """One collective kind's sized calls on the GPUs: sizes, times and the median bandwidths over large calls."""

    collective: str
    calls: int
    sized_calls: int
    group_size: int | None
    median_bytes: int | None
    total_ms: float  # on the GPU that spends most in this kind (an XPlane file holds several GPUs' calls)
    large_calls: int  # calls of at least `large_bytes`: their bandwidth is not latency-bound
    algbw_gbps: float | None  # median over the large calls
    busbw_gbps: float | None  # median over the large calls
    best_busbw_gbps: float | None  # the fastest large call: what the link and NCCL's settings allowed at best
    best_busbw_link_ratio: float | None  # over the link's practical figure, which a fast setup may pass
    size_source: str | None = None  # where the sizes come from: "profiler" (Kineto's args), "hlo", "tf_op"
    group_size_source: str | None = None  # where the rank count comes from (CollectiveCall.group_size_source)


def link_of(capabilities: DeviceCapabilities, world_size: int = 0) -> Link | None:
    """The Link of a GPU from its model name and compute capability; None without either. `world_size` > 1: the
    file is one rank of a job of that many processes, whose placement on hosts the trace does not give, so an
    NVLink board is judged against PCIe (the ranks may talk over PCIe or the network)."""
    cc = capabilities.compute_capability
    if cc is None:
        return None
    name = (capabilities.model_name or "").upper()
    pcie = _by_cc(PCIE_GBPS_BY_CC, cc)
    if any(mark in name for mark in _NVLINK_NAMES):
        nvlink = _by_cc(NVLINK_GBPS_BY_CC, cc)
        if nvlink is not None and world_size > 1:
            return Link(
                "pcie",
                pcie,
                False,
                f"{capabilities.model_name}: an NVLink (SXM) board, NVLink "
                f"{nvlink:g} GB/s if the {world_size} ranks share one host; their "
                "placement is unknown, so judged against PCIe/network, as when the "
                "ranks may be on different hosts",
            )
        if nvlink is not None:
            return Link("nvlink", nvlink, True, f"{capabilities.model_name}: an NVLink (SXM) part")
    if any(mark in name.replace(" ", "") for mark in _PCIE_NAMES):
        return Link("pcie", pcie, True, f"{capabilities.model_name}: a PCIe card")
    return Link(
        "pcie",
        pcie,
        False,
        f"the trace does not say whether {capabilities.model_name or 'the GPU'} "
        "uses NVLink or PCIe: judged against PCIe, the slowest link it can have",
    )


def _by_cc(table, cc):
    return next((value for floor, value in table if tuple(cc) >= floor), None)


def bus_factor(collective, ranks):
    factor = _BUS_FACTOR.get(collective)
    return factor(ranks) if factor is not None and ranks and ranks >= 1 else None


def collective_bandwidth(calls, link, large_bytes=LARGE_COLLECTIVE_BYTES):
    """CollectiveBandwidth per collective kind of the GPU-side calls (NCCL kernels), most time first."""
    by_kind = {}
    for call in calls:
        if call.source == "kernel" and call.duration_ps > 0:
            by_kind.setdefault(call.collective, []).append(call)
    rows = []
    for collective, group in by_kind.items():
        sized = [(size, call) for call in group if (size := _size(call)) is not None]
        ranks = sorted({call.group_size for _, call in sized if call.group_size})
        large = [(size, call) for size, call in sized if size >= large_bytes]
        algbw = [size / (call.duration_ps / 1e12) / 1e9 for size, call in large]
        factor = bus_factor(collective, ranks[0]) if len(ranks) == 1 else None
        algbw_median = round(statistics.median(algbw), 3) if algbw else None
        busbw = round(algbw_median * factor, 3) if algbw_median is not None and factor is not None else None
        best = round(max(algbw) * factor, 3) if algbw and factor is not None else None
        rows.append(
            CollectiveBandwidth(
                collective=collective,
                calls=len(group),
                sized_calls=len(sized),
                group_size=ranks[0] if len(ranks) == 1 else None,
                median_bytes=int(statistics.median(size for size, _ in sized)) if sized else None,
                total_ms=ms(_busiest_device_ps(group)),
                large_calls=len(large),
                algbw_gbps=algbw_median,
                busbw_gbps=busbw,
                best_busbw_gbps=best,
                best_busbw_link_ratio=_link_ratio(best, link),
                size_source=size_source(call for _, call in sized),
                group_size_source=_group_source(call for _, call in sized) if len(ranks) == 1 else None,
            )
        )
    return tuple(sorted(rows, key=lambda row: (-row.total_ms, row.collective)))


def _link_ratio(best, link):
    """The best busbw over the link's figure; None when the link is a guess the calls outran (they used a faster
    link than the one assumed, whose figure says nothing of theirs)."""
    if best is None or not link or (not link.known and best > link.gbps):
        return None
    return round(best / link.gbps, 3)


def _group_source(calls):
    found = sorted({call.group_size_source for call in calls if call.group_size_source})
    return ", ".join(found) if found else None


def _busiest_device_ps(calls):
    by_device = {}
    for call in calls:
        by_device[call.device] = by_device.get(call.device, 0) + call.duration_ps
    return max(by_device.values())


def size_source(calls: Iterator[Any]) -> str | None:
    """Where the sizes of these calls come from, e.g. "hlo" ("hlo, tf_op" when mixed); None without sizes."""
    found = sorted({call.size_source or "profiler" for call in calls})
    return ", ".join(found) if found else None


def _size(call):
    """NCCL-tests' size of a call: the whole buffer for gathers/scatters, one rank's buffer otherwise."""
    if call.collective in _WHOLE_BUFFER:
        sizes = [size for size in (call.in_bytes, call.out_bytes) if size is not None]
        return max(sizes) if sizes else None
    return call.in_bytes if call.in_bytes is not None else call.out_bytes
