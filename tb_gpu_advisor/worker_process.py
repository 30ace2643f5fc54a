"""The analysis worker process: runs the jobs its parent sends, one at a time, under a memory limit, and answers
with the result, a one-line error, or progress messages; never outlives its parent.

Messages from the parent: (fn, args, environment, alarm_s), or None to stop. Answers: ("progress", done, total),
("done", result), ("profile_error", path, problem), ("memory",) or ("internal", summary, traceback text).
"""

import os
import signal
import threading
import time
import traceback

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.readers.progress import reporting_progress

PROGRESS_EVERY_S = 0.2
PARENT_CHECK_S = 2.0


def resident_bytes():
    """This process's address-space size in bytes (Linux), else None."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def limit_memory(budget_bytes):
    """Caps this process's address space at what it uses now plus `budget_bytes` (where the platform allows)."""
    if not budget_bytes:
        return
    try:
        import resource
    except ImportError:  # not POSIX: no limit
        return
    baseline = resident_bytes() or 0
    limit = baseline + int(budget_bytes)
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError, AttributeError):
        pass  # the platform does not enforce it (macOS): the time budget still applies


def _watch_parent(parent_pid):
    """Exits this process once the server is gone (a job stuck in C code is ended by its alarm instead)."""
    while True:
        time.sleep(PARENT_CHECK_S)
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except OSError:
            pass


def _progress_sender(connection):
    last = [0.0]

    def send(done, total):
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S or done >= total:
            last[0] = now
            connection.send(("progress", done, total))

    return send


def _apply_environment(environment):
    if environment is not None and environment != dict(os.environ):
        os.environ.clear()
        os.environ.update(environment)


def _run(connection, fn, args):
    try:
        with reporting_progress(_progress_sender(connection)):
            return ("done", fn(*args))
    except ProfileError as err:
        return ("profile_error", err.path, err.problem)
    except MemoryError:
        return ("memory",)
    except BaseException as err:  # a bug of ours: the parent logs it and reports it as this file's error
        return ("internal", f"{type(err).__name__}: {err}"[:500], traceback.format_exc())


def worker_main(connection, memory_budget_bytes, parent_pid):
    """The worker's loop; returns when the parent says stop or goes away, or after a job ran out of memory (the
    parent starts a fresh worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # the alarm ends a job stuck where Python cannot interrupt it
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    limit_memory(memory_budget_bytes)
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        fn, args, environment, alarm_s = message
        _apply_environment(environment)
        if alarm_s:
            signal.setitimer(signal.ITIMER_REAL, alarm_s)
        try:
            answer = _run(connection, fn, args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            connection.send(answer)
        except MemoryError:
            return
        except Exception as err:  # a result that cannot be pickled: a bug of ours
            connection.send(("internal", f"cannot return the result: {type(err).__name__}: {err}"[:500], ""))
        if answer[0] == "memory":
            return
