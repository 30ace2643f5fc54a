"""The progress callback of the analysis running in this thread, for readers whose callers cannot pass one down."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

Progress = Callable[[int, int], None]  # (done bytes, total bytes)

_PROGRESS: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("tb_gpu_advisor_progress", default=None)


@contextlib.contextmanager
def reporting_progress(callback: Progress | None) -> Iterator[None]:
    """Within the block, models built in this thread without a `progress` argument report to `callback`."""
    token = _PROGRESS.set(callback)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def report_progress(done: int, total: int) -> None:
    """Reports to the callback of `reporting_progress`, if any."""
    callback = _PROGRESS.get()
    if callback is not None:
        callback(done, total)


def current_progress() -> Progress | None:
    """The callback of the innermost `reporting_progress` block of this thread, else None."""
    return _PROGRESS.get()
