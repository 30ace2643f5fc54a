"""Python-tracer calls that block a thread on another one (queues, locks, conditions, futures) and the calls that
wake it, recognized by name in both profilers' spellings.

XPlane's Python tracer names a call `$<file>:<line> <function>` (`$queue.py:154 get`), `$<module> <function>`
(`$time sleep`) or `$<unknown> <method>` for a method of a C object (`$<unknown> acquire`); PyTorch's (Kineto
`python_function` events) writes `<path>(<line>): <function>` (`multiprocessing/queues.py(98): get`),
`<built-in method <name> of <type> object at 0x...>` or `<built-in function <name>>`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ThreadWaits

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from tb_gpu_advisor.model.trace import Intervals


# Wait kinds, outermost first: a queue's get waits on a condition, which waits on a lock; an instant inside
# nested waits belongs to the outermost kind (what the program called).
WAIT_KINDS = ("data_loader", "process_queue", "queue", "future", "thread_join", "condition", "lock", "poll")
# What each kind is, in the words of the finding.
WAIT_KIND_TEXT = {
    "data_loader": "PyTorch DataLoader's result queue (_try_get_data)",
    "process_queue": "a multiprocessing queue or pipe (get/poll)",
    "queue": "a queue.Queue (get)",
    "future": "a concurrent.futures result",
    "thread_join": "Thread.join",
    "condition": "a threading Condition/Event wait",
    "lock": "a lock (acquire)",
    "poll": "a select/poll on a file descriptor",
}
# Kinds where the thread waits for another thread or process to produce something or signal; a lock's wait is
# contention instead: another thread holds it.
PRODUCER_KINDS = frozenset({"data_loader", "process_queue", "queue", "future", "thread_join", "condition", "poll"})

_WAITS = {
    ("dataloader.py", "_try_get_data"): "data_loader",
    ("dataloader.py", "_get_data"): "data_loader",
    ("queues.py", "get"): "process_queue",
    ("connection.py", "poll"): "process_queue",
    ("connection.py", "_poll"): "process_queue",
    ("connection.py", "wait"): "process_queue",
    ("queue.py", "get"): "queue",
    ("_base.py", "result"): "future",
    ("_base.py", "wait"): "future",
    ("_base.py", "as_completed"): "future",
    ("threading.py", "join"): "thread_join",
    ("threading.py", "wait"): "condition",
    ("threading.py", "wait_for"): "condition",
    ("selectors.py", "select"): "poll",
}
_WAKES = {
    ("queue.py", "put"),
    ("queue.py", "put_nowait"),
    ("queues.py", "put"),
    ("threading.py", "notify"),
    ("threading.py", "notify_all"),
    ("threading.py", "set"),
    ("threading.py", "release"),
    ("_base.py", "set_result"),
    ("_base.py", "set_exception"),
}
# Methods of C objects: which are waits and which wake a waiter; the owner's type when the name gives it.
_C_WAITS = {"acquire": "lock", "poll": "poll"}
_C_WAKES = {"release"}
_LOCK_TYPES = {"_thread.lock", "_thread.RLock", "_multiprocessing.SemLock"}
_POLL_TYPES = {"select.poll", "select.epoll"}

_XPLANE = re.compile(r"^\$(\S+) (\S+)$")
_KINETO = re.compile(r"^(\S+)\(\d+\): (\S+)$")
_BUILTIN = re.compile(r"^<built-in method (\S+) of (\S+) object")


def _file(location):
    """`queue.py` of `queue.py:154`, `multiprocessing/queues.py` or `/usr/lib/python3.11/queue.py`."""
    return location.rpartition(":")[0].rpartition("/")[2] if ":" in location else location.rpartition("/")[2]


def call_role(name: str) -> tuple | None:
    """("wait", kind), ("wake", None) or None for a host event name."""
    if name.startswith("$"):
        found = _XPLANE.match(name)
        if found is None:
            return None
        location, function = found.groups()
        if location == "<unknown>":
            return _c_method(function, None)
        return _python(_file(location), function)
    if name.startswith("<built-in method "):
        found = _BUILTIN.match(name)
        return _c_method(found.group(1), found.group(2)) if found else None
    if "): " in name:
        found = _KINETO.match(name)
        return _python(_file(found.group(1)), found.group(2)) if found else None
    return None


def _python(file, function):
    kind = _WAITS.get((file, function))
    if kind is not None:
        return "wait", kind
    return ("wake", None) if (file, function) in _WAKES else None


def _c_method(method, owner):
    kind = _C_WAITS.get(method)
    if kind is not None and (owner is None or owner in (_LOCK_TYPES if kind == "lock" else _POLL_TYPES)):
        return "wait", kind
    if method in _C_WAKES and (owner is None or owner in _LOCK_TYPES):
        return "wake", None
    return None


def thread_label(name: str, thread_id: int) -> str:
    """A thread's name for the report: its own, or `thread <id>` when the profiler left it unnamed."""
    return name if name else f"thread {thread_id}"


def thread_waits(
    thread: str,
    feeds_device: bool,
    waits: Mapping[str, tuple[list[int] | np.ndarray, ...]],  # (starts, ends) per kind
    wakes: tuple[list[int] | np.ndarray, ...],  # (starts, ends)
    busy: tuple[np.ndarray, ...],  # (starts, ends)
) -> ThreadWaits:
    """ThreadWaits from (starts, ends) pairs: `waits` per kind, `wakes` and `busy`."""
    return ThreadWaits(
        thread=thread,
        feeds_device=bool(feeds_device),
        waits={kind: intervals.union(*waits[kind]) for kind in WAIT_KINDS if kind in waits},
        wakes=intervals.union(*wakes),
        busy=intervals.union(*busy),
    )


def feeder_waits(thread_waits: tuple) -> Intervals:
    """The union of the waits of the threads that feed the device (ThreadWaits.feeds_device)."""
    return intervals.union_all(
        *(spans for thread in thread_waits if thread.feeds_device for spans in thread.waits.values())
    )


def outermost(waits: dict[str, Intervals]) -> dict[str, Intervals]:
    """{kind: Intervals} with each instant kept only under the outermost kind waiting then (WAIT_KINDS order)."""
    taken, found = intervals.EMPTY, {}
    for kind in WAIT_KINDS:
        if kind in waits:
            spans = intervals.subtract(waits[kind], taken)
            if len(spans):
                found[kind] = spans
                taken = intervals.union_all(taken, spans)
    return found
