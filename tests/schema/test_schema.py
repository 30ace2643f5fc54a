"""Every machine output validates against its JSON Schema: the report of every committed real trace and demo run,
the comparison of every demo pair, the check result; and the schemas catch what they promise to catch."""

import copy
import functools
import io
import json
import pathlib

import pytest

from tb_gpu_advisor import cli
from tb_gpu_advisor.api import analyze
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.schema import SCHEMA_NAMES, schema, validate

jsonschema = pytest.importorskip("jsonschema")

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRACE_SUFFIXES = (".xplane.pb", ".pt.trace.json", ".pt.trace.json.gz")
REAL = ROOT / "tests" / "data" / "real"
DEMO = ROOT / "demo_logs"


def real_traces():
    return sorted(str(p.relative_to(REAL)) for p in REAL.rglob("*") if p.is_file() and p.name.endswith(TRACE_SUFFIXES))


def demo_runs():
    return sorted(p.name for p in DEMO.iterdir() if (p / "plugins" / "profile").is_dir())


@functools.lru_cache(maxsize=None)
def report_of(path):
    return analyze(path, executor="inline")


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
    code, out, _ = _cli("check", "--baseline", DEMO / "input_bound_fixed", "--candidate", DEMO / "input_bound",
                        "--format", "json")
    document = json.loads(out)
    assert code == 1 and document["passed"] is False and document["status"] == "regression"
    assert document["exit_status"] == 1 and document["reason"].startswith("regression: mean step time")
    assert validate(document, "check") == []
    code, out, _ = _cli("check", "--baseline", DEMO / "input_bound", "--candidate", DEMO / "input_bound_fixed",
                        "--format", "json")
    assert code == 0 and json.loads(out)["passed"] is True and validate(json.loads(out), "check") == []


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
    assert sorted(p.name for p in (ROOT / "tb_gpu_advisor" / "schema").glob("*.json")) == \
        sorted(f"{name}.schema.json" for name in SCHEMA_NAMES)
