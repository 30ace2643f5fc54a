"""The overview of every run of a logdir, filled in the background: a few analyses at a time (so a run a user
opens is not queued behind hundreds), each run's summary persisted (overview.store) once computed."""

import os
import threading

from tb_gpu_advisor.discovery import version
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.overview.rows import run_summary, series_of, with_changes
from tb_gpu_advisor.overview.store import SummaryStore
from tb_gpu_advisor.remote import is_remote_url

IN_FLIGHT = 2  # overview analyses queued on the shared service at once


class OverviewService:
    """Rows of the runs it is shown, with their state; analyses of runs without a summary run in the background
    on `analysis` (service.AnalysisService, shared with the other routes: one analysis per file version)."""

    def __init__(self, analysis, store=None, in_flight=IN_FLIGHT):
        self._analysis = analysis
        self._store = store or SummaryStore()
        self._limit = max(1, int(in_flight))
        self._lock = threading.Lock()
        self._pending = []  # (run id, HostFile, path, version) waiting, newest run first
        self._in_flight = {}  # (path, version) -> run id

    def overview(self, runs):
        """{"runs": [row], "total", "done", "errors", "pending"} for ProfileRuns `runs` (newest first); a row is
        {run, host, hosts, state: done|error|running|queued, progress, error, summary, change}. Never waits for
        an analysis: missing summaries are queued."""
        rows, waiting = [], []
        for profile_run in runs:
            row, job = self._row(profile_run)
            rows.append(row)
            if job is not None:
                waiting.append(job)
        with self._lock:
            self._pending = [job for job in waiting if (job[2], job[3]) not in self._in_flight]
        self._pump()
        with_changes(rows)
        states = [row["state"] for row in rows]
        return {"runs": rows, "total": len(rows), "done": states.count("done"), "errors": states.count("error"),
                "pending": len(rows) - states.count("done") - states.count("error")}

    def _row(self, profile_run):
        """(row, job or None): the row of a run's first host, and the analysis to queue when it has no summary."""
        host_file = profile_run.hosts[0]
        row = {"run": profile_run.run, "host": host_file.host, "hosts": len(profile_run.hosts), "state": "queued",
               "progress": None, "error": None, "summary": None, "change": None,
               "series": profile_run.series if profile_run.series is not None else series_of(profile_run.run),
               "captured_at": profile_run.captured_at}
        if host_file.problem:
            return {**row, "state": "error", "error": host_file.problem}, None
        path = host_file.path if is_remote_url(host_file.path) else os.path.abspath(host_file.path)
        try:
            file_version = host_file.version or version(host_file.path)
        except ProfileError as err:
            return {**row, "state": "error", "error": err.problem}, None
        stored = self._store.get(path, file_version)
        if stored is not None:
            if stored.get("error"):
                return {**row, "state": "error", "error": stored["error"]}, None
            return {**row, "state": "done", "summary": stored}, None
        status = self._analysis.status(host_file)
        if status["state"] in ("done", "error"):  # analyzed for another route: its result is at hand
            self._keep(path, file_version, self._analysis.submit(profile_run.run, host_file))
            return self._row(profile_run)
        if status["state"] == "running":
            row.update(state="running", progress=status.get("progress"))
        return row, (profile_run.run, host_file, path, file_version)

    def _pump(self):
        """Queues pending analyses while fewer than the limit are in flight."""
        while True:
            with self._lock:
                if len(self._in_flight) >= self._limit or not self._pending:
                    return
                run, host_file, path, file_version = self._pending.pop(0)
                self._in_flight[(path, file_version)] = run
            future = self._analysis.submit(run, host_file)
            future.add_done_callback(lambda done, key=(path, file_version): self._finished(key, done))

    def _finished(self, key, future):
        self._keep(*key, future)
        with self._lock:
            self._in_flight.pop(key, None)
        self._pump()

    def _keep(self, path, file_version, future):
        """Stores the summary (or the one-line error) of a finished analysis."""
        if not future.done() or future.cancelled():
            return
        error = future.exception()
        if error is None:
            self._store.put(path, file_version, run_summary(future.result()))
        elif isinstance(error, ProfileError):  # a bad file stays bad until it changes
            self._store.put(path, file_version, {"error": error.problem})
