"""Typed access to XStat values: the oneof value, interned `ref_value` strings, plane-level stat dicts."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from tb_gpu_advisor.constants import DERIVED_LINE_ID_BASE, DERIVED_LINE_ID_SPAN


def stat_names(plane: Any) -> dict[int, str]:
    """{stat metadata id: name} of a decoded plane."""
    return {key: meta.name for key, meta in plane.stat_metadata.items()}


def stat_value(stat: Any, names: Mapping[int, str]) -> Any:
    """The value of one XStat; a `ref_value` is resolved to the interned string it points to."""
    which = stat.WhichOneof("value")
    if which is None:
        return None
    if which == "ref_value":
        return names.get(stat.ref_value, "")
    return getattr(stat, which)


def plane_stats(plane: Any, names: Mapping[int, str] | None = None) -> dict[str, Any]:
    """{stat name: value} of the plane-level stats (device capabilities, metadata)."""
    names = names if names is not None else stat_names(plane)
    return {names.get(stat.metadata_id, str(stat.metadata_id)): stat_value(stat, names) for stat in plane.stats}


def ids_named(names: Mapping[int, str], wanted: Collection[str]) -> dict[int, str]:
    """{stat metadata id: name} for the ids whose name is in `wanted` (duplicate names all map)."""
    return {key: name for key, name in names.items() if name in wanted}


def is_derived_line(line_id: int) -> bool:
    """XProf's derived lines (Steps, XLA Ops, ...) have ids in a fixed int32 range; analyses skip them."""
    as_int32 = ((line_id + 2**31) % 2**32) - 2**31
    return DERIVED_LINE_ID_BASE <= as_int32 <= DERIVED_LINE_ID_BASE + DERIVED_LINE_ID_SPAN
