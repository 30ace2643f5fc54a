"""timeline_report: the /timeline JSON, on a generated trace and on the real 8xV100 trace."""

import pytest

from tb_gpu_advisor.pipeline import analyze_host_file, timeline_for_file
from tb_gpu_advisor.testing.quickstart import write_quickstart
from tests.data import real_trace

REAL_V100 = real_trace("gpu_multi_worker_v100x8.xplane.pb")


def test_quickstart_timeline(tmp_path):
    timeline = timeline_for_file(write_quickstart(str(tmp_path)), bins=16)
    assert (timeline["start_ms"], timeline["end_ms"], timeline["bins"]) == (1.0, 81.0, 16)
    assert timeline["steps_ms"][0] == [1.0, 11.0] and len(timeline["steps_ms"]) == 8
    device = timeline["devices"][0]
    assert (device["ordinal"], device["name"], device["start_ms"], device["end_ms"]) == (0, "/device:GPU:0", 1.0, 81.0)
    assert device["busy"] == [0.0, 0.27] * 8
    assert device["compute"] == device["busy"]  # no collectives: all of the busy time is compute
    assert device["busy_pct"] == 13.5
    assert timeline["input_wait"] == [0.99, 0.21] * 8


def test_device_busy_pct_agrees_with_the_report(tmp_path):
    path = write_quickstart(str(tmp_path))
    assert timeline_for_file(path)["devices"][0]["busy_pct"] == analyze_host_file(path)["devices"][0]["busy_pct"]


def test_real_v100_timeline_agrees_with_the_report():
    timeline = timeline_for_file(str(REAL_V100))
    report = analyze_host_file(str(REAL_V100))
    by_ordinal = {d["ordinal"]: d for d in timeline["devices"]}
    assert len(by_ordinal) == 8
    for device in report["devices"]:
        if device["ordinal"] in (4, 6):  # the GPUs with their own Steps markers
            assert by_ordinal[device["ordinal"]]["busy_pct"] == pytest.approx(device["busy_pct"], abs=0.01)
    assert by_ordinal[4]["start_ms"] != by_ordinal[6]["start_ms"]
    assert (timeline["start_ms"], timeline["end_ms"]) == (by_ordinal[6]["start_ms"], by_ordinal[6]["end_ms"])
