"""What we report that HTA reports too, against Holistic Trace Analysis run on the same file, on every committed
Kineto trace with GPU work (tests/data/real/kineto, h200/torch, h200_heldout/torch): the idle share of the idle
attribution (each GPU's idle time over its step windows) and the temporal breakdown of each GPU (idle,
computation and non-computation % of the device window, `devices[].temporal_pct`) agree within 3 points, or the
reason is pinned. The CPU-only DDP traces (ddp_cpu) have nothing to compare: pinned below as well.

HTA measures from the first to the last device event it keeps: those it pairs with a launch made before the last
ProfilerStep starts (tests/readers/kineto/test_hta_agreement.py reproduces that scope to 0.01 points). Our windows are
the steps. With HTA_DISABLE_NS_ROUNDING=1 both read the same times (HTA's default rounds each event to whole
microseconds, which empties the short kernels of a CUDA-graph replay).
"""

import numpy as np
import pytest

from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.pipeline import host_report
from tests.data import REAL
from tests.readers.kineto.hta_side import hta_figures
from tests.readers.kineto.test_hta_agreement import hta_scope
from tests.readers.kineto.real import REAL_TRACES, real_kineto

pytest.importorskip("hta")

TEMPORAL = ("idle", "computation", "non_computation")
# Traces where HTA's scope, not the measure, parts us by more than 3 points: why, pinned below.
SCOPE_DIFFERS = {
    "v100_2rank_test": "HTA leaves out 3,117 of 15,632 device events (no launch it pairs before the "
    "last step) and counts the time only they cover as idle"
}


def _cases():
    """(name, path) of every committed Kineto trace with GPU work."""
    cases = [(name, None) for name in REAL_TRACES]
    for folder in ("h200", "h200_heldout"):
        for path in sorted((REAL / folder / "torch").glob("*/*.pt.trace.json.gz")):
            cases.append((f"{folder}_{path.parent.name}", path))
    return cases


def test_every_kineto_trace_with_gpu_work_is_compared():
    """5 third-party traces, 3 H200 runs and 12 held-out H200 runs."""
    assert len(_cases()) == 20


@pytest.mark.parametrize("name, path", _cases(), ids=[name for name, _ in _cases()])
def test_reported_idle_and_temporal_breakdown_agree_with_hta(name, path, kineto_models, monkeypatch):
    from tb_gpu_advisor.readers.load import load_model

    monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "1")
    path = path or real_kineto(name)
    model = load_model(path) if name not in kineto_models else kineto_models[name]
    report = host_report(model)
    (gpu,) = report["idle_attribution"]["gpus"]
    (device,) = [device for device in report["devices"] if device.get("temporal_pct")]
    hta = hta_figures(path, model.environment.get("rank", 0))["temporal"]
    if name not in SCOPE_DIFFERS:
        assert gpu["idle_pct"] == pytest.approx(hta["idle"], abs=3.0)
        for key in TEMPORAL:
            assert device["temporal_pct"][key] == pytest.approx(hta[key], abs=3.0), key
        return
    # Over HTA's own window, counting every device event, our idle is within 0.3 points of what we report;
    # counting only the events HTA keeps it is HTA's.
    (gpu_model,) = model.gpus
    activity, keep = gpu_model.activity, hta_scope(model, gpu_model)
    lo, hi = int(activity.start_ps[keep].min()), int(activity.end_ps[keep].max())

    def idle_pct(mask):
        busy = intervals.covered_ps(intervals.union(activity.start_ps[mask], activity.end_ps[mask]), [lo], [hi])
        return 100.0 - 100.0 * int(busy[0]) / (hi - lo)

    assert abs(gpu["idle_pct"] - hta["idle"]) > 3.0
    assert abs(device["temporal_pct"]["idle"] - hta["idle"]) > 3.0
    assert idle_pct(np.ones(len(activity), dtype=bool)) == pytest.approx(gpu["idle_pct"], abs=0.3)
    assert idle_pct(np.ones(len(activity), dtype=bool)) == pytest.approx(device["temporal_pct"]["idle"], abs=0.3)
    assert idle_pct(keep) == pytest.approx(hta["idle"], abs=0.01)
    assert int((~keep).sum()) == 3117 and len(activity) == 15632


def test_cpu_only_ddp_traces_have_nothing_to_compare():
    """The gloo DDP ranks ran on the CPU: no device events, so we report no device breakdown and no idle
    attribution, and HTA's temporal breakdown has no GPU rows to read (it raises)."""
    from tb_gpu_advisor.readers.load import load_model

    paths = sorted((REAL / "ddp_cpu").glob("*/*.pt.trace.json.gz"))
    assert len(paths) == 12
    for path in paths:
        report = host_report(load_model(path))
        assert report["idle_attribution"] is None and report["summary"]["gpu_count"] == 0
        assert not [device for device in report["devices"] if device.get("temporal_pct")]
    with pytest.raises(IndexError):
        hta_figures(paths[0], 0)
