"""How many CPU cores the host had: the trace's metadata where it records them, else what the runtime's
process-wide thread pools, sized to the cores by default, show."""

from __future__ import annotations

from dataclasses import dataclass

from tb_gpu_advisor.analysis.cpu_load import CORE_COUNT_KEYS

# Process-wide thread pools TensorFlow and XLA size to the machine's cores unless told otherwise: the intra-op
# Eigen pool (`tf_numa_-1_Eigen`, `tf_XLAEigen`) and the inter-op executor threads (`tf_Compute`). tf.data's
# private pools are not counted: every iterator has its own (tf.distribute's per-replica iterators, several
# datasets) and they all share one thread name, so their threads add up.
INTRA_OP_POOLS = ("Eigen",)
CORE_SIZED_POOLS = INTRA_OP_POOLS + ("tf_Compute",)
METADATA = "metadata"
# The intra-op pool and another core-sized pool show the same number of threads, and none shows more. The
# intra-op pool splits each CPU op it parallelizes over all of its threads, so where it ran such ops it shows
# them all; the other pool agreeing says the count is the pools' size, not a sample of it.
AGREEING_POOLS = "agreeing thread pools"
# The pools show threads but do not establish their size: the host has at least the most seen, maybe more.
THREAD_POOLS = "thread pools"


@dataclass(frozen=True)
class Cores:
    """The core count and where it came from: METADATA or AGREEING_POOLS (known), or THREAD_POOLS (at least)."""

    count: int
    source: str

    @property
    def known(self) -> bool:
        return self.source in (METADATA, AGREEING_POOLS)

    def text(self) -> str:
        if self.source == METADATA:
            return f"{self.count} cores (recorded in the trace)"
        if self.source == AGREEING_POOLS:
            return (
                f"{self.count} cores (not recorded in the trace; TensorFlow's intra-op and inter-op thread pools, "
                f"each sized to the cores by default, both have {self.count} threads)"
            )
        return (
            f"at least {self.count} cores (not recorded in the trace; TensorFlow's thread pools, sized to the "
            f"cores by default, show up to {self.count} threads, and a pool shows only the threads that ran "
            "something)"
        )

    def short_text(self) -> str:
        """The Configuration row's words."""
        if self.source == METADATA:
            return str(self.count)
        if self.source == AGREEING_POOLS:
            return f"{self.count} (not recorded; the intra-op and inter-op thread pools both have {self.count})"
        return f"at least {self.count} (not recorded; the most threads a core-sized pool shows)"


def host_cores(environment: dict, thread_busy: dict[str, tuple[int, int]]) -> Cores | None:
    """Cores from the trace's environment metadata, else from the core-sized thread pools in `thread_busy`
    ({thread kind: (thread count, busy ps)}) when they show two threads or more; None when neither says."""
    for key in CORE_COUNT_KEYS:
        value = (environment or {}).get(key)
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:
            return Cores(int(value), METADATA)
    seen = {
        kind: count
        for kind, (count, _) in (thread_busy or {}).items()
        if any(pool in kind for pool in CORE_SIZED_POOLS)
    }
    # One thread says nothing: every machine has at least one core.
    if not seen or max(seen.values()) < 2:
        return None
    most = max(seen.values())
    at_most = [kind for kind, count in seen.items() if count == most]
    intra_op = any(pool in kind for kind in at_most for pool in INTRA_OP_POOLS)
    return Cores(most, AGREEING_POOLS if intra_op and len(at_most) >= 2 else THREAD_POOLS)
