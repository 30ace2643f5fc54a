"""The overview of every run of a logdir, filled in the background: a scanner thread lists the runs and reads
their stored summaries (answers meanwhile are partial, with the scan's progress), a few analyses run at a time
(so a run a user opens is not queued behind hundreds), and each run's summary is persisted (overview.store)."""

import logging
import os
import threading
import time

from tb_gpu_advisor.files.discovery import version
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.isolated_pool import AnalysisCancelled
from tb_gpu_advisor.overview.rows import run_summary, series_of, with_changes
from tb_gpu_advisor.overview.store import SummaryStore
from tb_gpu_advisor.remote import is_remote_url

logger = logging.getLogger(__name__)

IN_FLIGHT = 2  # overview analyses queued on the shared service at once
RESCAN_S = 2.0  # a new pass over the runs starts at most this often while the overview is asked for
IDLE_S = 30.0  # the scanner stops when nobody asked for the overview for this long
PUBLISH_EVERY = 200  # rows read between two updates of a partial answer


class OverviewService:
    """Rows of the logdir's runs, with their state; analyses of runs without a summary run in the background on
    `analysis` (service.AnalysisService, shared with the other routes: one analysis per file version).

    `list_runs()` gives the ProfileRuns (newest first) the background scanner reads; overview(runs) instead
    reads the given runs on the calling thread before answering.
    """

    def __init__(self, analysis, store=None, in_flight=IN_FLIGHT, list_runs=None, rescan_s=RESCAN_S):
        self._analysis = analysis
        self._store = store or SummaryStore()
        self._limit = max(1, int(in_flight))
        self._list_runs = list_runs
        self._rescan_s = rescan_s
        self._lock = threading.Lock()
        self._pending = []  # (run id, HostFile, path, version) waiting, newest run first
        self._in_flight = {}  # (path, version) -> (run id, HostFile)
        self._rows = None  # the rows of the last complete pass, newest run first
        self._by_run = {}  # run id -> its row in _rows
        self._partial = []  # rows read so far by the first pass
        self._scan = {"done": 0, "total": None}
        self._asked_at = None
        self._scanner = None
        self._closed = threading.Event()
        self._pumping = False
        self._pump_again = False
        self._changed = 0  # bumped whenever a row changes, so an unchanged answer is not rebuilt
        self._built = (None, None)  # (_changed, answer) of the last answer built

    def overview(self, runs=None):
        """{"runs": [row], "total", "done", "errors", "pending", "scanning"}; a row is {run, host, hosts, state:
        done|error|running|queued, progress, error, summary, change}. Never waits for an analysis (missing
        summaries are queued), nor, without `runs`, for the listing: until the first pass over the runs is
        complete, `runs` holds the rows read so far and `scanning` is {"done": k, "total": n or null}."""
        if runs is not None:
            self._pass(runs)
        else:
            self._ensure_scanner()
        return self._answer()

    def close(self):
        """Stops the background scanner."""
        self._closed.set()

    def _answer(self):
        """The answer, rebuilt only when a row changed since the last one; the rows of analyses in flight get
        their current state and progress."""
        with self._lock:
            changed, (built_at, answer) = self._changed, self._built
            flying = dict(self._in_flight.values())
            if built_at != changed:
                complete = self._rows is not None
                rows = [dict(row) for row in (self._rows if complete else self._partial)]
                scanning = None if complete else dict(self._scan)
                answer = None
        if answer is None:
            answer = _built_answer(rows, scanning, complete)
            with self._lock:
                if self._changed == changed:
                    self._built = (changed, answer)
        rows = answer["runs"]
        for index, row in enumerate(rows):
            host_file = flying.get(row["run"])
            if host_file is not None and row["state"] in ("queued", "running"):
                status = self._analysis.status(host_file)
                if status["state"] == "running":
                    if rows is answer["runs"]:
                        rows = list(rows)
                    rows[index] = {**row, "state": "running", "progress": status.get("progress")}
        return {**answer, "runs": rows}

    def _ensure_scanner(self):
        with self._lock:
            self._asked_at = time.monotonic()
            if self._scanner is not None or self._list_runs is None:
                return
            self._scanner = threading.Thread(target=self._scan_loop, name="gpu-advisor-overview", daemon=True)
            self._scanner.start()

    def _scan_loop(self):
        while not self._closed.is_set():
            with self._lock:
                if time.monotonic() - self._asked_at > IDLE_S:
                    self._scanner = None
                    return
            started = time.monotonic()
            try:
                self._pass(self._list_runs())
            except Exception as err:  # a logdir that cannot be listed right now: the last rows stay
                logger.warning("tb-gpu-advisor: overview scan failed: %s", err)
            self._closed.wait(max(0.0, self._rescan_s - (time.monotonic() - started)))
        with self._lock:
            self._scanner = None

    def _pass(self, runs):
        """Reads every run's row (stored summary, analysis state), publishing partial rows during the first
        pass, then swaps in the complete rows and queues the analyses still missing."""
        runs = list(runs)
        with self._lock:
            first = self._rows is None
            if first:
                self._partial, self._scan = [], {"done": 0, "total": len(runs)}
                self._changed += 1
        rows, waiting, published = [], [], 0
        for profile_run in runs:
            row, job = self._row(profile_run)
            rows.append(row)
            if job is not None:
                waiting.append(job)
            if first and len(rows) % PUBLISH_EVERY == 0:
                self._publish_partial(rows, waiting[published:])
                published = len(waiting)
        with self._lock:
            self._rows, self._by_run = rows, {row["run"]: row for row in rows}
            self._partial, self._scan = [], {"done": len(rows), "total": len(rows)}
            self._changed += 1
            self._pending = [job for job in waiting if (job[2], job[3]) not in self._in_flight]
        self._pump()

    def _publish_partial(self, rows, new_jobs):
        with self._lock:
            self._partial = list(rows)
            self._scan = {"done": len(rows), "total": self._scan["total"]}
            self._changed += 1
            self._pending.extend(new_jobs)
        self._pump()

    def _row(self, profile_run):
        """(row, job or None): the row of a run's first host, and the analysis to queue when it has no summary."""
        host_file = profile_run.hosts[0]
        row = {
            "run": profile_run.run,
            "host": host_file.host,
            "hosts": len(profile_run.hosts),
            "state": "queued",
            "progress": None,
            "error": None,
            "summary": None,
            "change": None,
            "series": profile_run.series if profile_run.series is not None else series_of(profile_run.run),
            "captured_at": profile_run.captured_at,
        }
        if host_file.problem:
            return {**row, "state": "error", "error": host_file.problem}, None
        path = host_file.path if is_remote_url(host_file.path) else os.path.abspath(host_file.path)
        try:
            file_version = host_file.version or version(host_file.path)
        except ProfileError as err:
            return {**row, "state": "error", "error": err.problem}, None
        stored = self._store.get(path, file_version)
        if stored is not None:
            return _stored_row(row, stored), None
        status = self._analysis.status(host_file)
        if status["state"] in ("done", "error"):  # analyzed for another route: its result is at hand
            self._keep(path, file_version, self._analysis.submit(profile_run.run, host_file))
            stored = self._store.get(path, file_version)
            if stored is not None:
                return _stored_row(row, stored), None
        if status["state"] == "running":
            row.update(state="running", progress=status.get("progress"))
        return row, (profile_run.run, host_file, path, file_version)

    def _pump(self):
        """Queues pending analyses while fewer than the limit are in flight. One thread pumps at a time (a
        finished analysis's callback, run inside submit() when it failed at once, only asks for another round)."""
        with self._lock:
            if self._pumping:
                self._pump_again = True
                return
            self._pumping = True
        try:
            while True:
                with self._lock:
                    if len(self._in_flight) >= self._limit or not self._pending:
                        if not self._pump_again:
                            self._pumping = False
                            return
                        self._pump_again = False
                        continue
                    run, host_file, path, file_version = self._pending.pop(0)
                    if (path, file_version) in self._in_flight:
                        continue
                    self._in_flight[(path, file_version)] = (run, host_file)
                future = self._analysis.submit(run, host_file)
                future.add_done_callback(lambda done, key=(path, file_version): self._finished(key, done))
        except BaseException:
            with self._lock:
                self._pumping = False
            raise

    def _finished(self, key, future):
        stored = self._keep(*key, future)
        with self._lock:
            run, _ = self._in_flight.pop(key, (None, None))
            row = self._by_run.get(run)
            if row is not None and stored is not None:
                row.update(_stored_row(row, stored))
                self._changed += 1
        self._pump()

    def _keep(self, path, file_version, future):
        """Stores the summary (or the one-line error) of a finished analysis; returns what it stored."""
        if not future.done() or future.cancelled():
            return None
        error = future.exception()
        if error is None:
            stored = run_summary(future.result())
        elif isinstance(error, ProfileError) and not isinstance(error, AnalysisCancelled):  # bad until it changes
            stored = {"error": error.problem}
        else:
            return None
        self._store.put(path, file_version, stored)
        return stored


def _built_answer(rows, scanning, complete):
    with_changes(rows)
    states = [row["state"] for row in rows]
    total = len(rows) if complete or not scanning["total"] else scanning["total"]
    done, errors = states.count("done"), states.count("error")
    return {
        "runs": rows,
        "total": total,
        "done": done,
        "errors": errors,
        "pending": total - done - errors,
        "scanning": scanning,
    }


def _stored_row(row, stored):
    if stored.get("error"):
        return {**row, "state": "error", "error": stored["error"], "progress": None}
    return {**row, "state": "done", "summary": stored, "progress": None}
