"""How busy the host's CPU cores were: traced thread time over the profiled span, against the machine's cores."""

from __future__ import annotations

from dataclasses import dataclass
from tb_gpu_advisor.analysis.rounding import ms


# Keys under which `/host:metadata` or Task Environment may record the machine's CPU core count.
CORE_COUNT_KEYS = ("cpu_count", "num_cpus", "cpu_cores", "host_cpu_count", "logical_cpu_count", "num_cores")
# Thread busy time that is waiting, not computing: input waits are known by name (IteratorGetNext*).
_WAIT_TAGS = ("sync",)


@dataclass(frozen=True)
class CpuLoad:
    """Host threads' busy time as cores kept busy over the profile span.

    `busy_cores` is the traced busy time of every host thread, less the time they are known to wait (tf.data's
    IteratorGetNext, device syncs), over the span: an upper bound of CPU use, since a traced event can also
    block. `machine_cores` is None when the trace does not record the core count; `load_ratio` then too.
    """

    machine_cores: int | None
    busy_cores: float | None  # None: the trace has no host threads
    span_ms: float
    by_kind: tuple  # (thread kind, thread count, busy cores), busiest first
    waiting_cores: float = 0.0

    @property
    def load_ratio(self):
        """Busy cores over the machine's cores; above 1 when traced threads also block (None: cores unknown)."""
        if self.machine_cores is None or self.busy_cores is None:
            return None
        return round(self.busy_cores / self.machine_cores, 2)

    def cores_of(self, prefix: str) -> float:
        """Busy cores of the threads whose kind starts with `prefix` (e.g. "tf_data")."""
        return round(sum(cores for kind, _, cores in self.by_kind if kind.startswith(prefix)), 2)


def core_count(environment):
    """The machine's CPU core count when the trace records it, else None."""
    for key in CORE_COUNT_KEYS:
        value = environment.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return int(value)
        if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
            return int(value)
    return None


def cpu_load(model):
    """The CpuLoad of a TraceModel; pure."""
    host = model.host_activity
    start, end = model.profile_span_ps
    span_ps = end - start
    cores = core_count(model.environment)
    if not host.thread_busy or span_ps <= 0:
        return CpuLoad(cores, None, ms(max(span_ps, 0)), ())
    by_kind = tuple(
        sorted(
            ((kind, count, round(busy / span_ps, 2)) for kind, (count, busy) in host.thread_busy.items()),
            key=lambda row: (-row[2], row[0]),
        )
    )
    total = sum(busy for _, busy in host.thread_busy.values())
    waiting = host.input_waits.total_ps + sum(host.tagged[tag].total_ps for tag in _WAIT_TAGS if tag in host.tagged)
    return CpuLoad(
        cores,
        round(max(total - waiting, 0) / span_ps, 2),
        ms(span_ps),
        by_kind,
        round(waiting / span_ps, 2),
    )
