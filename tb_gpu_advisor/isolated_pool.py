"""Analyses in worker processes, each with a time and a memory budget: the server's threads only wait on pipes.

A FairQueue orders the jobs (smallest first); `workers` slots take any job, one express slot only small ones,
and `spare` slots open only while every other slot has held its job longer than SLOW_S, so a few stuck files
never stall every analysis. A job over its time budget has its process killed (and replaced); a job over its
memory budget fails in its process (RLIMIT_AS), which is replaced too. Either is reported as a ProfileError
naming the file and the budget.
"""

import logging
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Future

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.scheduling import FairQueue

logger = logging.getLogger(__name__)

SLOW_S = 1.0  # a job held longer than this lets a spare slot open
ALARM_GRACE_S = 10.0  # the worker ends itself this long after the deadline, should its parent be unable to
STOP_WAIT_S = 2.0
_PRELOAD = ["tb_gpu_advisor.worker_process", "tb_gpu_advisor.worker_jobs"]
_context = None


def process_context():
    """forkserver where the platform has it (workers start in milliseconds from a clean, preloaded process, never
    forked from the threaded server), else spawn."""
    global _context
    if _context is None:
        if "forkserver" in multiprocessing.get_all_start_methods():
            _context = multiprocessing.get_context("forkserver")
            _context.set_forkserver_preload(_PRELOAD)
        else:
            _context = multiprocessing.get_context("spawn")
    return _context


class AnalysisCancelled(ProfileError):
    """An analysis stopped because the server is stopping: not a property of the file (never stored)."""

    def __init__(self, path):
        super().__init__(path, "cancelled: the server is stopping")


class Budgets:
    """The limits of one analysis: seconds of wall time and bytes of memory (None: unlimited), and how the
    flags that set them are spelled (for the error line)."""

    def __init__(
        self,
        time_s=None,
        memory_bytes=None,
        time_flag="--gpu_advisor_time_budget_s",
        memory_flag="--gpu_advisor_memory_budget_mb",
    ):
        self.time_s = time_s
        self.memory_bytes = memory_bytes
        self.time_flag = time_flag
        self.memory_flag = memory_flag

    def over_time(self):
        return f"over the time budget: analysis stopped after {self.time_s:g} s (raise {self.time_flag})"

    def over_memory(self):
        return (
            f"over the memory budget: analysis needed more than {self.memory_bytes / 2**20:g} MB "
            f"(raise {self.memory_flag})"
        )


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, memory_bytes):
        from tb_gpu_advisor.worker_process import worker_main

        context = process_context()
        self.connection, child = context.Pipe(duplex=True)
        self.process = context.Process(
            target=worker_main, args=(child, memory_bytes, os.getpid()), daemon=True, name="gpu-advisor-worker"
        )
        self.process.start()
        child.close()

    def stop(self, kill=False):
        if kill:
            self.kill()
            return
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.process.join(STOP_WAIT_S)
        if self.process.is_alive():
            self.kill()
        self.connection.close()

    def kill(self):
        try:
            self.process.kill()
        except (OSError, ValueError, AttributeError):
            pass
        self.process.join(STOP_WAIT_S)
        self.connection.close()

    def exit_signal(self):
        self.process.join(STOP_WAIT_S)
        code = self.process.exitcode
        return -code if code is not None and code < 0 else None


class _Slot:
    def __init__(self, kind):
        self.kind = kind  # "general", "express" or "spare"
        self.worker = None
        self.busy_since = None


class _Job:
    """What a slot runs: fn(*args) in a worker; `label` names the file in errors; `on_progress(done, total)`."""

    def __init__(self, fn, args, label, on_progress):
        self.fn, self.args, self.label, self.on_progress = fn, args, label, on_progress


class IsolatedPool:
    """Runs picklable jobs in worker processes under `budgets`; the server's threads never analyze."""

    def __init__(self, workers=2, small_size=0, spare=1, budgets=None, name="gpu-advisor-analysis"):
        self.budgets = budgets or Budgets()
        self._queue = FairQueue(small_size)
        self._slots = (
            [_Slot("general") for _ in range(max(1, int(workers)))]
            + [_Slot("express")]
            + [_Slot("spare") for _ in range(max(0, int(spare)))]
        )
        self._threads = [
            threading.Thread(target=self._serve, args=(slot,), name=f"{name}-{index}", daemon=True)
            for index, slot in enumerate(self._slots)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, size, fn, *args, label="<analysis>", on_progress=None):
        """Future of fn(*args) computed in a worker process; `size` orders the queue. ProfileError(label, ...)
        when the job runs over a budget or its process dies."""
        future = Future()
        self._queue.put(size, future, _Job(fn, args, label, on_progress), ())
        return future

    def pending(self):
        return len(self._queue)

    def shutdown(self, wait=False, cancel_futures=True):
        """Refuses new jobs, cancels the pending ones and stops every worker (a busy one is killed)."""
        self._queue.close(cancel_futures)
        for slot in self._slots:
            worker = slot.worker
            if worker is not None and slot.busy_since is not None:
                try:
                    worker.process.kill()  # its slot's thread sees the pipe close and cancels the job
                except (OSError, ValueError, AttributeError):
                    pass
        if wait:
            for thread in self._threads:
                thread.join()

    def _spare_allowed(self):
        now = time.monotonic()
        return all(
            slot.busy_since is not None and now - slot.busy_since > SLOW_S
            for slot in self._slots
            if slot.kind != "spare"
        )

    def _serve(self, slot):
        allowed = self._spare_allowed if slot.kind == "spare" else None
        try:
            while (item := self._queue.take(slot.kind == "express", allowed, 0.5 if allowed else None)) is not None:
                _, _, future, job, _ = item
                if not future.set_running_or_notify_cancel():
                    continue
                slot.busy_since = time.monotonic()
                try:
                    result = self._execute(slot, job)
                except BaseException as err:  # handed to whoever waits on the future
                    future.set_exception(err)
                else:
                    future.set_result(result)
                finally:
                    with self._queue.ready:
                        slot.busy_since = None
                        self._queue.ready.notify_all()
        finally:
            if slot.worker is not None:
                slot.worker.stop()
                slot.worker = None

    def _execute(self, slot, job):
        if self._queue.closed:
            raise AnalysisCancelled(job.label)
        time_s = self.budgets.time_s
        message = (job.fn, job.args, dict(os.environ), time_s + ALARM_GRACE_S if time_s else None)
        for attempt in (0, 1):  # a worker found dead (killed from outside) is replaced once
            if slot.worker is None:
                slot.worker = _Worker(self.budgets.memory_bytes)
            try:
                slot.worker.connection.send(message)
                break
            except OSError:
                slot.worker.kill()
                slot.worker = None
                if attempt:
                    raise ProfileError(job.label, "cannot start an analysis process") from None
        return self._await(slot, job, time.monotonic() + time_s if time_s else None)

    def _await(self, slot, job, deadline):
        worker = slot.worker
        while True:
            wait = 1.0 if deadline is None else min(1.0, deadline - time.monotonic())
            if wait <= 0:
                slot.worker = None
                worker.kill()
                raise ProfileError(job.label, self.budgets.over_time())
            if not worker.connection.poll(wait):
                if self._queue.closed:
                    slot.worker = None
                    worker.kill()
                    raise AnalysisCancelled(job.label)
                continue
            try:
                answer = worker.connection.recv()
            except (EOFError, OSError):
                slot.worker = None
                problem = self._died(worker)
                if self._queue.closed:
                    raise AnalysisCancelled(job.label) from None
                raise ProfileError(job.label, problem) from None
            if answer[0] == "progress":
                if job.on_progress is not None:
                    job.on_progress(answer[1], answer[2])
                continue
            return self._result(slot, job, answer)

    def _result(self, slot, job, answer):
        kind = answer[0]
        if kind == "done":
            return answer[1]
        if kind == "profile_error":
            raise ProfileError(answer[1], answer[2])
        if kind == "memory":
            slot.worker.stop()
            slot.worker = None
            raise ProfileError(job.label, self.budgets.over_memory())
        logger.error("tb-gpu-advisor: analysis of %s failed\n%s", job.label, answer[2])
        raise ProfileError(job.label, f"internal error: {answer[1]} (please report it)")

    def _died(self, worker):
        """The one-line problem of a worker that stopped in the middle of a job."""
        number = worker.exit_signal()
        worker.kill()
        if number == signal.SIGALRM:
            return self.budgets.over_time()
        name = signal.Signals(number).name if number in signal.valid_signals() else f"exit {worker.process.exitcode}"
        if self.budgets.memory_bytes and number in (signal.SIGKILL, signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS):
            return f"the analysis process was stopped ({name}), likely {self.budgets.over_memory()}"
        return f"the analysis process stopped ({name}) before it finished: the file cannot be analyzed"
