"""What a profile can hold: times within MAX_TIME_PS of its origin; a model outside this bound is a
ProfileError for its file, never a report of nonsense numbers (the plane count is bounded as the file is read:
constants.MAX_PLANES)."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.errors import ProfileError

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import TraceModel


# 2**61 ps is about 26.7 days: further from the profile's origin than any capture runs, and small enough that
# any start plus any duration, and the sum of disjoint intervals within the bound, fit in int64.
MAX_TIME_PS = 2**61


def time_problem(what: str) -> str:
    """The one-line message for a time outside the bound."""
    return (
        f"{what} lies more than {MAX_TIME_PS / 1e12 / 86400:.0f} days from the profile's start: "
        "the file is corrupt or not a profile"
    )


def check_model_times(model: TraceModel) -> None:
    """Raises ProfileError when a start, end or duration of `model` lies outside +-MAX_TIME_PS."""
    for gpu in model.gpus:
        activity = gpu.activity
        _check(model.path, f"an event of {gpu.name}", activity.start_ps, activity.duration_ps)
        _check_markers(model.path, gpu.name, gpu.step_markers)
    host = model.host_activity
    _check(model.path, "a host launch call", host.launch_start_ps, host.launch_duration_ps)
    for name, spans in (
        ("host busy time", host.busy),
        ("an input wait", host.input_waits),
        *((f"a {tag} event", spans) for tag, spans in host.tagged.items()),
    ):
        _check(model.path, name, spans.start_ps, spans.end_ps)
    _check_markers(model.path, "the host", model.host_step_markers)
    for name, (_, total) in host.op_totals.items():
        if abs(total) >= MAX_TIME_PS:
            raise ProfileError(model.path, time_problem(f"the total time of host op {name[:60]!r}"))


def _check(path, what, *arrays):
    for values in arrays:
        if len(values) and max(int(np.max(values)), -int(np.min(values))) >= MAX_TIME_PS:
            raise ProfileError(path, time_problem(what))


def _check_markers(path, where, markers):
    for marker in markers:
        if max(abs(marker.start_ps), abs(marker.end_ps)) >= MAX_TIME_PS:
            raise ProfileError(path, time_problem(f"a step marker of {where}"))
