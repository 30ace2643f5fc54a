"""The idle share we report (idle_attribution: each GPU's idle time over its step windows) against Holistic Trace
Analysis' temporal breakdown (idle %) on every committed Kineto trace, the H200 PyTorch runs included: within 3
points, or the reason pinned.

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

H200 = ("healthy", "launch_eager", "launch_compiled")
# Traces where HTA's scope, not the measure, parts us by more than 3 points: why, pinned below.
SCOPE_DIFFERS = {
    "v100_2rank_test": "HTA leaves out 3,117 of 15,632 device events (no launch it pairs before the "
    "last step) and counts the time only they cover as idle"
}


def _h200_path(run):
    (path,) = sorted((REAL / "h200" / "torch" / run).glob("*.pt.trace.json.gz"))
    return path


def _cases():
    return [(name, None) for name in REAL_TRACES] + [(f"h200_{run}", run) for run in H200]


@pytest.mark.parametrize("name, h200_run", _cases())
def test_reported_idle_agrees_with_hta(name, h200_run, kineto_models, monkeypatch):
    from tb_gpu_advisor.readers.load import load_model

    monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "1")
    path = _h200_path(h200_run) if h200_run else real_kineto(name)
    model = load_model(path) if h200_run else kineto_models[name]
    (gpu,) = host_report(model)["idle_attribution"]["gpus"]
    hta_idle = hta_figures(path, model.environment.get("rank", 0))["temporal"]["idle"]
    if name not in SCOPE_DIFFERS:
        assert gpu["idle_pct"] == pytest.approx(hta_idle, abs=3.0)
        return
    # Over HTA's own window, counting every device event, our idle is within 0.3 points of what we report;
    # counting only the events HTA keeps it is HTA's.
    (device,) = model.gpus
    activity, keep = device.activity, hta_scope(model, device)
    lo, hi = int(activity.start_ps[keep].min()), int(activity.end_ps[keep].max())

    def idle_pct(mask):
        busy = intervals.covered_ps(intervals.union(activity.start_ps[mask], activity.end_ps[mask]), [lo], [hi])
        return 100.0 - 100.0 * int(busy[0]) / (hi - lo)

    assert abs(gpu["idle_pct"] - hta_idle) > 3.0
    assert idle_pct(np.ones(len(activity), dtype=bool)) == pytest.approx(gpu["idle_pct"], abs=0.3)
    assert idle_pct(keep) == pytest.approx(hta_idle, abs=0.01)
    assert int((~keep).sum()) == 3117 and len(activity) == 15632
