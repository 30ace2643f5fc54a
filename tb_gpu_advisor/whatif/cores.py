"""How many CPU cores the host had: the trace's metadata where it records them, else the size of the thread
pools the runtime sizes to the cores by default (a lower bound: the user may have shrunk them)."""

from dataclasses import dataclass

from tb_gpu_advisor.findings.thresholds import CORE_COUNT_KEYS

# Thread pools TensorFlow and XLA size to the machine's cores unless told otherwise: the intra-op Eigen pool
# (`tf_numa_-1_Eigen`, `tf_XLAEigen`), the inter-op executor threads and tf.data's private pool.
CORE_SIZED_POOLS = ("Eigen", "tf_Compute", "tf_data_private_threadpool")
METADATA = "metadata"
THREAD_POOLS = "thread pools"


@dataclass(frozen=True)
class Cores:
    """The core count and where it came from: METADATA (recorded) or THREAD_POOLS (seen, at least this many)."""

    count: int
    source: str

    @property
    def recorded(self):
        return self.source == METADATA

    def text(self):
        if self.recorded:
            return f"{self.count} cores (recorded in the trace)"
        return (f"{self.count} cores (the trace does not record the core count; the runtime's thread pools, "
                "sized to the cores by default, have this many threads)")


def host_cores(environment, thread_busy):
    """Cores from the trace's environment metadata, else from the core-sized thread pools in `thread_busy`
    ({thread kind: (thread count, busy ps)}) when they have two threads or more; None when neither says."""
    for key in CORE_COUNT_KEYS:
        value = (environment or {}).get(key)
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:
            return Cores(int(value), METADATA)
    seen = [count for kind, (count, _) in (thread_busy or {}).items()
            if any(pool in kind for pool in CORE_SIZED_POOLS)]
    # One thread says nothing: every machine has at least one core.
    return Cores(max(seen), THREAD_POOLS) if seen and max(seen) >= 2 else None
