"""Analyzes the host files of one run into the top-level report: {schema_version, run, hosts, errors}."""

from tb_gpu_advisor.constants import SCHEMA_VERSION
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.model.build import load_model
from tb_gpu_advisor.remote import is_remote_url
from tb_gpu_advisor.remote.fetch import fetch_remote_file
from tb_gpu_advisor.report.host_report import host_report


def analyze_host_file(path, max_bytes=None):
    """HostReport dict of one `.xplane.pb` file or URL; raises ProfileError for bad input."""
    if is_remote_url(path):
        return _analyze_remote_file(path, max_bytes)
    return host_report(load_model(path, max_bytes=max_bytes))


def _analyze_remote_file(url, max_bytes):
    """Analyzes the cached local copy of a remote file; errors and the report's `file` name the URL."""
    local = fetch_remote_file(url, max_bytes=max_bytes)
    try:
        report = host_report(load_model(local, max_bytes=max_bytes))
    except ProfileError as err:
        raise ProfileError(url, err.problem) from None
    report["file"] = url
    return report


def run_report(run, host_files, max_bytes=None):
    """Report over several hosts; a bad host becomes an entry in `errors` and does not stop the others."""
    hosts, errors = [], []
    for host_file in host_files:
        try:
            report = analyze_host_file(host_file.path, max_bytes=max_bytes)
        except ProfileError as err:
            errors.append({"host": host_file.host, "file": err.path, "error": err.problem})
            continue
        report["host"] = host_file.host
        hosts.append(report)
    return {"schema_version": SCHEMA_VERSION, "run": run, "hosts": hosts, "errors": errors}
