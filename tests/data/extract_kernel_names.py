"""Test-data generation step: every kernel name of every real trace in tests/data/real, one per line.

    python -m tests.data.extract_kernel_names tests/data/real > /tmp/names.tsv

Prints `<trace file>\\t<kernel name>` for each distinct (file, name); XPlane traces through our reader,
Kineto JSON (`kineto/*.json.gz`) with gzip + json (events of category `kernel`). The names were then labelled by
hand into tests/data/kernel_classes.tsv, which tests/analysis/test_kernel_classes.py checks the classifier against.
"""

import gzip
import json
import pathlib
import sys

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.model.trace import ActivityKind


def xplane_kernel_names(path):
    names = set()
    for gpu in load_model(str(path)).gpus:
        activity = gpu.activity
        names.update(activity.names[i] for i in set(activity.name_id[activity.kind == ActivityKind.KERNEL].tolist()))
    return names


def kineto_kernel_names(path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        trace = json.load(handle)
    return {
        event["name"]
        for event in trace.get("traceEvents", [])
        if isinstance(event, dict) and event.get("cat") == "kernel" and isinstance(event.get("name"), str)
    }


def all_kernel_names(folder):
    """{(file name, kernel name)} over the real traces in `folder` (unreadable files skipped)."""
    folder = pathlib.Path(folder)
    found = set()
    for path in sorted(folder.glob("*.xplane.pb")):
        try:
            found.update((path.name, name) for name in xplane_kernel_names(path))
        except ProfileError:
            continue
    for path in sorted(folder.glob("kineto/*.json.gz")):
        found.update((path.name, name) for name in kineto_kernel_names(path))
    return found


if __name__ == "__main__":
    for source, name in sorted(all_kernel_names(sys.argv[1] if len(sys.argv) > 1 else "tests/data/real")):
        print(f"{source}\t{name}")
