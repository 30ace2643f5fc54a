"""`tb-gpu-advisor mcp` started as a subprocess and driven over stdio by the MCP SDK's own client: list, verdict,
explain, compare, check; paths outside the served logdirs refused with nothing there opened or listed; every
answer about the largest committed trace under 8 KB."""

import json
import os
import pathlib
import shutil
import sys

import pytest

from tb_gpu_advisor.schema import validate
from tb_gpu_advisor.testing import TraceBuilder

mcp = pytest.importorskip("mcp", reason="the MCP SDK is in the test extra: pip install -e '.[test]'")
anyio = pytest.importorskip("anyio")

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo_logs"
REAL = ROOT / "tests" / "data" / "real"
TRACE_SUFFIXES = (".xplane.pb", ".pt.trace.json", ".pt.trace.json.gz")
MAX_ANSWER_BYTES = 8 * 1024


def largest_committed_trace():
    return max(
        (p for p in REAL.rglob("*") if p.is_file() and p.name.endswith(TRACE_SUFFIXES)), key=lambda p: p.stat().st_size
    )


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    """A served logdir with one good run and three ways out (a linked file, a linked run directory, a linked
    PyTorch trace), and the place outside they point to."""
    base = tmp_path_factory.mktemp("mcp")
    served, outside = base / "served", base / "outside"
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 1_000, 50)
    builder.write(str(served / "inside" / "plugins" / "profile" / "2026_01_01_00_00_00" / "worker.xplane.pb"))
    secret = builder.write(str(outside / "secret.xplane.pb"))
    builder.write(str(outside / "run" / "stolen.xplane.pb"))
    linked_run = served / "escape" / "plugins" / "profile" / "2026_01_02_00_00_00"
    linked_run.mkdir(parents=True)
    os.symlink(secret, linked_run / "linked.xplane.pb")
    (served / "escape_dir" / "plugins" / "profile").mkdir(parents=True)
    os.symlink(outside / "run", served / "escape_dir" / "plugins" / "profile" / "2026_01_03_00_00_00")
    torch_secret = outside / "rank0.1700000000000.pt.trace.json.gz"
    shutil.copy(REAL / "kineto" / "a100_alexnet_sync.pt.trace.json.gz", torch_secret)
    (served / "torch").mkdir()
    os.symlink(torch_secret, served / "torch" / torch_secret.name)
    return {"served": served, "outside": outside, "audit": base / "audit.log"}


def call_all(dirs, calls):
    """Starts the server on [served, demo_logs, tests/data/real] and runs `calls(client)`; the result, with the
    audit log of what the server opened or listed."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "tests" / "assistant" / "audited_server.py"), str(dirs["served"]), str(DEMO), str(REAL)],
        env={"PYTHONPATH": str(ROOT), "TB_GPU_ADVISOR_AUDIT_LOG": str(dirs["audit"])},
        cwd=str(ROOT),
    )

    async def main():
        async with Client(params, read_timeout_seconds=300) as client:
            return await calls(client)

    return anyio.run(main)


async def ask(client, tool, **arguments):
    """(is_error, answer: dict, or the error line, and the answer's size in bytes)."""
    result = await client.call_tool(tool, arguments)
    text = "".join(block.text for block in result.content if getattr(block, "text", None) is not None)
    return result.is_error, (text if result.is_error else json.loads(text)), len(text.encode("utf-8"))


def test_list_analyze_explain_compare_check(dirs):
    async def calls(client):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        runs = await ask(client, "list_runs", logdir=str(DEMO), limit=2)
        rest = await ask(client, "list_runs", logdir=str(DEMO), offset=20)
        verdict = await ask(client, "get_verdict", logdir=str(DEMO), run="input_bound/2026_01_15_09_30_00", limit=2)
        page2 = await ask(
            client, "get_verdict", logdir=str(DEMO), run="input_bound/2026_01_15_09_30_00", offset=2, limit=2
        )
        first = verdict[1]["findings"][0]["id"]
        explained = await ask(
            client, "explain_finding", finding_id=first, logdir=str(DEMO), run="input_bound/2026_01_15_09_30_00"
        )
        compared = await ask(
            client,
            "compare_runs",
            logdir=str(DEMO),
            baseline_run="input_bound/2026_01_15_09_30_00",
            candidate_run="input_bound_fixed/2026_01_15_09_29_00",
        )
        checked = await ask(
            client,
            "check_regression",
            logdir=str(DEMO),
            baseline_run="input_bound_fixed/2026_01_15_09_29_00",
            candidate_run="input_bound/2026_01_15_09_30_00",
        )
        unknown = await ask(
            client,
            "explain_finding",
            finding_id="no.such_finding",
            logdir=str(DEMO),
            run="input_bound/2026_01_15_09_30_00",
        )
        return tools, runs, rest, verdict, page2, explained, compared, checked, unknown

    tools, runs, rest, verdict, page2, explained, compared, checked, unknown = call_all(dirs, calls)
    assert set(tools) == {"list_runs", "get_verdict", "explain_finding", "compare_runs", "check_regression"}
    assert all(tool.annotations.read_only_hint for tool in tools.values())
    assert not runs[0] and [r["run"] for r in runs[1]["runs"]] == [
        "input_bound/2026_01_15_09_30_00",
        "input_bound_fixed/2026_01_15_09_29_00",
    ]
    assert runs[1]["runs_page"] == {"total": 22, "offset": 0, "next_offset": 2}
    assert rest[1]["runs_page"]["next_offset"] is None and len(rest[1]["runs"]) == 22 - 20
    assert not verdict[0] and verdict[1]["schema_version"] == 1 and verdict[1]["bottleneck"] == "input"
    assert verdict[1]["verdict"].startswith("Input-bound") and verdict[1]["findings_page"]["next_offset"] == 2
    assert "kernels" not in verdict[1]  # the kernel table never travels
    assert [f["id"] for f in page2[1]["findings"]] != [f["id"] for f in verdict[1]["findings"]]
    assert not explained[0] and explained[1]["id"] == verdict[1]["findings"][0]["id"]
    assert explained[1]["metrics"]["input_wait_pct"] > 50
    assert explained[1]["threshold"]["crossed"] == "high" and "prefetch" in explained[1]["fix"]
    host = compared[1]["hosts"][0]
    assert not compared[0] and host["change"] == "faster" and host["speedup"] > 3
    assert any(f["status"] == "resolved" and f["id"] == "input.gpu_waits_for_input" for f in host["findings"])
    assert not checked[0] and checked[1]["passed"] is False and checked[1]["status"] == "regression"
    assert validate(checked[1], "check") == []
    assert unknown[0] and "no finding 'no.such_finding'" in unknown[1]
    assert max(answer[2] for answer in (runs, verdict, explained, compared, checked)) < MAX_ANSWER_BYTES


def test_paths_outside_the_logdirs_are_refused_and_nothing_there_is_read(dirs):
    served, outside = dirs["served"], dirs["outside"]

    async def calls(client):
        return {
            "listed": await ask(client, "list_runs", logdir=str(served)),
            "outside_dir": await ask(client, "list_runs", logdir=str(outside)),
            "outside_file": await ask(client, "get_verdict", logdir=str(outside / "secret.xplane.pb")),
            "dotdot": await ask(client, "get_verdict", logdir="../outside"),
            "etc": await ask(client, "get_verdict", logdir="/etc/passwd"),
            "linked_file": await ask(client, "get_verdict", logdir=str(served), run="escape/2026_01_02_00_00_00"),
            "linked_run_dir": await ask(client, "get_verdict", logdir=str(served / "escape_dir")),
            "linked_torch": await ask(client, "get_verdict", logdir=str(served / "torch")),
            "inside": await ask(client, "get_verdict", logdir=str(served), run="inside/2026_01_01_00_00_00"),
        }

    dirs["audit"].unlink(missing_ok=True)
    answers = call_all(dirs, calls)
    listed = {r["run"] for r in answers["listed"][1]["runs"]}
    assert "inside/2026_01_01_00_00_00" in listed and not any(r.startswith("escape_dir") for r in listed)
    for key in ("outside_dir", "outside_file", "dotdot", "etc"):
        is_error, line, _ = answers[key]
        assert is_error and "outside the logdirs this server was started with" in line, (key, line)
    for key in ("linked_file", "linked_torch"):
        is_error, line, _ = answers[key]
        assert is_error and "symbolic link to a place outside the logdirs" in line, (key, line)
    assert answers["linked_run_dir"][0] and "no profiles found" in answers["linked_run_dir"][1]
    assert not answers["inside"][0] and answers["inside"][1]["host"] == "worker"
    seen = dirs["audit"].read_text(encoding="utf-8").splitlines()
    assert any(str(served) in line for line in seen)  # the audit hook did record the server's reads
    real_outside = os.path.realpath(outside)
    read_outside = [line for line in seen if os.path.realpath(line.split("\t", 1)[1]).startswith(real_outside)]
    assert read_outside == []


def test_every_answer_about_the_largest_committed_trace_is_under_8_kb(dirs):
    largest = str(largest_committed_trace())

    async def calls(client):
        verdict = await ask(client, "get_verdict", logdir=largest, limit=100)
        explained = [
            await ask(client, "explain_finding", finding_id=f["id"], logdir=largest, limit=100)
            for f in verdict[1]["findings"]
        ]
        compared = await ask(client, "compare_runs", logdir=largest, baseline_run=None, candidate_run=None, limit=100)
        checked = await ask(client, "check_regression", logdir=largest, baseline_run=None, candidate_run=None)
        return [verdict, compared, checked, *explained]

    answers = call_all(dirs, calls)
    assert len(answers) >= 4 and not any(is_error for is_error, _, _ in answers)
    sizes = [size for _, _, size in answers]
    assert max(sizes) < MAX_ANSWER_BYTES, sizes
