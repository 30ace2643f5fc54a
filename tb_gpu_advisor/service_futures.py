"""Futures composed without a thread of their own: all of several, one then a function, one flattened, done, failed."""

import threading
from concurrent.futures import Future

from tb_gpu_advisor.isolated_pool import AnalysisCancelled


def _all(futures):
    """A Future done when every one of `futures` is (its result: the list of them); the first error if any."""
    result = Future()
    result.set_running_or_notify_cancel()
    remaining = [len(futures)]
    counter = threading.Lock()

    def one_done(_):
        with counter:
            remaining[0] -= 1
            if remaining[0]:
                return
        errors = [f.exception() for f in futures if not f.cancelled() and f.exception() is not None]
        if errors:
            result.set_exception(errors[0])
        else:
            result.set_result(futures)

    for future in futures:
        future.add_done_callback(one_done)
    return result


def _then(future, fn):
    """A Future of fn(future) once `future` is done; its exception if it failed. fn runs on the thread that
    completes `future` (or this one, if it is done already)."""
    result = Future()
    result.set_running_or_notify_cancel()

    def done(source):
        error = source.exception() if not source.cancelled() else AnalysisCancelled("<analysis>")
        if error is not None:
            result.set_exception(error)
            return
        try:
            result.set_result(fn(source))
        except BaseException as err:  # handed to whoever waits, as an Executor does
            result.set_exception(err)

    future.add_done_callback(done)
    return result


def _done(value):
    future = Future()
    future.set_result(value)
    return future


def _flatten(future):
    """A Future of the result of the Future that `future` resolves to."""
    result = Future()
    result.set_running_or_notify_cancel()

    def inner_done(inner):
        error = inner.exception() if not inner.cancelled() else AnalysisCancelled("<analysis>")
        if error is not None:
            result.set_exception(error)
        else:
            result.set_result(inner.result())

    def outer_done(outer):
        error = outer.exception() if not outer.cancelled() else AnalysisCancelled("<analysis>")
        if error is not None:
            result.set_exception(error)
        else:
            outer.result().add_done_callback(inner_done)

    future.add_done_callback(outer_done)
    return result


def _failed(error):
    future = Future()
    future.set_exception(error)
    return future
