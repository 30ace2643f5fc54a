"""XSpace -> TraceModel: the only module that knows which planes hold what."""

import os
import re

from tb_gpu_advisor.model.device import build_gpu_device
from tb_gpu_advisor.model.host import _HostCollector
from tb_gpu_advisor.model.trace import TraceModel
from tb_gpu_advisor.xplane.reader import read_space
from tb_gpu_advisor.xplane.stats import plane_stats
from tb_gpu_advisor.xplane import schema

_GPU_PLANE = re.compile(r"^/device:GPU:(\d+)$")
_HOST_PLANES = ("/host:CPU", "/host:CUPTI")
_ENV_PLANES = ("/host:metadata", "Task Environment")
# Line bases above this are wall-clock nanoseconds, not offsets from the profile start.
_WALL_CLOCK_NS = 10**15


def host_name_of(path):
    base = os.path.basename(str(path))
    return base[: -len(".xplane.pb")] if base.endswith(".xplane.pb") else base


def load_model(path, max_bytes=None):
    """Reads and models one `.xplane.pb` file; raises ProfileError for bad input."""
    kwargs = {} if max_bytes is None else {"max_bytes": max_bytes}
    return build_model(read_space(path, **kwargs))


def build_model(space):
    """TraceModel from a LazySpace, decoding only the GPU, host and metadata planes."""
    origin_ns = _origin_ns(space)
    gpus = []
    host = _HostCollector()
    environment = {}
    has_host = False
    for plane in space.planes:
        match = _GPU_PLANE.match(plane.name)
        if match:
            gpus.append(build_gpu_device(plane.decode(space.path), int(match.group(1)), origin_ns))
        elif plane.name in _HOST_PLANES:
            has_host = True
            host.add_plane(plane.decode(space.path), origin_ns)
        elif plane.name in _ENV_PLANES:
            for key, value in plane_stats(plane.decode(space.path)).items():
                if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                    environment[key] = value
    host_activity, markers = host.result()
    gpus.sort(key=lambda gpu: gpu.ordinal)
    pre_grouped = any(gpu.step_markers for gpu in gpus)
    return TraceModel(
        path=space.path,
        host=host_name_of(space.path),
        gpus=tuple(gpus),
        host_activity=host_activity,
        host_step_markers=markers,
        profile_span_ps=_span(gpus, host_activity),
        trace_errors=space.errors,
        trace_warnings=space.warnings,
        environment=environment,
        format="pre-grouped" if pre_grouped else "current",
        has_host_plane=has_host,
    )


def _origin_ns(space):
    """0 for normalized traces; otherwise the first wall-clock line base, so ps values fit in int64."""
    for plane in space.planes:
        if _GPU_PLANE.match(plane.name) or plane.name in _HOST_PLANES:
            shell = schema.XPlaneShell.FromString(plane.raw)
            for raw_line in shell.lines:
                base = schema.XLineHeader.FromString(raw_line).timestamp_ns
                if base:
                    return base if base > _WALL_CLOCK_NS else 0
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
