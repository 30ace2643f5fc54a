"""What the assistant server's tools do, without the MCP SDK: list runs, analyze a run, explain a finding, compare
two runs and run the CI check, each read-only and inside the configured logdirs; reports are cached by file version."""

import threading
from collections import OrderedDict

from tb_gpu_advisor.assistant import answers
from tb_gpu_advisor.assistant.confine import LINK_OUTSIDE, AdvisorError, Logdirs
from tb_gpu_advisor.comparison.check_document import check_document
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.comparison.gate import DEFAULT_MAX_REGRESSION_PCT, METRICS, GateError, check_comparisons
from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.files.discovery import discover_runs, resolve_target, version
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.pipeline import HostOutcome, analyze_host_outcome, assemble_run_report

CACHED_REPORTS = 16
MAX_LIMIT = 100


def _limit(limit, default):
    return default if limit is None else max(1, min(int(limit), MAX_LIMIT))


class Advisor:
    """The tools over `logdirs` (paths or fsspec URLs); files above `max_bytes` are refused as the CLI does."""

    def __init__(self, logdirs, max_bytes=DEFAULT_MAX_FILE_BYTES):
        self.logdirs = Logdirs(logdirs)
        self.max_bytes = max_bytes
        self._reports = OrderedDict()
        self._lock = threading.Lock()

    def list_runs(self, logdir=None, offset=0, limit=None):
        """The runs of a logdir, newest first, with their hosts; a page at a time."""
        where = self.logdirs.locate(logdir)
        runs = [{"run": r.run, "hosts": [h.host for h in r.hosts]} for r in discover_runs(where, confined=True)]
        rows, paging = answers.page(runs, offset, _limit(limit, 50))
        return {"logdirs": self.logdirs.names(), "logdir": where, "runs": rows, "runs_page": paging}

    def report(self, run=None, logdir=None, host=None):
        """The run report of `run` (the newest when None) of a logdir; host files outside the logdirs refused."""
        where = self.logdirs.locate(logdir)
        run_id, host_files = resolve_target(where, run=run or None, host=None, confined=True)
        # A link out of the served path: refused in this server's words (not the tab's flag that allows it).
        refused = {f.host: self.logdirs.check_host(f.path) or (LINK_OUTSIDE if f.problem else None) for f in host_files}
        key = (where, run_id, tuple((f.host, f.path, None if refused[f.host] else version(f.path)) for f in host_files))
        with self._lock:
            if key in self._reports:
                self._reports.move_to_end(key)
                return self._reports[key]
        outcomes = [
            HostOutcome(host=f.host, path=f.path, report=None, error=refused[f.host], error_file=f.path)
            if refused[f.host]
            else analyze_host_outcome(f.host, f.path, max_bytes=self.max_bytes)
            for f in host_files
        ]
        report = assemble_run_report(run_id, outcomes)
        with self._lock:
            self._reports[key] = report
            while len(self._reports) > CACHED_REPORTS:
                self._reports.popitem(last=False)
        return report

    def verdict(self, run=None, logdir=None, host=None, offset=0, limit=None):
        return answers.verdict_answer(self._analyzed(run, logdir), host, offset, _limit(limit, 5))

    def explain(self, finding_id, run=None, logdir=None, host=None, offset=0, limit=None, full_text=False):
        return answers.finding_answer(
            self._analyzed(run, logdir), finding_id, host, offset, _limit(limit, 10), full_text
        )

    def compare(self, baseline_run, candidate_run, logdir=None, candidate_logdir=None, host=None, offset=0, limit=None):
        baseline, candidate = self._pair(baseline_run, candidate_run, logdir, candidate_logdir, host)
        return answers.comparison_answer(compare_reports(baseline, candidate), offset, _limit(limit, 10))

    def check(
        self,
        baseline_run,
        candidate_run,
        logdir=None,
        candidate_logdir=None,
        host=None,
        metric="step_time",
        max_regression_pct=DEFAULT_MAX_REGRESSION_PCT,
    ):
        if metric not in METRICS:
            raise AdvisorError(f"unknown metric {metric!r}; metrics: {', '.join(METRICS)}")
        baseline, candidate = self._pair(baseline_run, candidate_run, logdir, candidate_logdir, host)
        try:
            result = check_comparisons([compare_reports(baseline, candidate)], metric, float(max_regression_pct))
        except GateError as error:
            raise AdvisorError(str(error)) from None
        return check_document(result, metric, float(max_regression_pct), candidate, [baseline])

    def _analyzed(self, run, logdir):
        report = self.report(run, logdir)
        if not report["hosts"]:
            problems = "; ".join(f"{e['file']}: {e['error']}" for e in report["errors"][:3])
            raise AdvisorError(f"no host of run {report['run']!r} could be analyzed: {problems}")
        return report

    def _pair(self, baseline_run, candidate_run, logdir, candidate_logdir, host):
        sides = []
        for run, where in ((baseline_run, logdir), (candidate_run, candidate_logdir or logdir)):
            report = self._analyzed(run, where)
            if host is not None:
                report = {**report, "hosts": [answers.pick_host(report, host)]}
            sides.append(report)
        return sides


MAX_ERROR_CHARS = 600


def one_line(error):
    """The one line a client sees for a refused or failed request (a long list of choices cut short)."""
    if isinstance(error, (AdvisorError, ProfileError)):
        text = str(error)
    else:
        text = f"internal error: {type(error).__name__}: {error}"
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "... (list_runs pages the runs)"
