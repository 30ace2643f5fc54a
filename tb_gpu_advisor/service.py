"""Runs analyses off the server's threads: an LRU cache bounded in bytes, keyed by path and version, in-flight
dedup, status.

A file is analyzed once per version: concurrent requests for it share one Future, later ones get the cached
result (or the cached error: a corrupt file stays corrupt until it changes). Nothing is written to disk.
Analyses run in worker processes (isolated_pool.IsolatedPool: smallest file first, an express slot for small
files, a time and a memory budget per file), so a small run is answered while a large or hostile one is
analyzed, and no analysis holds the server's GIL. Timelines of any bin count are binned from a summary kept beside the
cached report (analysis.timeline.TimelineSource), never by reading the file again; comparisons and run reports
are assembled from the cached host reports. A running host report's status carries its progress.
"""

import logging
import os
import threading
import time
from collections import OrderedDict

from tb_gpu_advisor.analysis.timeline import DEFAULT_BINS
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor import worker_jobs
from tb_gpu_advisor.constants import (
    DEFAULT_CACHE_BYTES,
    DEFAULT_CACHE_ENTRIES,
    DEFAULT_MEMORY_BUDGET_BYTES,
    DEFAULT_TIME_BUDGET_S,
)
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.files.discovery import version
from tb_gpu_advisor.isolated_pool import AnalysisCancelled, Budgets, IsolatedPool
from tb_gpu_advisor.readers.progress import reporting_progress
from tb_gpu_advisor.pipeline import analyze_host_file, timeline_for_file
from tb_gpu_advisor.remote import is_remote_url
from tb_gpu_advisor.report.timeline_report import source_timeline_report
from tb_gpu_advisor.scheduling import FairPool
from tb_gpu_advisor.worker_jobs import json_size
from tb_gpu_advisor.service_futures import _all, _done, _failed, _flatten, _then

logger = logging.getLogger(__name__)

_REPORT = "report"
_COMPARISON = "comparison"
_MODEL_SHARE = 0.9  # progress reached once the model is built; the analyses take the rest
DEFAULT_WORKERS = 2  # processes for any file; one more takes only files up to SMALL_FILE_BYTES
SMALL_FILE_BYTES = 16 * 2**20
_ERROR_BYTES = 256  # what a cached error is counted as


class _Entry:
    """One computation: its Future, when it started and how far it got (0..1, for host reports)."""

    def __init__(self):
        self.future = None
        self.started = time.monotonic()
        self.progress = 0.0
        self.timeline = None  # the TimelineSource of a host report's model, once built
        self.rank = None  # the RankProfile of a host report's rank in a distributed job, once analyzed
        self.size = 0  # bytes the finished result holds (its JSON length), counted against the cache's bound

    @classmethod
    def failed(cls, error):
        entry = cls()
        entry.future = _failed(error)
        return entry

    def model_progress(self, done_bytes, total_bytes):
        self.progress = _MODEL_SHARE * done_bytes / total_bytes if total_bytes else 0.0


class AnalysisService:
    """Computes HostReports (and timelines, comparisons) in worker processes, cached and deduplicated per file
    version.

    cache_bytes bounds the finished results kept (their JSON length; the most recently used one always stays),
    max_entries their count. time_budget_s and memory_budget_bytes bound each file's analysis (None: no bound).
    isolated=False runs analyses on threads of this process instead (no budgets; for embedding and tests);
    report_job replaces worker_jobs.host_report (a picklable function, for tests of the isolation).
    """

    def __init__(
        self,
        max_entries=DEFAULT_CACHE_ENTRIES,
        max_workers=DEFAULT_WORKERS,
        max_bytes=None,
        small_bytes=SMALL_FILE_BYTES,
        cache_bytes=DEFAULT_CACHE_BYTES,
        time_budget_s=DEFAULT_TIME_BUDGET_S,
        memory_budget_bytes=DEFAULT_MEMORY_BUDGET_BYTES,
        isolated=True,
        report_job=None,
        budget_flags=None,
    ):
        self._max_entries = max(1, int(max_entries))
        self._cache_bytes = cache_bytes
        self._max_bytes = max_bytes
        self._isolated = isolated
        self._report_job_fn = report_job or worker_jobs.host_report
        if isolated:
            self._pool = IsolatedPool(
                workers=max_workers,
                small_size=small_bytes,
                budgets=Budgets(time_budget_s, memory_budget_bytes, **(budget_flags or {})),
            )
        else:
            self._pool = FairPool(workers=max_workers, small_size=small_bytes, name="gpu-advisor-analysis")
        self._lock = threading.RLock()  # reentrant: a comparison's start() submits its two reports
        # (kind, path, discovery.version), or (comparison, report key, report key) -> _Entry, least recently used first
        self._entries = OrderedDict()

    def submit(self, run, host_file):
        """Future of the HostReport dict of `host_file` (a files.runs.HostFile) of run `run`."""
        del run  # the report does not depend on the run id; kept so callers need not care
        try:
            return self._entry(_REPORT, host_file).future
        except ProfileError as err:
            return _failed(err)

    def submit_timeline(self, run, host_file, bins=DEFAULT_BINS):
        """Future of the timeline dict (report/timeline_report.py) of `host_file`, binned from the summary kept
        beside its cached report: a new bin count costs no analysis."""
        del run
        try:
            entry = self._entry(_REPORT, host_file)
        except ProfileError as err:
            return _failed(err)
        return _flatten(_then(entry.future, lambda _: self._timeline_of(entry, host_file, bins)))

    def submit_rank(self, run, host_file):
        """Future of the RankProfile (analysis.ranks.profile) of `host_file`, kept beside its cached report; None
        when the host is not a rank of a distributed job."""
        del run
        try:
            entry = self._entry(_REPORT, host_file)
        except ProfileError as err:
            return _failed(err)
        return _then(entry.future, lambda _: entry.rank)

    def submit_comparison(self, baseline_file, candidate_file):
        """Future of compare_reports(baseline HostReport, candidate HostReport), cached per version of both files;
        computed when both reports (shared with every other request for them) are done, in a worker process
        (isolated) or on the thread that finished the second report (isolated=False)."""
        try:
            key = self._comparison_key(baseline_file, candidate_file)
        except ProfileError as err:
            return _failed(err)

        def start(entry):
            reports = [self.submit(None, baseline_file), self.submit(None, candidate_file)]

            def compare(_):
                if self._isolated:
                    baseline, candidate = (future.result() for future in reports)
                    return self._pool.submit(0, worker_jobs.comparison, baseline, candidate, label=candidate_file.path)
                result = self._guarded(self._comparison_job, reports, candidate_file.path)
                return _done((result, json_size(result)))

            return _then(_flatten(_then(_all(reports), compare)), lambda done: self._unpack_sized(entry, done))

        return self._cached(key, start).future

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
        self._pool.shutdown(wait=wait, cancel_futures=True)

    def _key(self, kind, host_file):
        if getattr(host_file, "problem", None):
            raise ProfileError(host_file.path, host_file.problem)
        path = host_file.path
        if is_remote_url(path):  # the listing's version (refreshed every few seconds) spares a request per call
            return (kind, path, getattr(host_file, "version", None) or version(path))
        return (kind, os.path.abspath(path), version(path))

    def _comparison_key(self, baseline_file, candidate_file):
        return (_COMPARISON, self._key(_REPORT, baseline_file), self._key(_REPORT, candidate_file))

    def _entry(self, kind, host_file):
        """The cache entry of the report of this version of `host_file`, queued by file size if new."""
        key = self._key(kind, host_file)
        size = _version_size(key[2])

        def start(entry):
            if self._isolated:
                raw = self._pool.submit(
                    size,
                    self._report_job_fn,
                    host_file.path,
                    host_file.host,
                    self._max_bytes,
                    label=host_file.path,
                    on_progress=entry.model_progress,
                )
            else:
                raw = self._pool.submit(size, self._with_progress, entry, self._report_job, host_file)
            return _then(raw, lambda done: self._unpack(entry, done.result()))

        return self._cached(key, start)

    @staticmethod
    def _unpack_sized(entry, done):
        result, entry.size = done.result()
        return result

    @staticmethod
    def _unpack(entry, outcome):
        report, entry.timeline, entry.size, *rank = outcome  # a test's report_job may leave the rank out
        entry.rank = rank[0] if rank else None
        return report

    def _cached(self, key, start):
        """The entry cached under `key`, else a new one whose Future `start(entry)` returns (called under the
        lock), now cached."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
            entry = _Entry()
            try:
                entry.future = start(entry)
            except RuntimeError:  # the pool was shut down: the server is stopping
                return _Entry.failed(AnalysisCancelled(str(key[1])))
            self._entries[key] = entry
            self._evict()
        entry.future.add_done_callback(lambda _: self._evict())
        return entry

    def _evict(self):
        """Drops the least recently used finished entries while more than max_entries are finished or they hold
        more than cache_bytes; the most recently used finished one stays, and running ones (the pool bounds
        how many run) are counted once they finish."""
        with self._lock:
            finished = [(key, _held_bytes(entry)) for key, entry in self._entries.items() if entry.future.done()]
            count, held = len(finished), sum(size for _, size in finished)
            for key, size in finished[:-1]:
                if count <= self._max_entries and (self._cache_bytes is None or held <= self._cache_bytes):
                    break
                del self._entries[key]
                count, held = count - 1, held - size

    def cached_bytes(self):
        """Bytes held by the finished results in the cache (as counted for cache_bytes)."""
        with self._lock:
            return sum(_held_bytes(entry) for entry in self._entries.values() if entry.future.done())

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
            return self._guarded(lambda hf: job(entry, hf), host_file, host_file.path)

    def _report_job(self, entry, host_file):
        """In-process (isolated=False) worker_jobs.host_report, through this module's analyze_host_file."""
        del entry
        return worker_jobs.host_report(host_file.path, host_file.host, self._max_bytes, analyze=analyze_host_file)

    def _timeline_of(self, entry, host_file, bins):
        """Future of the timeline: binned from the kept summary, else the file read once more in the pool."""
        if entry.timeline is not None:
            return _done(source_timeline_report(entry.timeline, bins))
        if self._isolated:
            return self._pool.submit(
                0, worker_jobs.timeline, host_file.path, self._max_bytes, bins, label=host_file.path
            )
        return self._pool.submit(
            0,
            self._guarded,
            lambda path: timeline_for_file(path, max_bytes=self._max_bytes, bins=bins),
            host_file.path,
            host_file.path,
        )

    @staticmethod
    def _comparison_job(reports):
        baseline, candidate = (future.result() for future in reports)  # both done
        return compare_reports(baseline, candidate)


def _version_size(file_version):
    """The size in bytes a discovery.version string starts with (local and remote versions alike), else 0."""
    head = str(file_version).split("|", 1)[0]
    return int(head) if head.isdigit() else 0


def _held_bytes(entry):
    """What a finished entry counts against the cache's bound: its result's size, or a small error."""
    if entry.future.cancelled() or entry.future.exception() is not None:
        return _ERROR_BYTES
    return entry.size


def _problem(error):
    return error.problem if isinstance(error, ProfileError) else f"{type(error).__name__}: {error}"
