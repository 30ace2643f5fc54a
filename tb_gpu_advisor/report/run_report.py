"""Analyzes the host files of one run into the top-level report: {schema_version, run, hosts, errors} plus
`multi_host` when two hosts or more were analyzed."""

from tb_gpu_advisor.constants import SCHEMA_VERSION
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.fanout import analyze_hosts
from tb_gpu_advisor.model.build import load_model
from tb_gpu_advisor.remote import is_remote_url
from tb_gpu_advisor.remote.fetch import fetch_remote_file
from tb_gpu_advisor.report.host_report import host_report
from tb_gpu_advisor.report.multi_host import multi_host_view


def analyze_host_file(path, max_bytes=None, progress=None, on_model=None):
    """HostReport dict of one `.xplane.pb` file or URL; raises ProfileError for bad input.

    `progress(done_bytes, total_bytes)` is called as the model is built (model.build.load_model);
    `on_model(model)` once it is built, for a caller that keeps a summary of it (the server's timelines).
    """
    if is_remote_url(path):
        return _analyze_remote_file(path, max_bytes, progress, on_model)
    return _report(load_model(path, max_bytes=max_bytes, progress=progress), on_model)


def _report(model, on_model):
    if on_model is not None:
        on_model(model)
    return host_report(model)


def _analyze_remote_file(url, max_bytes, progress=None, on_model=None):
    """Analyzes the cached local copy of a remote file; errors and the report's `file` name the URL."""
    local = fetch_remote_file(url, max_bytes=max_bytes)
    try:
        report = _report(load_model(local, max_bytes=max_bytes, progress=progress), on_model)
    except ProfileError as err:
        raise ProfileError(url, err.problem) from None
    report["file"] = url
    return report


def run_report(run, host_files, max_bytes=None, executor=None):
    """Report over several hosts; a bad host becomes an entry in `errors` and does not stop the others.

    `executor` is fanout.analyze_hosts's: None (local processes for big multi-host runs), "inline", or an
    Executor such as a Dask client's; the report is the same whichever runs it.
    """
    return assemble_run_report(run, analyze_hosts(host_files, max_bytes=max_bytes, executor=executor))


def assemble_run_report(run, outcomes):
    """The run report from fanout.HostOutcomes, in host order."""
    hosts = [outcome.report for outcome in outcomes if outcome.report is not None]
    errors = [{"host": o.host, "file": o.error_file, "error": o.error} for o in outcomes if o.report is None]
    report = {"schema_version": SCHEMA_VERSION, "run": run, "hosts": hosts, "errors": errors}
    if len(hosts) >= 2:
        report["multi_host"] = multi_host_view(hosts)
    return report
