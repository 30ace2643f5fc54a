"""Builds one GpuDevice from a decoded `/device:GPU:N` plane: activity arrays, capabilities, Steps markers."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tb_gpu_advisor.constants import MAX_DEVICE_NAME_CHARS, STEPS_LINE_ID
from tb_gpu_advisor.model.copies import reclassified_copy
from tb_gpu_advisor.model.details import parse_copy_details, parse_kernel_details
from tb_gpu_advisor.model.device_events import classify_event_name
from tb_gpu_advisor.model.trace import (
    ActivityKind,
    CopyDirection,
    DeviceActivity,
    DeviceCapabilities,
    GpuDevice,
    StepMarker,
)
from tb_gpu_advisor.model.vendor import NVIDIA, device_arch, infer_vendor
from tb_gpu_advisor.readers.xplane.stats import ids_named, is_derived_line, plane_stats, stat_names, stat_value

_DEVICE_STATS = {
    "correlation_id",
    "kernel_details",
    "memcpy_details",
    "memset_details",
    "tf_op",
    "hlo_op",
    "name",
    "theoretical_occupancy_pct",
    "program_id",
    "annotation",
    "shape",
}
_STEP_STATS = {"group_id", "step_name", "device_offset_ps", "device_duration_ps"}
_SKIPPED_LINE_NAMES = ("_counters_", "CUPTI overhead")


def op_name_from_tf_op(tf_op: str | None) -> str:
    """The name part of a TF op full name `name:type` (XProf's ParseTfOpFullname)."""
    if not tf_op:
        return ""
    name, sep, _ = tf_op.rpartition(":")
    return name if sep else tf_op


def tf_signature(tf_op: object, annotation: object, shape: object) -> tuple[str, str] | None:
    """(op type, input shape text) of a TensorFlow kernel: the type from `tf_op` ("name:Type"), else from the
    innermost level of its `annotation` ("outer::name:Type#shape=...#"); None without a shape or a type."""
    if not isinstance(shape, str) or not shape:
        return None
    source = tf_op if isinstance(tf_op, str) and tf_op else None
    if source is None and isinstance(annotation, str) and annotation:
        source = annotation.rsplit("::", 1)[-1].split("#", 1)[0]
    if not source or ":" not in source:
        return None
    op_type = source.rpartition(":")[2]
    return (op_type, shape) if op_type and op_type != "XlaModule" else None


def capabilities_from_stats(stats: Mapping[str, Any], kernel_names: Sequence[str] = ()) -> DeviceCapabilities:
    """DeviceCapabilities from a GPU plane's stats (clock_rate is in kHz, memory_bandwidth in B/s) and the
    names of its events (they tell ROCm traces apart and name the gfx target of Tensile kernels)."""

    def number(key: str) -> Any:  # a positive int or float stat, else None
        value = stats.get(key)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None

    clock_khz = number("clock_rate")
    major, minor = stats.get("compute_cap_major"), stats.get("compute_cap_minor")
    capability = (
        (int(major), int(minor))
        if isinstance(major, int)
        and not isinstance(major, bool)
        and major > 0
        and isinstance(minor, int)
        and not isinstance(minor, bool)
        and minor >= 0
        else None
    )
    vendor = infer_vendor(stats.get("device_vendor"), capability, kernel_names)
    if vendor != NVIDIA:
        capability = None  # AMD writes its gfx major/minor there: not a CUDA compute capability
    strings = [value for value in stats.values() if isinstance(value, str)]
    model_name = stats.get("gpu_device_name")
    model_name = model_name[:MAX_DEVICE_NAME_CHARS] if isinstance(model_name, str) else None
    return DeviceCapabilities(
        model_name=model_name if isinstance(model_name, str) and model_name else None,
        vendor=vendor,
        sm_count=number("core_count"),
        clock_mhz=clock_khz / 1000.0 if clock_khz else None,
        memory_bandwidth_bytes_per_s=number("memory_bandwidth"),
        memory_bytes=number("memory_size"),
        compute_capability=capability,
        arch=device_arch(vendor, capability, strings, kernel_names),
    )


def _int64_or(value, default):
    """A numeric stat as an int64 id (a float truncated, as the fast path does), else `default`."""
    if isinstance(value, float):
        value = int(value) if math.isfinite(value) else None
    return value if isinstance(value, int) and -(2**63) <= value < 2**63 else default


class _Columns:
    """Growing Python lists for one device's events, turned into arrays once."""

    def __init__(self):
        self.start, self.duration, self.kind, self.stream, self.correlation = [], [], [], [], []
        self.name_id, self.config_id, self.op_id, self.copy_direction, self.copy_id = [], [], [], [], []
        self.program_id, self.tf_signature_id = [], []


class _Interner:
    def __init__(self):
        self.index, self.values = {}, []

    def get(self, value: object) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.values)
            self.values.append(value)
        return found


def build_gpu_device(plane: Any, ordinal: int, origin_ns: int) -> GpuDevice:
    """GpuDevice from a decoded GPU plane; times are ps relative to `origin_ns`."""
    names = stat_names(plane)
    wanted = ids_named(names, _DEVICE_STATS)
    step_ids = ids_named(names, _STEP_STATS)
    event_kinds: dict[int, tuple[ActivityKind | None, CopyDirection, int]] = {}
    cols = _Columns()
    name_table, config_table, op_table, copy_table = _Interner(), _Interner(), _Interner(), _Interner()
    signature_table = _Interner()
    config_cache: dict[object, int] = {}
    copy_cache: dict[object, int] = {}
    markers = []
    for line in plane.lines:
        if line.id == STEPS_LINE_ID or (is_derived_line(line.id) and line.name == "Steps"):
            markers.extend(_step_markers(plane, line, step_ids, names, origin_ns))
            continue
        if is_derived_line(line.id) or line.name in _SKIPPED_LINE_NAMES:
            continue
        base_ps = (line.timestamp_ns - origin_ns) * 1000
        stream = line.id
        for event in line.events:
            duration = event.duration_ps
            if duration <= 0:
                continue
            meta_id = event.metadata_id
            kind_info = event_kinds.get(meta_id)
            if kind_info is None:
                name = plane.event_metadata[meta_id].name if meta_id in plane.event_metadata else ""
                kind, direction = classify_event_name(name)
                kind_info = event_kinds[meta_id] = (kind, direction, name_table.get(name))
            kind, direction, name_id = kind_info
            if kind is None:
                continue
            config_id: int | None
            copy_id: int | None
            correlation, config_id, op_id, copy_id, program = -1, -1, -1, -1, -1
            tf_op = hlo_op = annotation = shape = None
            occupancy = None
            found = {}
            for stat in event.stats:
                key = wanted.get(stat.metadata_id)
                if key is not None:
                    found[key] = stat
            if "memcpy_details" in found and kind == ActivityKind.KERNEL:
                kind, direction = reclassified_copy(kind, direction, stat_value(found["memcpy_details"], names))
            elif "memset_details" in found and kind == ActivityKind.KERNEL:
                kind = ActivityKind.MEMSET
            for stat in event.stats:
                key = wanted.get(stat.metadata_id)
                if key is None:
                    continue
                if key == "correlation_id":
                    value = stat_value(stat, names)
                    correlation = _int64_or(value, -1)
                elif key == "kernel_details" and kind == ActivityKind.KERNEL:
                    text = stat_value(stat, names)
                    config_id = config_cache.get(text)
                    if config_id is None:
                        config_id = config_cache[text] = config_table.get(parse_kernel_details(text or ""))
                elif key == "memcpy_details" and kind == ActivityKind.MEMCPY:
                    text = stat_value(stat, names)
                    copy_id = copy_cache.get(text)
                    if copy_id is None:
                        copy_id = copy_cache[text] = copy_table.get(parse_copy_details(text or ""))
                elif key == "tf_op":
                    tf_op = stat_value(stat, names)
                elif key == "hlo_op":
                    hlo_op = stat_value(stat, names)
                elif key == "name":
                    pass  # JAX's framework op name: the op column keeps the HLO instruction the roofline joins on
                elif key == "theoretical_occupancy_pct":
                    occupancy = stat_value(stat, names)
                elif key == "annotation":
                    annotation = stat_value(stat, names)
                elif key == "shape":
                    shape = stat_value(stat, names)
                elif key == "program_id":
                    value = stat_value(stat, names)
                    program = (
                        value
                        if isinstance(value, int)
                        and stat.WhichOneof("value") != "ref_value"
                        and -(2**63) <= value < 2**63
                        else -1
                    )
            if occupancy is not None and config_id >= 0:
                config = config_table.values[config_id]
                if config.occupancy_pct is None and isinstance(occupancy, (int, float)) and math.isfinite(occupancy):
                    config_id = config_table.get(replace(config, occupancy_pct=float(occupancy)))
            if hlo_op:
                op_id = op_table.get(str(hlo_op))  # the instruction: the roofline joins kernels to the HLO by it
            elif tf_op:
                op_id = op_table.get(op_name_from_tf_op(str(tf_op)))
            cols.start.append(base_ps + event.offset_ps)
            cols.duration.append(duration)
            cols.kind.append(kind)
            cols.stream.append(stream)
            cols.correlation.append(correlation)
            cols.name_id.append(name_id)
            cols.config_id.append(config_id)
            cols.op_id.append(op_id)
            cols.copy_direction.append(direction)
            cols.copy_id.append(copy_id)
            cols.program_id.append(program)
            signature = tf_signature(tf_op, annotation, shape) if kind == ActivityKind.KERNEL else None
            cols.tf_signature_id.append(signature_table.get(signature) if signature else -1)
    activity = _to_activity(cols, name_table, config_table, op_table, copy_table, signature_table)
    return GpuDevice(
        ordinal=ordinal,
        name=plane.name,
        capabilities=capabilities_from_stats(plane_stats(plane, names), activity.names),
        activity=activity,
        step_markers=tuple(sorted(markers, key=lambda m: m.start_ps)),
    )


def _step_markers(plane, line, step_ids, names, origin_ns):
    base_ps = (line.timestamp_ns - origin_ns) * 1000
    markers = []
    for event in line.events:
        stats = {step_ids[s.metadata_id]: stat_value(s, names) for s in event.stats if s.metadata_id in step_ids}
        group = _int64_or(stats.get("group_id"), None)
        if group is None:
            continue
        start = base_ps + event.offset_ps
        duration = event.duration_ps
        if isinstance(stats.get("device_offset_ps"), int):
            start = base_ps + stats["device_offset_ps"]
        if isinstance(stats.get("device_duration_ps"), int):
            duration = stats["device_duration_ps"]
        name = plane.event_metadata[event.metadata_id].name if event.metadata_id in plane.event_metadata else ""
        markers.append(
            StepMarker(
                name=str(stats.get("step_name") or name or group),
                start_ps=start,
                end_ps=start + duration,
                source="device",
                group_id=group,
            )
        )
    return markers


def _to_activity(cols, name_table, config_table, op_table, copy_table, signature_table):
    start = np.asarray(cols.start, dtype=np.int64)
    order = np.argsort(start, kind="stable")

    def column(values: list, dtype: type) -> np.ndarray:
        return np.asarray(values, dtype=dtype)[order]

    return DeviceActivity(
        start_ps=start[order],
        duration_ps=column(cols.duration, np.int64),
        kind=column(cols.kind, np.int8),
        stream_id=column(cols.stream, np.int64),
        correlation_id=column(cols.correlation, np.int64),
        name_id=column(cols.name_id, np.int32),
        config_id=column(cols.config_id, np.int32),
        op_id=column(cols.op_id, np.int32),
        copy_direction=column(cols.copy_direction, np.int8),
        copy_id=column(cols.copy_id, np.int32),
        names=tuple(name_table.values),
        configs=tuple(config_table.values),
        op_names=tuple(op_table.values),
        copies=tuple(copy_table.values),
        program_id=column(cols.program_id, np.int64),
        tf_signature_id=column(cols.tf_signature_id, np.int32),
        tf_signatures=tuple(signature_table.values),
    )
