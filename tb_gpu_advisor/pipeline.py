"""The analysis pipeline: host file -> TraceModel -> HostAnalysis -> findings -> HostReport, and the hosts of a
run -> run report (`{schema_version, run, hosts, errors}` plus `multi_host` for two hosts or more, and `ranks` for
two ranks or more of a distributed job)."""

import functools
from dataclasses import dataclass

from tb_gpu_advisor.analysis.host_analysis import analyze_host
from tb_gpu_advisor.analysis.recapture import in_run_words
from tb_gpu_advisor.analysis.ranks.align import one_capture
from tb_gpu_advisor.analysis.ranks.profile import rank_profile
from tb_gpu_advisor.analysis.ranks.run import analyze_ranks
from tb_gpu_advisor.analysis.timeline import DEFAULT_BINS
from tb_gpu_advisor.constants import SCHEMA_VERSION
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.fanout import map_hosts
from tb_gpu_advisor.findings.engine import diagnose
from tb_gpu_advisor.readers.kineto.build import FORMAT as KINETO
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.remote import is_remote_url
from tb_gpu_advisor.remote.fetch import fetch_remote_file
from tb_gpu_advisor.report.finite import finite
from tb_gpu_advisor.report.host_report import render_host_report, with_diagnosis
from tb_gpu_advisor.report.multi_host import multi_host_view
from tb_gpu_advisor.report.ranks_defer import defer_to_run
from tb_gpu_advisor.report.ranks_view import ranks_view
from tb_gpu_advisor.report.timeline_report import timeline_report


@dataclass(frozen=True)
class HostOutcome:
    """One host file's HostReport dict, or the one-line problem that stopped it."""

    host: str
    path: str
    report: dict | None
    error: str | None = None
    error_file: str | None = None  # the file the error names (ProfileError.path)
    rank: object = None  # analysis.ranks.profile.RankProfile when the trace names its rank in a distributed job


def host_report(model, on_analysis=None):
    """The HostReport of one host's TraceModel, as a JSON-ready dict: analyses computed once, then the rules.
    `on_analysis(model, analysis)` is called with the HostAnalysis, for a caller that keeps a summary of it."""
    analysis = analyze_host(model)
    if on_analysis is not None:
        on_analysis(model, analysis)
    diagnosis = diagnose(model, analysis)
    report = render_host_report(model, analysis, diagnosis.unprofiled)
    return finite(with_diagnosis(report, diagnosis))


def load_host_model(path, max_bytes=None, progress=None):
    """The TraceModel of a local file or a URL (fetched into the local cache); ProfileError naming `path` for
    bad input. `progress(done_bytes, total_bytes)` follows the model build."""
    if not is_remote_url(path):
        return load_model(path, max_bytes=max_bytes, progress=progress)
    local = fetch_remote_file(path, max_bytes=max_bytes)
    try:
        return load_model(local, max_bytes=max_bytes, progress=progress)
    except ProfileError as err:
        raise ProfileError(path, err.problem) from None


def analyze_host_file(path, max_bytes=None, progress=None, on_model=None, on_analysis=None):
    """HostReport dict of one `.xplane.pb` file or URL; raises ProfileError for bad input. `on_model(model)`
    is called once the model is built, for a caller that keeps a summary of it (the server's timelines);
    `on_analysis(model, analysis)` once it is analyzed."""
    model = load_host_model(path, max_bytes=max_bytes, progress=progress)
    if on_model is not None:
        on_model(model)
    report = host_report(model, on_analysis)
    if is_remote_url(path):
        report["file"] = path  # the model read the cached copy; the report names the URL
    return report


def timeline_for_file(path, max_bytes=None, bins=DEFAULT_BINS):
    """The timeline dict (report/timeline_report.py) of one `.xplane.pb` file or URL; ProfileError for bad input."""
    return timeline_report(load_host_model(path, max_bytes=max_bytes), bins)


def keep_rank_profile(kept, hosts_as_ranks=False):
    """An `on_analysis` callback that appends the RankProfile of a host that is a rank of a distributed job to
    `kept` (the list it fills): a trace that names its rank (Kineto's distributedInfo), or, with
    `hosts_as_ranks` (a run of several hosts), an XPlane host that ran collectives (one host of a TensorFlow or
    JAX job: its hosts are its ranks). A PyTorch trace without its rank is left out: nothing says which job it
    belongs to."""

    def keep(model, analysis):
        rank = model.environment.get("rank")
        if isinstance(rank, int) or (
            hosts_as_ranks and rank is None and model.format != KINETO and analysis.collectives
        ):
            kept.append(rank_profile(model, analysis))

    return keep


def ranks_report(profiles):
    """The run report's `ranks` object of RankProfiles (any order), or None for fewer than two ranks, or for
    hosts that name no rank and share no step or no instant of their clocks (not one job's ranks after all)."""
    if len(profiles) < 2:
        return None
    if all(p.rank is None for p in profiles) and not one_capture(profiles):
        return None
    view = finite(ranks_view(analyze_ranks(profiles)))
    if all(p.rank is None for p in profiles) and not view["step_count"]:
        return None
    return view


def analyze_host_outcome(host, path, max_bytes=None, hosts_as_ranks=False):
    """HostOutcome of one file or URL; picklable, so it runs the same in a pool worker or on a Dask worker.
    `hosts_as_ranks`: the file is one host of several in its run (keep_rank_profile)."""
    ranks = []
    try:
        report = analyze_host_file(path, max_bytes=max_bytes, on_analysis=keep_rank_profile(ranks, hosts_as_ranks))
    except ProfileError as err:
        return HostOutcome(host=host, path=path, report=None, error=err.problem, error_file=err.path)
    report["host"] = host
    return HostOutcome(host=host, path=path, report=report, rank=ranks[0] if ranks else None)


def analyze_hosts(host_files, max_bytes=None, executor=None, on_done=None):
    """[HostOutcome] for `host_files` (files.runs.HostFile), in order, on `executor` (see fanout.map_hosts);
    `on_done(host_file)` as each host finishes."""
    host_files = list(host_files)
    task = functools.partial(analyze_host_outcome, max_bytes=max_bytes, hosts_as_ranks=len(host_files) >= 2)
    return map_hosts(task, host_files, executor, on_done)


def run_report(run, host_files, max_bytes=None, executor=None, on_host_done=None):
    """Report over several hosts; a bad host becomes an entry in `errors` and does not stop the others.

    `executor` is fanout.map_hosts's: None (local processes for big multi-host runs), "inline", or an Executor
    such as a Dask client's; the report is the same whichever runs it. `on_host_done(host_file)` follows the
    hosts as they finish (a progress bar).
    """
    return assemble_run_report(
        run, analyze_hosts(host_files, max_bytes=max_bytes, executor=executor, on_done=on_host_done)
    )


def assemble_run_report(run, outcomes):
    """The run report from HostOutcomes, in host order."""
    hosts = [outcome.report for outcome in outcomes if outcome.report is not None]
    errors = [{"host": o.host, "file": o.error_file, "error": o.error} for o in outcomes if o.report is None]
    report = {"schema_version": SCHEMA_VERSION, "run": run, "hosts": hosts, "errors": errors}
    ranked = [o for o in outcomes if o.report is not None and o.rank is not None]
    ranks = ranks_report([o.rank for o in ranked])
    rank_hosts = {(o.rank.rank if o.rank.rank is not None else o.rank.host): o.host for o in ranked}
    if len(hosts) >= 2:
        joined = ranks if ranks is not None and ranks["step_count"] else None
        report["multi_host"] = multi_host_view(hosts, joined, rank_hosts)
    if ranks is not None:
        report["ranks"] = ranks
        defer_to_run(hosts, ranks, rank_hosts)
        if ranks["world_size"] == ranks["rank_count"] and not ranks["late_peer"]:
            for host in hosts:
                _advice_in_run(host)
    return report


def _advice_in_run(host):
    """Every rank is in the run: the host's confidence reasons point to the Ranks section, not to a recapture."""
    confidence = host.get("summary", {}).get("confidence")
    if isinstance(confidence, dict) and isinstance(confidence.get("reasons"), list):
        confidence["reasons"] = [in_run_words(r) if isinstance(r, str) else r for r in confidence["reasons"]]
