"""Groups the Kineto trace files of one directory into runs, as the PyTorch TensorBoard plugin listed them.

The plugin's run is the directory (relative to the logdir) holding `<worker>.<span>.pt.trace.json[.gz]`;
each worker may have several spans. Here each span is a profile of its own: when every worker has one file
the run id is the directory; otherwise the k-th spans of the workers form the run `<directory>/<span>`,
named after the first worker's k-th span (a millisecond timestamp, so newer spans sort after older ones).
"""

from __future__ import annotations

from collections.abc import Iterable

from tb_gpu_advisor.files.names import is_kineto_file, worker_and_span


def _span_key(span: str | None) -> tuple[int, int]:
    return (0, int(span)) if span is not None else (-1, 0)


def kineto_runs(run_dir: str, names: Iterable[str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(run id, [(worker, file name)])] for the Kineto files among `names` of the directory `run_dir`."""
    by_worker: dict[str, list[tuple[tuple[int, int], str | None, str]]] = {}
    for name in sorted(names):
        if is_kineto_file(name):
            worker, span = worker_and_span(name)
            by_worker.setdefault(worker, []).append((_span_key(span), span, name))
    if not by_worker:
        return []
    for files in by_worker.values():
        files.sort()
    depth = max(len(files) for files in by_worker.values())
    if depth == 1:
        return [(run_dir, [(worker, files[0][2]) for worker, files in sorted(by_worker.items())])]
    runs = []
    for k in range(depth):
        members = [(worker, files[k]) for worker, files in sorted(by_worker.items()) if len(files) > k]
        span = members[0][1][1]
        label = span if span is not None else str(k)
        runs.append((f"{run_dir}/{label}", [(worker, entry[2]) for worker, entry in members]))
    return runs
