"""Analyses for a long-running server (the TensorBoard plugin): off the caller's thread, cached per file version,
deduplicated while in flight, with progress. Pure Python; it never imports TensorBoard.

A host file is analyzed once per version, keyed by (path, size, mtime_ns): concurrent requests share one
Future, later ones are answered from the cache (a corrupt file stays an error until it changes). At most
`max_entries` finished host reports are kept, least recently used dropped first; work in flight is never
dropped. Reports are stored as JSON text and parsed per request, so callers may modify what they get.
"""

import json
import logging
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.fanout import HostOutcome, analyze_host, local_pool
from tb_gpu_advisor.report.run_report import assemble_run_report

logger = logging.getLogger(__name__)

_MODEL_SHARE = 0.9  # progress reached when the model is built; the analyses take the rest


class _Task:
    """One host file version: its Future (of a HostOutcome whose report is JSON text) and its progress."""

    def __init__(self, size):
        self.size = size or 0
        self.future = None
        self.started = None
        self.finished = None
        self.progress = 0.0

    def state(self):
        if self.future is not None and self.future.done():
            return "error" if self.future.cancelled() or self.future.result().report is None else "done"
        return "running" if self.started is not None else "pending"

    def error(self):
        if self.future.cancelled():
            return "analysis cancelled (the service shut down)"
        return self.future.result().error


class AnalysisService:
    """HostReports and run reports computed on `max_workers` threads (or fresh processes), cached and shared.

    processes=True runs each analysis in a new process, so the server's memory returns to where it was after
    every analysis; progress is then only known per host as 0 or 1.
    """

    def __init__(self, max_entries=64, max_workers=2, max_bytes=DEFAULT_MAX_FILE_BYTES, processes=False):
        self._max_entries = max(1, int(max_entries))
        self._max_bytes = max_bytes
        self._processes = processes
        self._threads = ThreadPoolExecutor(max_workers=max(1, int(max_workers)),
                                           thread_name_prefix="gpu-advisor-analysis")
        self._lock = threading.Lock()
        self._tasks = OrderedDict()  # (path, size, mtime_ns) -> _Task, least recently used first

    @staticmethod
    def key(host_file):
        """(path, size, mtime_ns) of a host file; size and mtime are None when it cannot be read."""
        path = os.path.abspath(host_file.path)
        try:
            stat = os.stat(path)
        except OSError:
            return path, None, None
        return path, stat.st_size, stat.st_mtime_ns

    def submit_host(self, host_file):
        """Future of the HostOutcome (fanout.HostOutcome, its report as JSON text) of a discovery.HostFile."""
        key = self.key(host_file)
        with self._lock:
            task = self._tasks.get(key)
            if task is not None:
                self._tasks.move_to_end(key)
                return task.future
            task = self._tasks[key] = _Task(key[1])
            task.future = self._threads.submit(self._analyze, task, host_file)
            self._evict()
        return task.future

    def submit(self, run, host_files):
        """Future of the run report (report.run_report's shape) of `host_files`; never blocks."""
        host_futures = [self.submit_host(host_file) for host_file in host_files]
        result = Future()
        result.set_running_or_notify_cancel()
        remaining = [len(host_futures)]
        counter = threading.Lock()

        def one_done(_):
            with counter:
                remaining[0] -= 1
                if remaining[0]:
                    return
            try:
                result.set_result(self._assemble(run, host_files, host_futures))
            except Exception as err:  # never leave a caller waiting forever
                result.set_exception(err)

        for future in host_futures:
            future.add_done_callback(one_done)
        if not host_futures:
            result.set_result(assemble_run_report(run, []))
        return result

    def get_report(self, run, host_files, timeout=None):
        """The run report; TimeoutError if it is not ready within `timeout` seconds (it keeps computing)."""
        return self.submit(run, host_files).result(timeout)

    def get_host_report(self, host_file, timeout=None):
        """The HostReport dict of one file; raises ProfileError for a bad file."""
        outcome = self.submit_host(host_file).result(timeout)
        if outcome.report is None:
            raise ProfileError(outcome.error_file, outcome.error)
        return json.loads(outcome.report)

    def host_status(self, host_file):
        """{"state": "idle"|"pending"|"running"|"done"|"error", "progress": 0..1, "error", "elapsed_s"}."""
        with self._lock:
            task = self._tasks.get(self.key(host_file))
        if task is None:
            return {"state": "idle", "progress": 0.0, "error": None, "elapsed_s": None}
        state = task.state()
        error = task.error() if state == "error" else None
        end = task.finished if task.finished is not None else time.monotonic()
        return {"state": state, "progress": 1.0 if state in ("done", "error") else round(task.progress, 3),
                "error": error, "elapsed_s": round(end - task.started, 3) if task.started is not None else None}

    def status(self, run, host_files):
        """The run's state over its hosts ("error" only if every host failed), progress weighted by file size,
        and each host's status."""
        hosts = [dict(self.host_status(host_file), host=host_file.host) for host_file in host_files]
        sizes = [max(1, self.key(host_file)[1] or 0) for host_file in host_files]
        states = {host["state"] for host in hosts}
        if not hosts or states == {"idle"}:
            state = "idle"
        elif states <= {"done", "error"}:
            state = "error" if states == {"error"} else "done"
        elif states <= {"pending", "idle"}:
            state = "pending"
        else:
            state = "running"
        progress = sum(h["progress"] * s for h, s in zip(hosts, sizes)) / sum(sizes) if hosts else 0.0
        return {"run": run, "state": state, "progress": round(progress, 3), "hosts": hosts}

    def shutdown(self, wait=False):
        self._threads.shutdown(wait=wait, cancel_futures=True)

    def _analyze(self, task, host_file):
        task.started = time.monotonic()

        def progress(done, total):
            task.progress = _MODEL_SHARE * done / total if total else 0.0

        try:
            if self._processes:
                with local_pool(1) as pool:
                    outcome = pool.submit(analyze_host, host_file.host, host_file.path, self._max_bytes).result()
            else:
                outcome = analyze_host(host_file.host, host_file.path, self._max_bytes, progress=progress)
        except Exception as err:  # a bug of ours must not take the server down: the file gets an error entry
            logger.exception("analysis of %s failed", host_file.path)
            outcome = HostOutcome(host_file.host, host_file.path, None, f"internal error: {type(err).__name__}: "
                                  f"{err}", host_file.path)
        task.finished = time.monotonic()
        task.progress = 1.0
        report = None if outcome.report is None else json.dumps(outcome.report, allow_nan=False)
        return HostOutcome(outcome.host, outcome.path, report, outcome.error, outcome.error_file)

    def _assemble(self, run, host_files, host_futures):
        outcomes = []
        for host_file, future in zip(host_files, host_futures):
            outcome = future.result()
            report = None if outcome.report is None else json.loads(outcome.report)
            if report is not None:
                report["host"] = host_file.host  # the same file may be a different host name in another run
            outcomes.append(HostOutcome(host_file.host, outcome.path, report, outcome.error, outcome.error_file))
        return assemble_run_report(run, outcomes)

    def _evict(self):
        """Drops the least recently used finished entries beyond max_entries (called with the lock held)."""
        excess = len(self._tasks) - self._max_entries
        for key in list(self._tasks):
            if excess <= 0:
                break
            if self._tasks[key].future.done():
                del self._tasks[key]
                excess -= 1
