"""Seeded fuzz over every command and the WSGI app: crafted bad traces of every kind the hostile-input audits
found (issue 28: huge numbers, deep nesting, lone surrogates, bidi controls, 100,000-character names of repeated
pattern fragments, HLO modules whose computations each call the next twice, cycles, deep chains), odd
file-system entries, and seeded mutations of real XPlanes, of Kineto traces (values swapped for hostile ones)
and of embedded HLO modules, each in a run beside a good host, XPlane and Kineto alike.

Asserts: no exit 3, no traceback, each error one line naming its file, the good host still reported, every
number finite and every share within 0-100, no raw control character in text or HTML output, every output
valid UTF-8. Runs a fixed number of cases (MUTATED_CASES more than the crafted ones) from a fixed seed
(TB_GPU_ADVISOR_FUZZ_SEED, default 14), never to a wall-clock deadline; about 40 s on the development machine.
"""

import io
import json
import os
import random
import time

import fsspec
import pytest

from tb_gpu_advisor import cli
from tb_gpu_advisor.constants import MAX_PLANES
from tb_gpu_advisor.report.invariants import report_problems
from tb_gpu_advisor.testing import TraceBuilder
from tests import hostile_traces as hostile
from tests.data import REAL

pytestmark = pytest.mark.fuzz

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MUTATED_CASES = 14  # seeded mutations, after the crafted cases
FULL_CASES = 5  # cases (a seeded sample) run through every command; the rest through analyze and report
HTTP_CASES = 6  # cases (a seeded sample) served by the WSGI app
SEED = int(os.environ.get("TB_GPU_ADVISOR_FUZZ_SEED", "14"))
INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)
TIMESTAMP = "2026_01_01_00_00_00"
ESCAPE = "\x1b]0;PWNED\x07\x1b[31m\u202e"


def _good_builder(kernel="good_kernel"):
    builder = TraceBuilder(hostname="good")
    thread, gpu = builder.thread("python"), builder.gpu(0)
    for index in range(4):
        thread.step(index, 1_000 + index * 10_000, 10_000)
        thread.input_wait(1_000 + index * 10_000, 500)
        gpu.kernel(kernel, 2_000 + index * 10_000, 3_000, launch=(thread, 1_600 + index * 10_000, 20))
        gpu.memcpy("h2d", 5_500 + index * 10_000, 200, 1_000_000, launch=(thread, 5_400 + index * 10_000, 10))
    return builder


def _crafted(kind):
    """Serialized XSpace of one crafted kind of bad trace."""
    space = _good_builder(f"bad{ESCAPE}kernel" if kind == "escape" else "k").xspace()
    host, gpu = space.planes[0], space.planes[1]
    launch = (
        next(e for e in host.lines[0].events if host.event_metadata[e.metadata_id].name == "k")
        if kind.startswith("host")
        else None
    )
    if kind == "gpu_offset_max":
        gpu.lines[0].events[0].offset_ps = INT64_MAX
    elif kind == "host_duration_max":
        launch.duration_ps = INT64_MAX
    elif kind == "host_offset_max":
        launch.offset_ps = INT64_MAX
    elif kind == "host_offset_min":
        launch.offset_ps = INT64_MIN
    elif kind == "line_timestamp_min":
        gpu.lines[0].timestamp_ns = INT64_MIN
    elif kind in ("occupancy_nan", "occupancy_inf", "occupancy_huge"):
        value = {"occupancy_nan": "nan", "occupancy_inf": "inf", "occupancy_huge": "1e308"}[kind]
        for meta in gpu.stat_metadata.values():
            if meta.name.startswith("regs:"):
                meta.name = meta.name.rsplit("occ_pct:", 1)[0] + f"occ_pct:{value}"
    elif kind == "escape":
        for meta in host.event_metadata.values():
            meta.name += ESCAPE
    elif kind == "many_planes":
        for index in range(MAX_PLANES):
            space.planes.add(id=100 + index, name=f"/device:GPU:{100 + index}")
    elif kind == "empty":
        return b""
    return space.SerializeToString()


CRAFTED = (
    "gpu_offset_max",
    "host_duration_max",
    "host_offset_max",
    "host_offset_min",
    "line_timestamp_min",
    "occupancy_nan",
    "occupancy_inf",
    "occupancy_huge",
    "escape",
    "many_planes",
    "empty",
)
ODD = ("directory", "loop", "dangling", "fifo", "device")


def _real_traces():
    demo = [
        os.path.join(d, f)
        for d, _, files in os.walk(os.path.join(REPO, "demo_logs"))
        for f in files
        if f.endswith(".xplane.pb")
    ]
    committed = [
        str(REAL / n)
        for n in (
            "amd_mi300x_jax08_gemm.xplane.pb",
            "jax0102_cpu_steps.xplane.pb",
            "tf221_cpu_keras_input_bound.xplane.pb",
        )
    ]
    return sorted(demo) + committed


def _mutated(rng, data):
    """Random damage to real bytes: flips, truncation, a spliced run of bytes, or a changed varint."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        how = rng.choice(("flip", "truncate", "splice", "byte", "ff"))
        at = rng.randrange(len(data)) if data else 0
        if how == "flip" and data:
            data[at] ^= 1 << rng.randrange(8)
        elif how == "truncate":
            data = data[:at]
        elif how == "splice":
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif how == "byte" and data:
            data[at] = rng.randrange(256)
        elif how == "ff" and data:
            data[at : at + 9] = b"\xff" * 9 + b"\x01"
    return bytes(data)


def _make_odd(kind, path):
    if kind == "directory":
        os.mkdir(path)
    elif kind == "loop":
        os.symlink(os.path.basename(path), path)
    elif kind == "dangling":
        os.symlink("/nonexistent/fuzz/target", path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)


def _kineto_mutated(rng):
    """A Kineto trace whose events have random fields swapped for hostile values (structure kept)."""
    hostile_values = (
        1e308,
        -1e308,
        2**70,
        -(2**70),
        -1,
        0,
        "NaN",
        "x",
        None,
        [],
        {},
        True,
        "1e400",
        "k\ud800" + ESCAPE,
        "gemm" * 5_000,
        10**30,
    )
    events = [json.loads(event) for event in hostile.kineto_events()]
    for _ in range(rng.randint(1, 6)):
        event = rng.choice(events)
        target = event["args"] if event["args"] and rng.random() < 0.4 else event
        target[rng.choice(sorted(target))] = rng.choice(hostile_values)
    return json.dumps({"traceEvents": events}, allow_nan=True)


class Case:
    """One run directory: the good host and one bad host (bytes or an odd entry), XPlane or Kineto."""

    def __init__(self, root, index, label, data=None, odd=None, kineto=False, depth="light", bad_host="bad"):
        self.label, self.kineto, self.depth, self.failed = label, kineto, depth, False
        self.logdir = os.path.join(root, f"case{index:04d}")
        self.run = self.logdir if kineto else os.path.join(self.logdir, "plugins", "profile", TIMESTAMP)
        self.run_id = os.path.basename(self.logdir) if kineto else f"{os.path.basename(self.logdir)}/{TIMESTAMP}"
        self.plain = bad_host == "bad"
        self.names = {
            host: f"{name}.{hostile.SPAN}.pt.trace.json" if kineto else f"{name}.xplane.pb"
            for host, name in (("good", "good"), ("bad", bad_host))
        }
        os.makedirs(self.run)
        if kineto:
            with open(os.path.join(self.run, self.names["good"]), "w", encoding="utf-8") as handle:
                handle.write(hostile.trace_text(hostile.kineto_events()))
        else:
            _good_builder().write(os.path.join(self.run, self.names["good"]))
        self.bad = os.path.join(self.run, self.names["bad"])
        if odd:
            _make_odd(odd, self.bad)
        else:
            with open(self.bad, "wb") as handle:
                handle.write(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _strict_json(text):
    def refuse(constant):
        raise AssertionError(f"non-finite number {constant} in JSON")

    return json.loads(text, parse_constant=refuse)


def _check_errors(case, err, where):
    assert "Traceback" not in err and "internal error" not in err, (case.label, where, err)
    for line in err.splitlines():
        assert line.startswith("error: "), (case.label, where, line)
        assert case.bad in line or case.names["bad"] in line or "no host could be analyzed" in line, (
            case.label,
            where,
            line,
        )
    assert "\x1b" not in err


def _check_host_report_json(case, text, where, good_expected=True):
    report = _strict_json(text)
    problems = report_problems(report, where=f"{case.label} {where}")
    assert not problems, problems[:3]
    if good_expected and "hosts" in report:
        assert "good" in [host["host"] for host in report["hosts"]], (case.label, where)
    return report


def _cli_checked(case, argv, where):
    """_cli, with every output checked to encode as UTF-8 and to carry no raw control character."""
    code, out, err = _cli(argv)
    for text in (out, err):
        text.encode("utf-8")
        assert "\x1b" not in text and "\u202e" not in text and "\u2067" not in text, (case.label, where)
    return code, out, err


def _run_commands(case, tmp_path):
    formats = (
        ("json",)
        if case.depth == "json"
        else ("json", "text", "markdown")
        if case.depth == "full"
        else ("json", "text")
    )
    for fmt in formats:
        code, out, err = _cli_checked(case, ["analyze", case.logdir, "--format", fmt], f"analyze {fmt}")
        case.failed = bool(err)
        assert code == 0, (case.label, fmt, code, err)
        _check_errors(case, err, f"analyze {fmt}")
        assert len(err.splitlines()) <= 1, (case.label, err)
        if fmt == "json":
            _check_host_report_json(case, out, "analyze")
    if case.depth == "json":
        return
    page = os.path.join(str(tmp_path), "page.html")
    code, _, err = _cli_checked(case, ["report", case.logdir, "--format", "html", "-o", page], "report html")
    assert code == 0, (case.label, "html", code, err)
    with open(page, "rb") as handle:
        html = handle.read().decode("utf-8")
    assert "\x1b" not in html and "\u202e" not in html and "\u2067" not in html, case.label
    if case.depth != "full":
        return
    code, out, err = _cli_checked(case, ["analyze", case.bad, "--format", "json"], "analyze file")
    assert code in (0, 2), (case.label, code, err)
    _check_errors(case, err, "analyze file")
    if code == 0:
        _check_host_report_json(case, out, "analyze file", good_expected=False)
    else:
        assert len(err.splitlines()) == 1, (case.label, err)
    for fmt in ("json", "markdown"):
        code, out, err = _cli_checked(case, ["report", case.logdir, "--format", fmt], f"report {fmt}")
        assert code == 0, (case.label, fmt, code, err)
        _check_errors(case, err, f"report {fmt}")
        if fmt == "json":
            _check_host_report_json(case, out, "report")
    good_only = os.path.join(str(tmp_path), "good_only")
    for argv in (
        ["compare", good_only, case.logdir, "--format", "json"],
        ["compare", case.logdir, good_only, "--format", "text"],
        ["check", "--baseline", good_only, "--candidate", case.logdir],
    ):
        code, out, err = _cli_checked(case, argv, argv[0])
        assert code in (0, 1), (case.label, argv[0], code, err)
        _check_errors(case, err, argv[0])
        if "json" in argv:
            assert not report_problems(_strict_json(out), f"{case.label} compare", shares=False)


def _run_remote(case):
    """The same run read over an fsspec URL (memory://, as s3:// is read): the same outcome."""
    fs = fsspec.filesystem("memory")
    root = f"/fuzz/{os.path.basename(case.logdir)}" + ("" if case.kineto else f"/plugins/profile/{TIMESTAMP}")
    for name in case.names.values():
        path = os.path.join(case.run, name)
        if os.path.isfile(path):
            fs.pipe(f"{root}/{name}", open(path, "rb").read())
    try:
        code, out, err = _cli(["analyze", f"memory:///fuzz/{os.path.basename(case.logdir)}", "--format", "json"])
        assert code == 0, (case.label, "remote", code, err)
        assert "Traceback" not in err and "internal error" not in err, err
        assert all(line.startswith("error: memory://") for line in err.splitlines()), err
        _check_host_report_json(case, out, "remote analyze")
    finally:
        fs.rm(f"/fuzz/{os.path.basename(case.logdir)}", recursive=True)


def _wsgi_client(logdir):
    from tensorboard.backend import application
    from werkzeug import test as werkzeug_test

    from tb_gpu_advisor.plugin.plugin import GpuAdvisorPlugin
    from tensorboard.plugins import base_plugin

    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir))
    plugin.wait_s = 60
    return plugin, werkzeug_test.Client(application.TensorBoardWSGI([plugin]))


def _get(client, route, **params):
    response = client.get(f"/data/plugin/gpu_advisor{route}", query_string=params)
    return response.status_code, _strict_json(response.get_data(as_text=True))


def _run_http(rng, cases, tmp_path):
    plugin, client = _wsgi_client(str(tmp_path / "cases"))
    try:
        code, runs = _get(client, "/runs")
        assert code == 200
        listed = {run["run"]: run["hosts"] for run in runs}
        for case in cases:
            run = case.run_id
            assert sorted(listed[run]) == ["bad", "good"], (case.label, listed.get(run))
            for host in ("good", "bad"):
                code, body = _get(client, "/report", run=run, host=host)
                assert code in (200, 422), (case.label, host, code, body)
                if code == 422:
                    assert host == "bad" and body["error"].startswith(f"cannot analyze {case.names['bad']}: ")
                    assert "\n" not in body["error"] and str(tmp_path) not in body["error"]
                else:
                    assert not report_problems(body, f"{case.label} /report {host}")
                    assert body["file"] == case.names[host]
                for route, params in (
                    ("/kernels", {"limit": rng.choice(["1", "50", "-3", "x"])}),
                    ("/timeline", {"bins": str(rng.choice([1, 7, 240, 1000, 10**9, -5]))}),
                    ("/status", {}),
                    ("/compare", {"baseline_run": run, "baseline_host": "good"}),
                ):
                    code, body = _get(client, route, run=run, host=host, **params)
                    assert code in (200, 400, 422), (case.label, route, code, body)
                    if code == 200:
                        assert not report_problems(body, f"{case.label} {route}", shares=route != "/compare")
    finally:
        plugin.service.shutdown()


def _planned(rng):
    """[(label, Case keyword arguments)]: every crafted kind once, then MUTATED_CASES seeded mutations."""
    planned = [(f"crafted:{kind}", {"data": _crafted(kind)}) for kind in CRAFTED]
    planned += [(f"odd:{kind}", {"odd": kind}) for kind in ODD]
    # A host file whose name is not UTF-8 (byte 0xff): Python lists it with a lone surrogate.
    planned += [("odd:undecodable_name", {"data": _crafted("escape"), "bad_host": "bad\udcff\u202e"})]
    planned += [
        (
            f"kineto:{kind}",
            {
                "data": hostile.kineto_text(kind),
                "kineto": True,
                "depth": "json" if kind.startswith("long") else "light",
            },
        )
        for kind in hostile.KINETO_KINDS
    ]
    planned += [(f"hlo:{kind}", {"data": hostile.hlo_xspace(kind)}) for kind in hostile.HLO_KINDS]
    planned += [
        (f"long:{fragment}", {"data": hostile.long_name_xspace(fragment), "depth": "json"})
        for fragment in hostile.LONG_FRAGMENTS[:3]
    ]
    real = [(path, open(path, "rb").read()) for path in _real_traces()]
    module = hostile.doubling_module(depth=12).to_bytes()
    for index in range(MUTATED_CASES):
        how = ("xplane", "kineto", "hlo")[index % 3]
        if how == "xplane":
            path, data = rng.choice(real)
            planned.append((f"mutated:{os.path.basename(path)}#{index}", {"data": _mutated(rng, data)}))
        elif how == "kineto":
            planned.append((f"mutated:kineto#{index}", {"data": _kineto_mutated(rng), "kineto": True}))
        else:
            planned.append((f"mutated:hlo#{index}", {"data": hostile.hlo_xspace(_mutated(rng, module))}))
    full = set(rng.sample([i for i, (_, kw) in enumerate(planned) if kw.get("depth") != "json"], FULL_CASES))
    return [(label, {**kw, "depth": "full"} if i in full else kw) for i, (label, kw) in enumerate(planned)]


def test_fuzz_every_command_and_the_wsgi_app(tmp_path):
    rng = random.Random(SEED)
    started = time.monotonic()
    root = tmp_path / "cases"
    good_only = tmp_path / "good_only" / "plugins" / "profile" / TIMESTAMP
    _good_builder().write(str(good_only / "good.xplane.pb"))
    cases = []
    for index, (label, kwargs) in enumerate(_planned(rng)):
        case = Case(str(root), index, label, **kwargs)
        _run_commands(case, tmp_path)
        if case.depth == "full" and not kwargs.get("odd"):
            _run_remote(case)
        cases.append(case)
    _run_http(rng, rng.sample([c for c in cases if c.depth != "json" and c.plain], HTTP_CASES), tmp_path)
    print(
        f"fuzz seed {SEED}: {len(cases)} runs, {sum(c.failed for c in cases)} with a bad host refused, "
        f"{time.monotonic() - started:.1f} s"
    )
    kinds = {case.label.partition(":")[0] for case in cases}
    assert {"crafted", "odd", "kineto", "hlo", "long", "mutated"} <= kinds
    assert (
        len(cases)
        == len(CRAFTED) + len(ODD) + 1 + len(hostile.KINETO_KINDS) + len(hostile.HLO_KINDS) + 3 + MUTATED_CASES
    )
