"""The jobs the server's analysis worker processes run (picklable module functions): a host report with its
timeline summary, its size and its rank's summary, a comparison of two reports, a timeline read from the file."""

import json

from tb_gpu_advisor.analysis.timeline import DEFAULT_BINS, timeline_source
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.pipeline import analyze_host_file, keep_rank_profile, timeline_for_file


def json_size(value):
    """The length of `value` as compact JSON: what a cached result is measured by."""
    return len(json.dumps(value, separators=(",", ":"), default=str))


def host_report(path, host, max_bytes=None, analyze=analyze_host_file):
    """(HostReport dict with its host, TimelineSource of its model, its size in bytes as JSON, the RankProfile of
    its rank in a distributed job or None); `analyze` is pipeline.analyze_host_file or a test's stand-in."""
    kept, ranks = [], []
    report = analyze(
        path,
        max_bytes=max_bytes,
        on_model=lambda model: kept.append(timeline_source(model)),
        on_analysis=keep_rank_profile(ranks, hosts_as_ranks=True),  # used only for a run of several hosts
    )
    report["host"] = host
    timeline = kept[0] if kept else None
    rank = ranks[0] if ranks else None
    return report, timeline, json_size(report) + timeline_bytes(timeline) + timeline_bytes(rank), rank


def timeline_bytes(source):
    """About how many bytes a TimelineSource holds (its interval arrays)."""
    return 0 if source is None else _nbytes(source)


def _nbytes(value):
    if hasattr(value, "nbytes"):
        return int(value.nbytes)
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(item) for item in value) + 8 * len(value)
    if hasattr(value, "__dict__"):
        return sum(_nbytes(item) for item in vars(value).values())
    return 8


def comparison(baseline, candidate):
    """(compare_reports(baseline, candidate), its size in bytes as JSON)."""
    result = compare_reports(baseline, candidate)
    return result, json_size(result)


def timeline(path, max_bytes=None, bins=DEFAULT_BINS):
    """The timeline dict of one file, read again (for a report whose summary was not kept)."""
    return timeline_for_file(path, max_bytes=max_bytes, bins=bins)
