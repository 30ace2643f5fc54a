"""Analyzes the host files of one run into the top-level report: {schema_version, run, hosts, errors} plus
`multi_host` when two hosts or more were analyzed."""

from tb_gpu_advisor.constants import SCHEMA_VERSION
from tb_gpu_advisor.fanout import analyze_hosts
from tb_gpu_advisor.model.build import load_model
from tb_gpu_advisor.report.host_report import host_report
from tb_gpu_advisor.report.multi_host import multi_host_view


def analyze_host_file(path, max_bytes=None):
    """HostReport dict of one `.xplane.pb` file; raises ProfileError for bad input."""
    return host_report(load_model(path, max_bytes=max_bytes))


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
