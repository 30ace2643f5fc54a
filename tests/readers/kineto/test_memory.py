"""The Kineto reader streams: its peak memory is a fraction of the JSON it reads, not a multiple of it."""

import gzip
import json
import tracemalloc

from tb_gpu_advisor.readers.kineto.build import load_kineto_model
from tests.readers.kineto.real import real_kineto


def _repeated_trace(path, copies):
    """A trace of a real one's events repeated `copies` times, each copy later in time with new correlations."""
    source = json.load(gzip.open(real_kineto("a100_8rank_control")))
    events = [e for e in source["traceEvents"] if e.get("ph") == "X"]
    span = max(e["ts"] + e.get("dur", 0) for e in events) - min(e["ts"] for e in events) + 10
    with open(path, "w") as handle:
        handle.write('{"deviceProperties": %s, "traceEvents": [' % json.dumps(source["deviceProperties"]))
        for copy in range(copies):
            for index, event in enumerate(events):
                shifted = dict(event, ts=event["ts"] + copy * span)
                if "correlation" in event.get("args", {}):
                    shifted["args"] = dict(event["args"], correlation=event["args"]["correlation"] + copy * 10**8)
                handle.write(("," if copy or index else "") + json.dumps(shifted))
        handle.write("]}")
    return len(events) * copies


def test_peak_allocation_is_a_fraction_of_the_file(tmp_path):
    path = tmp_path / "big.1.pt.trace.json"
    count = _repeated_trace(path, 1)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        model = load_kineto_model(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(model.gpus[0].activity) + len(model.host_activity.launch_correlation_id) < count
    assert size > 20 * 2**20
    # json.load of the same file would hold every event as dicts: several times the file size.
    assert peak < size / 2, (peak, size)
