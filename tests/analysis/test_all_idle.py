"""One causal attribution: where every GPU idles, the breakdown's host-side time is the idle attribution's
(analysis.all_idle, analysis.breakdown). Small written Kineto traces give exact numbers for the mapping of
causes to categories and for the several-GPU rule; every committed real trace and demo run checks that a host
with one attributed GPU reports the same shares in its Time line and its Idle line."""

import pathlib

import pytest

from tb_gpu_advisor.analysis.all_idle import all_idle_causes
from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES, CAUSE_CATEGORY, breakdown
from tb_gpu_advisor.analysis.idle_attribution import IDLE_CAUSES, attribute_idle
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tests.analyzed import analyzed

PS_PER_US = 1_000_000
ROOT = pathlib.Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real"
DEMO = ROOT / "demo_logs"
TRACE_SUFFIXES = (".xplane.pb", ".pt.trace.json", ".pt.trace.json.gz")


def _model(tmp_path, events):
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events))
    return load_model(path)


def _categories_us(model, start_us, end_us):
    """{category: us} of the breakdown over [start_us, end_us) of the profile, zeros left out."""
    lo = model.profile_span_ps[0]
    found = breakdown(model, [lo + start_us * PS_PER_US], [lo + end_us * PS_PER_US]).category_ps
    return {name: int(ps[0]) / PS_PER_US for name, ps in found.items() if ps[0]}


def _op(name, ts, dur):
    return x_event("cpu_op", name, ts, dur)


def _copy(ts, dur, correlation):
    return x_event(
        "gpu_memcpy",
        "Memcpy HtoD (Pageable -> Device)",
        ts,
        dur,
        pid=0,
        tid=7,
        device=0,
        stream=7,
        correlation=correlation,
        bytes=4096,
    )


def test_every_cause_has_a_category():
    assert set(CAUSE_CATEGORY) == set(IDLE_CAUSES)
    assert set(CAUSE_CATEGORY.values()) <= set(BREAKDOWN_CATEGORIES)


def test_one_gpu_idle_time_is_split_by_its_causes(tmp_path):
    # 20-48: nothing on the host until 22, an op 22-40, the launch call of k2 40-45 and its latency to 48: idle 2,
    # host 18, launch 8 (by the host's activity alone 45-48 would be idle). 58-70: k3 was queued at 53, before
    # the gap, so the GPU waited on the device while the host ran an op (60-70): device_wait 12, not host.
    # 80-92: untraced 80-85, then the copy call 85-89 and its latency to the copy at 92: idle 5, copy_call 7.
    events = [
        launch(0, 5, 1),
        kernel("k1", 10, 10, 1),
        _op("aten::add", 22, 18),
        launch(40, 5, 2),
        kernel("k2", 48, 10, 2),
        launch(50, 3, 3),
        _op("aten::mul", 60, 10),
        kernel("k3", 70, 10, 3),
        launch(85, 4, 4, name="cudaMemcpyAsync"),
        _copy(92, 5, 4),
    ]
    model = _model(tmp_path, events)
    assert _categories_us(model, 10, 97) == {
        "compute_unknown": 30.0,
        "h2d": 5.0,
        "device_wait": 12.0,
        "copy_call": 7.0,
        "launch": 8.0,
        "host": 18.0,
        "idle": 7.0,
    }
    lo = model.profile_span_ps[0]
    causes = attribute_idle(model).gpus[0].cause_ps([lo + 10 * PS_PER_US], [lo + 97 * PS_PER_US])
    assert {cause: int(ps[0]) / PS_PER_US for cause, ps in causes.items() if ps[0]} == {
        "device_wait": 12.0,
        "copy_call": 7.0,
        "launch": 8.0,
        "host": 18.0,
        "host_untraced": 7.0,
    }


def test_several_gpus_take_the_cause_of_the_gpu_that_resumes_first(tmp_path):
    # GPU 1 runs until 30, GPU 0 until 20: every GPU idles from 30. An op runs 30-40, then GPU 1's launch call
    # 40-45 (its kernel at 48), then GPU 0's 50-55 (its kernel at 60). GPU 1 resumes first, at 48: 30-48 is its
    # host 10 and launch 8 (GPU 0's own split of it has 3 us untraced). 58-60 is GPU 0's launch.
    events = [
        launch(0, 4, 1),
        kernel("k1", 10, 10, 1, device=0),
        launch(4, 4, 2),
        kernel("k2", 10, 20, 2, device=1),
        _op("aten::add", 30, 10),
        launch(40, 5, 3),
        kernel("k3", 48, 10, 3, device=1),
        launch(50, 5, 4),
        kernel("k4", 60, 10, 4, device=0),
    ]
    model = _model(tmp_path, events)
    assert _categories_us(model, 30, 60) == {"compute_unknown": 10.0, "host": 10.0, "launch": 10.0}


def test_a_gpu_held_by_the_host_outranks_a_gpu_whose_work_is_queued(tmp_path):
    # GPU 0's k2 was queued at 6, before its gap 20-40: device_wait. GPU 1 waits for the host: nothing traced
    # 20-30, then k4's launch call 30-35 and its latency to 45. GPU 0 resumes first but its work was queued:
    # nothing runs on any GPU, so what it waits for is not done by a GPU; the host holds the machine: 20-40 is
    # idle (untraced) 10 and launch 10.
    events = [
        launch(0, 3, 1),
        launch(3, 3, 2),
        launch(6, 3, 3),
        kernel("k1", 10, 10, 1, device=0),
        kernel("k3", 10, 10, 3, device=1),
        launch(30, 5, 4),
        kernel("k2", 40, 10, 2, device=0),
        kernel("k4", 45, 10, 4, device=1),
    ]
    model = _model(tmp_path, events)
    assert _categories_us(model, 20, 40) == {"idle": 10.0, "launch": 10.0}
    # Where every GPU's work is queued, the instant is device_wait.
    gpu0, gpu1 = attribute_idle(model).gpus
    lo = model.profile_span_ps[0]
    busy = intervals.union([lo + 10 * PS_PER_US], [lo + 20 * PS_PER_US])
    causes = all_idle_causes(type(attribute_idle(model))(gpus=(gpu0,)), busy)
    assert intervals.covered_ps(causes["device_wait"], [lo + 20 * PS_PER_US], [lo + 40 * PS_PER_US])[0] == (
        20 * PS_PER_US
    )


def test_a_gpu_with_no_work_left_never_holds_the_machine(tmp_path):
    # GPU 1 ran its last kernel by 20; GPU 0's k3 was queued at 6 and starts at 40. The host runs an op 20-40:
    # GPU 1's own split calls that host time, but it waits for nothing; the machine waits on GPU 0's device
    # side: 20-40 is device_wait.
    events = [
        launch(0, 3, 1),
        launch(3, 3, 2),
        launch(6, 3, 3),
        kernel("k1", 10, 10, 1, device=0),
        kernel("k2", 10, 10, 2, device=1),
        _op("aten::add", 20, 20),
        kernel("k3", 40, 10, 3, device=0),
    ]
    model = _model(tmp_path, events)
    assert _categories_us(model, 20, 40) == {"device_wait": 20.0}


def _real_traces():
    return sorted(str(p.relative_to(REAL)) for p in REAL.rglob("*") if p.is_file() and p.name.endswith(TRACE_SUFFIXES))


def _demo_runs():
    return sorted(p.name for p in DEMO.iterdir() if (p / "plugins" / "profile").is_dir())


def _report(path):
    return analyzed(path)  # shared with the other modules that analyze every committed trace and demo run


def _assert_one_attribution(report):
    for host in report["hosts"]:
        gpus = (host.get("idle_attribution") or {}).get("gpus") or []
        if len(gpus) != 1:
            continue
        shares = host["summary"]["breakdown_pct"]
        by_category = {}
        for cause, share in gpus[0]["cause_pct"].items():
            category = CAUSE_CATEGORY[cause]
            by_category[category] = by_category.get(category, 0.0) + (share or 0.0)
        for category, share in by_category.items():
            # Each side rounds its shares to 0.01; `idle` adds two causes.
            assert shares[category] == pytest.approx(share, abs=0.025), (host["host"], category)


@pytest.mark.parametrize("trace", _real_traces())
def test_the_time_line_and_the_idle_line_agree_on_every_committed_trace(trace):
    _assert_one_attribution(_report(str(REAL / trace)))


@pytest.mark.parametrize("run", _demo_runs())
def test_the_time_line_and_the_idle_line_agree_on_every_demo_run(run):
    _assert_one_attribution(_report(str(DEMO / run)))


def test_the_listings_hold_gpu_traces():
    gpu_hosts = [
        host
        for path in [str(REAL / t) for t in _real_traces()] + [str(DEMO / r) for r in _demo_runs()]
        for host in _report(path)["hosts"]
        if len((host.get("idle_attribution") or {}).get("gpus") or []) == 1
    ]
    assert len(gpu_hosts) >= 45


def test_the_idle_line_and_the_time_line_use_the_same_words():
    from tb_gpu_advisor.vocabulary import BREAKDOWN_LABELS, IDLE_CAUSE_LABELS

    for cause, category in CAUSE_CATEGORY.items():
        if category != "idle":
            assert IDLE_CAUSE_LABELS[cause] == BREAKDOWN_LABELS[category]
