"""Runs analyses off the caller's thread: an LRU cache keyed by path and version, in-flight dedup, status.

A file is analyzed once per version: concurrent requests for it share one Future, later ones get the cached
result (or the cached error: a corrupt file stays corrupt until it changes). Nothing is written to disk.
A run's report (with its `multi_host` view) is assembled from the cached host reports; a running host report's
status carries its progress.
"""

import json
import logging
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

from tb_gpu_advisor.analysis.timeline import DEFAULT_BINS
from tb_gpu_advisor.compare.diff import compare_reports
from tb_gpu_advisor.discovery import version
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.model.build import reporting_progress
from tb_gpu_advisor.pipeline import HostOutcome, analyze_host_file, assemble_run_report, timeline_for_file
from tb_gpu_advisor.remote import is_remote_url

logger = logging.getLogger(__name__)

_REPORT = "report"
_COMPARISON = "comparison"
_MODEL_SHARE = 0.9  # progress reached once the model is built; the analyses take the rest


class _Entry:
    """One computation: its Future, when it started and how far it got (0..1, for host reports)."""

    def __init__(self):
        self.future = None
        self.started = time.monotonic()
        self.progress = 0.0

    def model_progress(self, done_bytes, total_bytes):
        self.progress = _MODEL_SHARE * done_bytes / total_bytes if total_bytes else 0.0


class AnalysisService:
    """Computes HostReports (and timelines, comparisons) on a small executor, cached and deduplicated per file
    version."""

    def __init__(self, max_entries=32, max_workers=1, max_bytes=None):
        self._max_entries = max(1, int(max_entries))
        self._max_bytes = max_bytes
        self._executor = ThreadPoolExecutor(max_workers=max(1, int(max_workers)),
                                            thread_name_prefix="gpu-advisor-analysis")
        self._lock = threading.RLock()  # reentrant: a comparison's start() submits its two reports
        # (kind, path, discovery.version), or (comparison, report key, report key) -> _Entry, least recently used first
        self._entries = OrderedDict()

    def submit(self, run, host_file):
        """Future of the HostReport dict of `host_file` (a profile_files.HostFile) of run `run`."""
        del run  # the report does not depend on the run id; kept so callers need not care
        return self._submit(_REPORT, host_file, self._report_job)

    def get_host_report(self, run, host_file, timeout=None):
        """The HostReport dict; raises ProfileError for bad input, TimeoutError if not done in `timeout` s."""
        return self.submit(run, host_file).result(timeout)

    def submit_run(self, run, host_files):
        """Future of the run report of `host_files` (report.run_report's shape: hosts, errors, and `multi_host`
        for two hosts or more), assembled from the cached host reports; never blocks."""
        host_files = list(host_files)
        futures = [self.submit(run, host_file) for host_file in host_files]
        result = Future()
        result.set_running_or_notify_cancel()
        remaining = [len(futures)]
        counter = threading.Lock()

        def one_done(_):
            with counter:
                remaining[0] -= 1
                if remaining[0]:
                    return
            try:
                result.set_result(_run_report(run, host_files, futures))
            except Exception as err:  # never leave a caller waiting forever
                result.set_exception(err)

        for future in futures:
            future.add_done_callback(one_done)
        if not futures:
            result.set_result(assemble_run_report(run, []))
        return result

    def get_report(self, run, host_files, timeout=None):
        """The run report (a fresh copy each call); TimeoutError if not done in `timeout` s (it keeps going)."""
        return self.submit_run(run, host_files).result(timeout)

    def run_status(self, run, host_files):
        """{"run", "state", "progress", "hosts": [status() with "host"]}: "running" while any host is, "error"
        only when every host failed; progress weighted by file size."""
        hosts = [dict(self.status(host_file), host=host_file.host) for host_file in host_files]
        states = {host["state"] for host in hosts}
        if not hosts or states == {"idle"}:
            state = "idle"
        elif states <= {"done", "error"}:
            state = "error" if states == {"error"} else "done"
        else:
            state = "running"
        sizes = [max(1, _size(host_file.path)) for host_file in host_files]
        done = [1.0 if h["state"] in ("done", "error") else h.get("progress", 0.0) for h in hosts]
        progress = sum(d * s for d, s in zip(done, sizes)) / sum(sizes) if hosts else 0.0
        return {"run": run, "state": state, "progress": round(progress, 3), "hosts": hosts}

    def submit_timeline(self, run, host_file, bins=DEFAULT_BINS):
        """Future of the timeline dict (report/timeline_report.py) of `host_file`."""
        del run
        return self._submit(("timeline", int(bins)), host_file, lambda hf: self._timeline_job(hf, bins))

    def get_timeline(self, run, host_file, bins=DEFAULT_BINS, timeout=None):
        return self.submit_timeline(run, host_file, bins).result(timeout)

    def submit_comparison(self, baseline_file, candidate_file):
        """Future of compare_reports(baseline HostReport, candidate HostReport), cached per version of both files.

        The two reports come from submit() (shared with every other request for them); the comparison job is
        queued after them, so even a one-worker executor never waits on work queued behind it.
        """
        try:
            key = self._comparison_key(baseline_file, candidate_file)
        except ProfileError as err:
            return _failed(err)
        return self._cached(key, lambda entry: self._executor.submit(
            self._guarded, self._comparison_job, (self.submit(None, baseline_file),
                                                  self.submit(None, candidate_file)), candidate_file.path))

    def status(self, host_file):
        """{"state": "idle"|"running"|"done"|"error", "error": message or None, "elapsed_s": float or None};
        a running host report adds "progress" (0..1)."""
        try:
            key = self._key(_REPORT, host_file)
        except ProfileError as err:
            return {"state": "error", "error": err.problem, "elapsed_s": None}
        return self._status_of(key)

    def comparison_status(self, baseline_file, candidate_file):
        """status() of the comparison of two files."""
        try:
            key = self._comparison_key(baseline_file, candidate_file)
        except ProfileError as err:
            return {"state": "error", "error": err.problem, "elapsed_s": None}
        return self._status_of(key)

    def _status_of(self, key):
        with self._lock:
            entry = self._entries.get(key)
        if entry is None:
            return {"state": "idle", "error": None, "elapsed_s": None}
        if not entry.future.done():
            running = {"state": "running", "error": None, "elapsed_s": round(time.monotonic() - entry.started, 1)}
            if key[0] == _REPORT:
                running["progress"] = round(entry.progress, 3)
            return running
        error = entry.future.exception()
        if error is not None:
            return {"state": "error", "error": _problem(error), "elapsed_s": None}
        return {"state": "done", "error": None, "elapsed_s": None}

    def shutdown(self, wait=False):
        self._executor.shutdown(wait=wait, cancel_futures=True)

    def _key(self, kind, host_file):
        path = host_file.path
        return (kind, path if is_remote_url(path) else os.path.abspath(path), version(path))

    def _comparison_key(self, baseline_file, candidate_file):
        return (_COMPARISON, self._key(_REPORT, baseline_file), self._key(_REPORT, candidate_file))

    def _submit(self, kind, host_file, job):
        try:
            key = self._key(kind, host_file)
        except ProfileError as err:
            return _failed(err)
        return self._cached(key, lambda entry: self._executor.submit(self._with_progress, entry, job, host_file))

    def _cached(self, key, start):
        """The Future cached under `key`, else the one `start(entry)` returns (called under the lock), now
        cached."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry.future
            entry = _Entry()
            entry.future = start(entry)
            self._entries[key] = entry
            self._evict()
            return entry.future

    def _evict(self):
        """Drops the least recently used finished entries beyond max_entries (never a running one)."""
        excess = len(self._entries) - self._max_entries
        for key in [k for k, e in self._entries.items() if e.future.done()][:max(excess, 0)]:
            del self._entries[key]

    def _guarded(self, job, argument, path):
        try:
            return job(argument)
        except ProfileError:
            raise
        except Exception as err:  # a bug of ours: logged with its traceback, reported as this file's error
            logger.exception("tb-gpu-advisor: analysis of %s failed", path)
            raise ProfileError(path, f"internal error: {type(err).__name__}: {err} (please report it)") from err

    def _with_progress(self, entry, job, host_file):
        with reporting_progress(entry.model_progress):
            return self._guarded(job, host_file, host_file.path)

    def _report_job(self, host_file):
        report = analyze_host_file(host_file.path, max_bytes=self._max_bytes)
        report["host"] = host_file.host
        return report

    def _timeline_job(self, host_file, bins):
        return timeline_for_file(host_file.path, max_bytes=self._max_bytes, bins=bins)

    @staticmethod
    def _comparison_job(reports):
        baseline, candidate = (future.result() for future in reports)  # done: they were queued first
        return compare_reports(baseline, candidate)


def _run_report(run, host_files, futures):
    """The run report from finished host-report futures; each report is a copy, the cache keeps its own."""
    outcomes = []
    for host_file, future in zip(host_files, futures):
        try:
            report = json.loads(json.dumps(future.result()))
        except ProfileError as err:
            outcomes.append(HostOutcome(host_file.host, host_file.path, None, err.problem, err.path))
            continue
        report["host"] = host_file.host
        outcomes.append(HostOutcome(host_file.host, host_file.path, report))
    return assemble_run_report(run, outcomes)


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _failed(error):
    future = Future()
    future.set_exception(error)
    return future


def _problem(error):
    return error.problem if isinstance(error, ProfileError) else f"{type(error).__name__}: {error}"
