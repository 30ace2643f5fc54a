"""XSpace -> TraceModel: the only module that knows which planes hold what.

GPU and host planes take the fast columnar path (plane_scan, device_columns, host_columns); a plane it does not
vouch for (wire_scan.Unusual) takes the reference per-event path (device, host), which gives the same model.
`reference=True` forces the reference path.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace

from google.protobuf.message import DecodeError

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.files.names import host_name
from tb_gpu_advisor.model.device_limits import checked_gpus
from tb_gpu_advisor.model.limits import check_model_times
from tb_gpu_advisor.model.trace import TraceModel
from tb_gpu_advisor.model.device_identity import identified
from tb_gpu_advisor.model.vendor import shared_arch
from tb_gpu_advisor.readers.progress import Progress, current_progress
from tb_gpu_advisor.readers.xplane.allocators import AllocatorCollector
from tb_gpu_advisor.readers.xplane.device import build_gpu_device
from tb_gpu_advisor.readers.xplane.device_columns import build_gpu_device_from_scan
from tb_gpu_advisor.readers.xplane.host import _HostCollector
from tb_gpu_advisor.readers.xplane.host_columns import host_plane_columns
from tb_gpu_advisor.readers.xplane.plane_scan import scan_plane
from tb_gpu_advisor.readers.xplane.reader import LazySpace
from tb_gpu_advisor.readers.xplane.stats import plane_stats
from tb_gpu_advisor.readers.xplane.wire_scan import WIRE_LEN, Unusual, read_field, scan_line
from tb_gpu_advisor.readers.xplane import schema

logger = logging.getLogger(__name__)
_GPU_PLANE = re.compile(r"^/device:GPU:(\d+)$")
_TPU_PLANE = re.compile(r"^/device:TPU:(\d+)$")
_HOST_PLANES = ("/host:CPU", "/host:CUPTI")
_ENV_PLANES = ("/host:metadata", "Task Environment")
HLO_PROTO_STAT = "Hlo Proto"
PROGRAM_ID_STAT = "program_id"
# Line bases above this are wall-clock nanoseconds, not offsets from the profile start.
_WALL_CLOCK_NS = 10**15


def build_model(space: LazySpace, reference: bool = False, progress: Progress | None = None) -> TraceModel:
    """TraceModel from a LazySpace, decoding only the GPU, host and metadata planes; ProfileError when it
    holds times further out than a profile can (model.limits)."""
    try:
        model = _build_model(space, reference, progress or current_progress())
    except OverflowError:  # a time that does not fit int64 picoseconds, met by the per-event path
        raise ProfileError(
            space.path, "an event time does not fit in 64-bit picoseconds: the file is corrupt or not a profile"
        ) from None
    check_model_times(model)
    return model


def _build_model(space, reference, progress):
    origin_ns = _origin_ns(space, reference)
    gpus = []
    host = _HostCollector()
    allocators = AllocatorCollector()
    environment = {}
    hlo_protos = {}
    has_host = False
    total, done = sum(plane.size for plane in space.planes), 0
    host_planes = [index for index, plane in enumerate(space.planes) if plane.name in _HOST_PLANES]
    host_result = None
    for index, plane in enumerate(space.planes):
        match = _GPU_PLANE.match(plane.name)
        if match:
            gpus.append(_gpu_device(plane, int(match.group(1)), origin_ns, space.path, reference))
        elif plane.name in _HOST_PLANES:
            has_host = True
            _add_host_plane(host, allocators, plane, origin_ns, space.path, reference)
        elif plane.name in _ENV_PLANES:
            decoded = plane.decode(space.path)
            for key, value in plane_stats(decoded).items():
                if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                    environment[key] = value
            hlo_protos.update(_hlo_protos(decoded))
        if host_planes and index == host_planes[-1]:
            host_result = host.result()  # now, so the host's working arrays are freed before the GPUs
        done += plane.size
        if progress is not None:
            progress(done, total)
    host_activity, markers = host_result or host.result()
    gpus, device_warnings = checked_gpus(sorted(gpus, key=lambda gpu: gpu.ordinal))
    gpus = [replace(gpu, capabilities=identified(gpu.capabilities)) for gpu in shared_arch(gpus)]
    pre_grouped = any(gpu.step_markers for gpu in gpus)
    return TraceModel(
        path=space.path,
        host=host_name(space.path),
        gpus=tuple(gpus),
        host_activity=host_activity,
        host_step_markers=markers,
        profile_span_ps=_span(gpus, host_activity),
        trace_errors=space.errors,
        trace_warnings=space.warnings + device_warnings,
        environment=environment,
        format="pre-grouped" if pre_grouped else "current",
        has_host_plane=has_host,
        tpu_count=sum(1 for plane in space.planes if _TPU_PLANE.match(plane.name)),
        hlo_protos=hlo_protos,
        allocators=allocators.result(),
        time_origin_ps=origin_ns * 1000,  # the profiler's clock (0: the trace's times are already on it)
    )


def _hlo_protos(plane):
    """{XLA program id: serialized HloProto} of a metadata plane: one event metadata per module, its id the
    program id the kernels' `program_id` stats name (or, where XLA records it, the metadata's own `program_id`
    stat), its `Hlo Proto` stat the module."""
    names = {key: meta.name for key, meta in plane.stat_metadata.items()}
    found = {}
    for meta_id, meta in plane.event_metadata.items():
        program_id, data = int(meta_id), None
        for stat in meta.stats:
            kind = stat.WhichOneof("value")
            if names.get(stat.metadata_id) == HLO_PROTO_STAT and kind == "bytes_value":
                data = bytes(stat.bytes_value)
            elif names.get(stat.metadata_id) == PROGRAM_ID_STAT and kind in ("int64_value", "uint64_value"):
                program_id = int(getattr(stat, kind))  # newer XLA: the program id is a stat, not the metadata id
        if data is not None:
            found[program_id] = data
    return found


def _gpu_device(plane, ordinal, origin_ns, path, reference):
    if not reference:
        try:
            return build_gpu_device_from_scan(scan_plane(plane.read_bytes()), ordinal, origin_ns)
        except Unusual as why:
            logger.debug("%s: plane %s takes the reference path: %s", path, plane.name, why)
    return build_gpu_device(plane.decode(path), ordinal, origin_ns)


def _add_host_plane(host, allocators, plane, origin_ns, path, reference):
    if not reference:
        try:
            scan = scan_plane(plane.read_bytes())
            columns = host_plane_columns(scan, origin_ns)
            found = AllocatorCollector()
            found.add_scan(scan)
            host.add_columns(columns)
            allocators.merge(found)
            return
        except Unusual as why:
            logger.debug("%s: plane %s takes the reference path: %s", path, plane.name, why)
    decoded = plane.decode(path)
    host.add_plane(decoded, origin_ns)
    allocators.add_plane(decoded)


def _origin_ns(space, reference=False):
    """0 for normalized traces; otherwise the first wall-clock line base, so ps values fit in int64."""
    for plane in space.planes:
        if _GPU_PLANE.match(plane.name) or plane.name in _HOST_PLANES:
            base = _first_line_base(plane, space.path, reference)
            if base:
                return base if base > _WALL_CLOCK_NS else 0
    return 0


def _first_line_base(plane, path, reference):
    """The first non-zero `timestamp_ns` of the plane's lines, or 0."""
    raw = plane.read_bytes()
    if not reference:
        try:
            pos = 0
            while pos < len(raw):
                field, wire, value, pos = read_field(raw, pos, len(raw))
                if field == 3 and wire == WIRE_LEN:
                    base = scan_line(raw, *value).timestamp_ns
                    if base:
                        return base
            return 0
        except Unusual:
            pass
    try:
        for raw_line in schema.XPlaneShell.FromString(raw).lines:
            base = schema.XLineHeader.FromString(raw_line).timestamp_ns
            if base:
                return base
    except (DecodeError, RuntimeError, ValueError):
        raise ProfileError(path, f"plane {plane.name!r} is corrupt and cannot be decoded") from None
    return 0


def _span(gpus, host_activity):
    starts, ends = [], []
    for gpu in gpus:
        if len(gpu.activity):
            starts.append(int(gpu.activity.start_ps[0]))
            ends.append(int(gpu.activity.end_ps.max()))
    if len(host_activity.busy):
        starts.append(int(host_activity.busy.start_ps[0]))
        ends.append(int(host_activity.busy.end_ps[-1]))
    return (min(starts), max(ends)) if starts else (0, 0)
