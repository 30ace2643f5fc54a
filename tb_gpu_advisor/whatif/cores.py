"""How many CPU cores the host had: the trace's metadata where it records them, else the runtime's thread pools
that are sized to the cores by default, when two of them agree."""

from dataclasses import dataclass

from tb_gpu_advisor.findings.thresholds import CORE_COUNT_KEYS

# Thread pools TensorFlow and XLA size to the machine's cores unless told otherwise: the intra-op Eigen pool
# (`tf_numa_-1_Eigen`, `tf_XLAEigen`), the inter-op executor threads and tf.data's private pool.
CORE_SIZED_POOLS = ("Eigen", "tf_Compute", "tf_data_private_threadpool")
METADATA = "metadata"
# Two or more of those pools show the same number of threads, and none more: each is sized to the cores, and a
# pool only shows the threads that ran something, so independent pools agree when they show all their threads.
AGREEING_POOLS = "agreeing thread pools"
# The pools show threads but do not agree: the host has at least the most seen, maybe more.
THREAD_POOLS = "thread pools"


@dataclass(frozen=True)
class Cores:
    """The core count and where it came from: METADATA or AGREEING_POOLS (known), or THREAD_POOLS (at least)."""

    count: int
    source: str

    @property
    def known(self):
        return self.source in (METADATA, AGREEING_POOLS)

    def text(self):
        if self.source == METADATA:
            return f"{self.count} cores (recorded in the trace)"
        if self.source == AGREEING_POOLS:
            return (f"{self.count} cores (the trace does not record the core count; the runtime's thread pools, each "
                    f"sized to the cores by default, all show {self.count} threads)")
        return (f"at least {self.count} cores (the trace does not record the core count; the runtime's thread "
                f"pools, sized to the cores by default, show at most {self.count} threads, and a pool shows only the "
                "threads that ran something)")


def host_cores(environment, thread_busy):
    """Cores from the trace's environment metadata, else from the core-sized thread pools in `thread_busy`
    ({thread kind: (thread count, busy ps)}) when they show two threads or more; None when neither says."""
    for key in CORE_COUNT_KEYS:
        value = (environment or {}).get(key)
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:
            return Cores(int(value), METADATA)
    seen = [count for kind, (count, _) in (thread_busy or {}).items()
            if any(pool in kind for pool in CORE_SIZED_POOLS)]
    # One thread says nothing: every machine has at least one core.
    if not seen or max(seen) < 2:
        return None
    most = max(seen)
    return Cores(most, AGREEING_POOLS if seen.count(most) >= 2 else THREAD_POOLS)
