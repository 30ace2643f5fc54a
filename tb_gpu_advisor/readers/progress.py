"""The progress callback of the analysis running in this thread, for readers whose callers cannot pass one down."""

import contextlib
import contextvars

_PROGRESS = contextvars.ContextVar("tb_gpu_advisor_progress", default=None)


@contextlib.contextmanager
def reporting_progress(callback):
    """Within the block, models built in this thread without a `progress` argument report to `callback`."""
    token = _PROGRESS.set(callback)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def report_progress(done, total):
    """Reports to the callback of `reporting_progress`, if any."""
    callback = _PROGRESS.get()
    if callback is not None:
        callback(done, total)


def current_progress():
    """The callback of the innermost `reporting_progress` block of this thread, else None."""
    return _PROGRESS.get()
