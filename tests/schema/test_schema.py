"""Every machine output validates against its JSON Schema: the report of every committed real trace and demo run,
the comparison of every demo pair, the check result; and the schemas catch what they promise to catch."""

import copy
import io
import json
import pathlib

import pytest

from tb_gpu_advisor import cli
from tb_gpu_advisor.api import analyze
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.schema import SCHEMA_NAMES, schema, validate
from tests.analyzed import analyzed

jsonschema = pytest.importorskip("jsonschema")

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRACE_SUFFIXES = (".xplane.pb", ".pt.trace.json", ".pt.trace.json.gz")
REAL = ROOT / "tests" / "data" / "real"
DEMO = ROOT / "demo_logs"


def real_traces():
    return sorted(str(p.relative_to(REAL)) for p in REAL.rglob("*") if p.is_file() and p.name.endswith(TRACE_SUFFIXES))


def demo_runs():
    return sorted(p.name for p in DEMO.iterdir() if (p / "plugins" / "profile").is_dir())


def report_of(path):
    return analyzed(path)  # shared with the other modules that analyze every committed trace and demo run


def test_the_listings_find_the_committed_traces_and_demo_runs():
    traces = real_traces()
    assert len(traces) >= 40
    assert any(t.startswith("h200/") for t in traces) and any(t.startswith("kineto/") for t in traces)
    assert len(demo_runs()) >= 20


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_each_schema_is_a_valid_draft_2020_12_schema(name):
    spec = schema(name)
    assert spec["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(spec)


@pytest.mark.parametrize("trace", real_traces())
def test_the_report_of_every_committed_trace_validates(trace):
    report = report_of(str(REAL / trace))
    assert report["schema_version"] == 1
    assert validate(report, "report") == []
    for host in report["hosts"]:
        assert validate(host, "host_report") == []


@pytest.mark.parametrize("run", demo_runs())
def test_the_report_of_every_demo_run_validates(run):
    report = report_of(str(DEMO / run))
    assert report["hosts"] and validate(report, "report") == []


@pytest.mark.parametrize("run", [r for r in demo_runs() if (DEMO / f"{r}_fixed").is_dir()])
def test_the_comparison_of_every_demo_pair_validates_both_ways(run):
    before, after = report_of(str(DEMO / run)), report_of(str(DEMO / f"{run}_fixed"))
    for comparison in (compare_reports(before, after), compare_reports(after, before)):
        assert comparison["schema_version"] == 1 and validate(comparison, "comparison") == []


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    return cli.main([str(a) for a in argv], out=out, err=err), out.getvalue(), err.getvalue()


def test_check_json_validates_and_keeps_the_exit_status():
    code, out, _ = _cli(
        "check", "--baseline", DEMO / "input_bound_fixed", "--candidate", DEMO / "input_bound", "--format", "json"
    )
    document = json.loads(out)
    assert code == 1 and document["passed"] is False and document["status"] == "regression"
    assert document["exit_status"] == 1 and document["reason"].startswith("regression: mean step time")
    assert validate(document, "check") == []
    code, out, _ = _cli(
        "check", "--baseline", DEMO / "input_bound", "--candidate", DEMO / "input_bound_fixed", "--format", "json"
    )
    assert code == 0 and json.loads(out)["passed"] is True and validate(json.loads(out), "check") == []


def test_check_json_names_every_baseline_run_and_errors_stay_off_stdout():
    code, out, _ = _cli(
        "check",
        "--baseline",
        DEMO / "input_bound_fixed",
        "--baseline",
        DEMO / "launch_bound_fixed",
        "--candidate",
        DEMO / "input_bound_fixed",
        "--metric",
        "gpu_busy",
        "--format",
        "json",
    )
    document = json.loads(out)
    assert [b["run"] for b in document["baselines"]] == ["2026_01_15_09_29_00", "2026_01_15_09_27_00"]
    assert code == document["exit_status"] and document["metric"] == "gpu_busy" and validate(document, "check") == []
    code, out, err = _cli(
        "check",
        "--baseline",
        DEMO / "input_bound",
        "--candidate",
        REAL / "jax0102_cpu_steps.xplane.pb",
        "--metric",
        "gpu_busy",
        "--format",
        "json",
    )
    assert code == 2 and out == "" and "gpu_busy" in err


def test_compare_and_analyze_json_carry_schema_version_and_validate():
    code, out, _ = _cli("compare", DEMO / "launch_bound", DEMO / "launch_bound_fixed", "--format", "json")
    assert code == 0 and json.loads(out)["schema_version"] == 1 and validate(json.loads(out), "comparison") == []
    code, out, _ = _cli("analyze", DEMO / "healthy", "--format", "json")
    assert code == 0 and json.loads(out)["schema_version"] == 1 and validate(json.loads(out), "report") == []


def test_a_broken_report_fails_and_an_added_key_does_not():
    report = copy.deepcopy(report_of(str(DEMO / "input_bound")))
    added = copy.deepcopy(report)
    added["new_top_level_key"] = {"anything": [1, "two"]}
    added["hosts"][0]["summary"]["a_new_summary_key_pct"] = 12.5
    added["hosts"][0]["findings"][0]["evidence"]["metrics"]["new_metric_ms"] = 3.0
    assert validate(added, "report") == []  # additive changes are not breaking (docs/schema.md)
    del report["hosts"][0]["summary"]["verdict"]
    report["hosts"][0]["kernels"][0]["total_us"] = "12 us"
    report["hosts"][0]["findings"][0]["severity"] = "critical"
    report["hosts"][0]["summary"]["step_time_ms"]["count"] = 2.5
    problems = validate(report, "report")
    assert any("'verdict' is a required property" in p for p in problems)
    assert any(p.startswith("at hosts/0/kernels/0/total_us") for p in problems)
    assert any(p.startswith("at hosts/0/findings/0/severity") for p in problems)
    assert any(p.startswith("at hosts/0/summary/step_time_ms/count") for p in problems)
    assert validate({**report_of(str(DEMO / "input_bound")), "schema_version": 2}, "report")


def test_the_schemas_ship_as_package_data():
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert '"schema/*.json"' in setup and '"jsonschema' in setup
    assert sorted(p.name for p in (ROOT / "tb_gpu_advisor" / "schema").glob("*.json")) == sorted(
        f"{name}.schema.json" for name in SCHEMA_NAMES
    )


REAL_PAIRS = [
    ("cpu_pairs/tf_map_sequential.xplane.pb", "cpu_pairs/tf_map_parallel.xplane.pb"),
    ("cpu_pairs/jax_jit_op_by_op.xplane.pb", "cpu_pairs/jax_jit_jit.xplane.pb"),
    ("h200/jax/precision_fp32", "h200/jax/precision_bf16"),
    ("h200/torch/launch_eager", "h200/torch/launch_compiled"),
    ("kineto/a100_2rank_nccl.pt.trace.json.gz", "kineto/a100_8rank_control.pt.trace.json.gz"),
]


@pytest.mark.parametrize("baseline, candidate", REAL_PAIRS)
def test_the_comparison_of_real_pairs_validates(baseline, candidate):
    comparison = compare_reports(report_of(str(REAL / baseline)), report_of(str(REAL / candidate)))
    assert comparison["hosts"] and validate(comparison, "comparison") == []


def test_a_run_of_several_hosts_validates_with_its_multi_host_view(tmp_path):
    from tb_gpu_advisor.testing import TraceBuilder

    run = tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00"
    for host, kernel_us in (("w0", 500), ("w1", 900), ("w2", 700)):
        builder = TraceBuilder()
        python, gpu = builder.thread("python"), builder.gpu(0)
        for step in range(3):
            python.step(step, 1000 + step * 2000, 1000 + kernel_us)
            gpu.kernel("k", 1100 + step * 2000, kernel_us, launch=(python, 1050 + step * 2000, 10))
        builder.write(str(run / f"{host}.xplane.pb"))
    report = analyze(str(tmp_path), executor="inline")
    assert report["multi_host"]["host_count"] == 3 and report["multi_host"]["slowest_host"] == "w1"
    assert validate(report, "report") == []
    report["multi_host"]["imbalance_pct"] = "large"
    assert validate(report, "report") == ["at multi_host/imbalance_pct: 'large' is not of type 'number', 'null'"]
