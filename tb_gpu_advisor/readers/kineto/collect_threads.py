"""What the Kineto collector keeps of each host thread's Python calls: their spans, as busy time, waits and wakes."""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

from tb_gpu_advisor.model.trace import ThreadWaits
from tb_gpu_advisor.model.waits import call_role, thread_label, thread_waits
from tb_gpu_advisor.readers.kineto.device_columns import column


class ThreadCalls:
    """A base of kineto.collect.Collector: its python_spans, thread_roles and roles, filled per Python call."""

    # set by Collector.__init__
    marker_threads: set[int]
    launch_tid: array
    threads: dict[tuple[Any, Any], int]  # (pid, tid) as the trace writes them
    thread_roles: dict[int, tuple[dict[str, tuple[array, array]], tuple[array, array]]]
    python_spans: dict[int, tuple[array, array]]
    ops: dict[int, tuple[array, ...]]
    roles: dict[str, tuple | None]

    def _python_call(self, thread, name, start, end):
        """Keeps a Python call's span for its thread's busy time, and its span as a wait or a wake."""
        spans = self.python_spans.get(thread)
        if spans is None:
            spans = self.python_spans[thread] = (array("q"), array("q"))
        spans[0].append(start)
        spans[1].append(end)
        role = self.roles.get(name, ())
        if role == ():
            role = self.roles[name] = call_role(name)
        if role is not None:
            waits, wakes = self.thread_roles.setdefault(thread, ({}, (array("q"), array("q"))))
            spans = waits.setdefault(role[1], (array("q"), array("q"))) if role[0] == "wait" else wakes
            spans[0].append(start)
            spans[1].append(end)

    def thread_waits(self) -> tuple[ThreadWaits, ...]:
        """ThreadWaits of the threads with waits or wakes, in order of their first event."""
        feeding = self.marker_threads | set(self.launch_tid)
        ids = {index: tid for (_, tid), index in self.threads.items()}
        found = []
        for thread in sorted(self.thread_roles):
            waits, wakes = self.thread_roles[thread]
            busy = [self.python_spans[thread]] + ([self.ops[thread][:2]] if thread in self.ops else [])
            found.append(
                thread_waits(
                    thread_label("", ids[thread]),
                    thread in feeding,
                    {kind: tuple(column(c, np.int64) for c in spans) for kind, spans in waits.items()},
                    tuple(column(c, np.int64) for c in wakes),
                    tuple(np.concatenate([column(spans[i], np.int64) for spans in busy]) for i in (0, 1)),
                )
            )
        return tuple(found)
