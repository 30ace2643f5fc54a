"""The rank count of a Kineto collective whose own args do not record one (PyTorch before 2.1 writes no `Group
size`), from the trace's `distributedInfo`: the size of its process groups when they all have one size
(`pg_config`), else the world size when the trace lists no process group (the default group is the world)."""

from __future__ import annotations

from collections.abc import Iterable

from dataclasses import replace

from tb_gpu_advisor.model.trace import CollectiveCall
from tb_gpu_advisor.readers.kineto.values import integer

MAX_RANKS = 1 << 20
# Point-to-point calls run between two ranks whatever the group: the group's size is not theirs.
_POINT_TO_POINT = frozenset({"sendrecv", "send", "recv"})


def default_group_size(info: object) -> tuple[int | None, str | None]:
    """(rank count, source: "process_groups" or "world_size") from a `distributedInfo` object, (None, None)
    when it does not say or its process groups differ in size (which one a call used is unknown)."""
    if not isinstance(info, dict):
        return None, None
    groups = info.get("pg_config")
    if isinstance(groups, list) and groups:
        sizes = {
            integer(group.get("pg_size"), None, 1, MAX_RANKS) if isinstance(group, dict) else None for group in groups
        }
        return (sizes.pop(), "process_groups") if len(sizes) == 1 and None not in sizes else (None, None)
    world = integer(info.get("world_size"), None, 1, MAX_RANKS)
    return (world, "world_size") if world is not None and world > 1 else (None, None)


def with_group_sizes(calls: Iterable[CollectiveCall], info: object) -> tuple[CollectiveCall, ...]:
    """The CollectiveCalls with `group_size_source` set: "profiler" where their args gave the size, else the
    default_group_size of `info` where it says one (never for point-to-point calls)."""
    size, source = default_group_size(info)
    found = []
    for call in calls:
        if call.group_size is not None:
            call = replace(call, group_size_source="profiler")
        elif size is not None and call.collective not in _POINT_TO_POINT:
            call = replace(call, group_size=size, group_size_source=source)
        found.append(call)
    return tuple(found)
