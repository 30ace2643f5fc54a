"""The thunks XLA's CPU runtime ran, split by what their HLO instruction computes: element-wise arithmetic and
data movement, which XLA folds into their neighbours when it compiles them in one program, or other work."""

from __future__ import annotations

from dataclasses import dataclass

from tb_gpu_advisor.readers.hlo.fusible import fusible_names

# XLA's thunk executor records a short `end: <thunk>` event after each thunk: the thunk's own bookkeeping.
_END_PREFIX = "end: "


@dataclass(frozen=True)
class XlaCpuThunks:
    """Thunk time on XLA's CPU executor threads (ps): `fusible_ps` of thunks whose instruction is element-wise or
    data movement (their `end:` events included), `other_ps` of thunks whose instruction is any other work,
    `unknown_ps` of events no HLO module of the trace names; `fusible` lists the fusible thunks' names, most time
    first."""

    fusible_ps: int
    other_ps: int
    unknown_ps: int
    fusible_count: int
    fusible: tuple

    @property
    def classified(self) -> bool:
        """Some thunk was matched to its HLO instruction (the trace carries the modules)."""
        return self.fusible_ps > 0 or self.other_ps > 0


def _thunk_name(name):
    return name[len(_END_PREFIX) :] if name.startswith(_END_PREFIX) else name


def xla_cpu_thunks(executor_op_totals, hlo_protos):
    """XlaCpuThunks of HostActivity.executor_op_totals ({event name: (count, total ps)}) against the trace's HLO
    modules (TraceModel.hlo_protos); every event counts as unknown when the trace carries no modules."""
    kinds = fusible_names(hlo_protos, {_thunk_name(name) for name in executor_op_totals})
    fusible_ps = other_ps = unknown_ps = fusible_count = 0
    fusible = {}
    for name, (count, total) in executor_op_totals.items():
        thunk = _thunk_name(name)
        kind = kinds.get(thunk)
        if kind is None:
            unknown_ps += total
        elif kind:
            fusible_ps += total
            fusible[thunk] = fusible.get(thunk, 0) + total
            fusible_count += 0 if name.startswith(_END_PREFIX) else count
        else:
            other_ps += total
    names = tuple(sorted(fusible, key=lambda thunk: (-fusible[thunk], thunk)))
    return XlaCpuThunks(fusible_ps, other_ps, unknown_ps, fusible_count, names)
