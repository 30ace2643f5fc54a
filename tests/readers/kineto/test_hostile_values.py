"""Hostile or corrupt values in a Kineto trace: a bad host is one line naming its file and the reason, the good
host beside it is analyzed, and a value no profiler records is left out with a warning, never a wrong report."""

import gzip
import io
import json

import pytest

from tb_gpu_advisor import cli
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.readers.kineto.build import load_kineto_model
from tb_gpu_advisor.readers.kineto.stream import MAX_VALUE_CHARS
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event

T0 = 1_700_000_000_000_000
GOOD = [
    x_event("user_annotation", "ProfilerStep#1", T0, 1000),
    launch(T0 + 10, 5, 1),
    kernel("k", T0 + 20, 100, 1),
    x_event("user_annotation", "ProfilerStep#2", T0 + 1000, 1000),
    launch(T0 + 1010, 5, 2),
    kernel("k", T0 + 1020, 100, 2),
]


def _raw_event(name='"x"', ts=T0 + 50, dur=3, pid=1, args="{}"):
    return (
        f'{{"ph": "X", "cat": "cpu_op", "name": {name}, "pid": {pid}, "tid": 1, "ts": {ts}, "dur": {dur}, '
        f'"args": {args}}}'
    )


def _run(tmp_path, bad_events=None, bad_text=None):
    run = tmp_path / "run"
    run.mkdir()
    (run / "good.1.pt.trace.json").write_text(trace_text(GOOD))
    (run / "bad.1.pt.trace.json").write_text(bad_text if bad_text is not None else trace_text(bad_events))
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["analyze", str(run), "--format", "json"], out=out, err=err)
    return code, json.loads(out.getvalue()) if out.getvalue() else None, err.getvalue(), run


def _kernels(host):
    return host["summary"]["kernel_count"] if "kernel_count" in host["summary"] else len(host["kernels"])


@pytest.mark.parametrize(
    "case, events, warning",
    [
        ("dur 1e100", GOOD + [_raw_event(dur="1e100")], "1 event with a time no profiler records"),
        ("ts 1e308 first", [_raw_event(ts="1e308")] + GOOD, "first: ts=1E+308 dur=3"),
        ("ts 1e999999999", GOOD + [_raw_event(ts="1e999999999")], "1 event with a time no profiler records"),
        ("negative dur", GOOD + [_raw_event(dur=-5)], "1 event with a time no profiler records"),
        ("ts far from the rest, first", [_raw_event(ts=1)] + GOOD, "1 event more than 13 days from the trace's other"),
        ("ts far from the rest, last", GOOD + [_raw_event(ts=T0 - 10**13)], "1 event more than 13 days"),
    ],
)
def test_an_implausible_time_is_left_out_with_a_warning_and_the_rest_kept(tmp_path, case, events, warning):
    code, report, err, _ = _run(tmp_path, events)
    assert code == 0 and err == "", case
    bad = next(h for h in report["hosts"] if h["host"] == "bad")
    assert bad["summary"]["step_time_ms"]["count"] == 2, case  # the steps are not lost to one stray event
    assert any(warning in note for note in bad["notes"]), (case, bad["notes"])


@pytest.mark.parametrize(
    "case, events",
    [
        (
            "ids beyond 2**64",
            GOOD + [_raw_event(pid=2**70), launch(T0 + 60, 5, 2**70), kernel("k2", T0 + 70, 5, 2**70, stream=2**66)],
        ),
        ("device beyond int64", GOOD + [kernel("k3", T0 + 80, 5, 9, device=2**65)]),
        (
            "launch values beyond 32 bits",
            GOOD + [kernel("k4", T0 + 90, 5, 10, grid=[2**40, 1, 1], **{"registers per thread": 2**70})],
        ),
    ],
)
def test_integers_beyond_int64_never_stop_the_host(tmp_path, case, events):
    code, report, err, _ = _run(tmp_path, events)
    assert code == 0 and err == "" and {h["host"] for h in report["hosts"]} == {"good", "bad"}, case


@pytest.mark.parametrize(
    "case, text, problem",
    [
        (
            "10,000-deep nesting",
            trace_text(GOOD + [_raw_event(args="[" * 10_000 + "]" * 10_000)]),
            "nests JSON values too deeply",
        ),
        (
            "an integer of 5,000 digits",
            trace_text(GOOD + [_raw_event(ts="1" + "0" * 5000)]),
            "holds an integer of more than 4,300 digits",
        ),
    ],
)
def test_a_file_no_decoder_should_build_is_one_line_naming_it_and_the_good_host_is_reported(
    tmp_path, case, text, problem
):
    code, report, err, run = _run(tmp_path, bad_text=text)
    assert code == 0 and [h["host"] for h in report["hosts"]] == ["good"], case
    assert err.startswith(f"error: {run / 'bad.1.pt.trace.json'}: ") and problem in err, err
    assert len(err.splitlines()) == 1


def test_every_bad_host_alone_is_exit_2(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(trace_text(GOOD + [_raw_event(args="[" * 10_000 + "]" * 10_000)]))
    err = io.StringIO()
    assert cli.main(["analyze", str(path)], out=io.StringIO(), err=err) == 2
    assert "nests JSON values too deeply" in err.getvalue() and "Traceback" not in err.getvalue()


def test_a_lone_surrogate_in_a_name_becomes_a_replacement_character(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(
        trace_text(GOOD + [kernel("gemm\\ud800x", T0 + 60, 5, 3).replace("gemm\\\\ud800x", "gemm\\ud800x")])
    )
    model = load_kineto_model(path)
    names = model.gpus[0].activity.names
    assert "gemm\ufffdx" in names and all(name.encode("utf-8") for name in names)


def test_implausible_device_properties_are_left_out_with_a_warning(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    props = [
        {
            "id": 0,
            "name": "NVIDIA A100-SXM4-80GB",
            "totalGlobalMem": -5,
            "computeMajor": 10**6,
            "computeMinor": 0,
            "numSms": 10**6,
        }
    ]
    path.write_text(trace_text(GOOD, deviceProperties=props))
    model = load_kineto_model(path)
    caps = model.gpus[0].capabilities
    assert (caps.sm_count, caps.memory_bytes, caps.compute_capability) == (None, None, None)
    assert caps.model_name == "NVIDIA A100-SXM4-80GB"
    warnings = " | ".join(model.trace_warnings)
    assert "1000000 multiprocessors is not a value any GPU has" in warnings
    assert "-5 bytes of memory" in warnings and "compute capability (1000000, 0)" in warnings


def test_a_copy_size_no_machine_moves_is_unknown_and_totals_stay_exact(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    copies = [
        x_event(
            "gpu_memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            T0 + 100 + i,
            1,
            pid=0,
            tid=7,
            device=0,
            stream=7,
            correlation=100 + i,
            bytes=size,
        )
        for i, size in enumerate((2**70, 2**41, 2**39, 2**39, 2**39))
    ]
    path.write_text(trace_text(GOOD + copies))
    model = load_kineto_model(path)
    activity = model.gpus[0].activity
    sizes = sorted(activity.copies[i].size_bytes for i in activity.copy_id[activity.kind == ActivityKind.MEMCPY])
    assert sizes == [0, 0, 2**39, 2**39, 2**39]
    assert any("2 copies with a size above 1 TiB" in w for w in model.trace_warnings)


def test_a_gzip_bomb_stops_at_the_limit_on_decompressed_bytes(tmp_path):
    path = tmp_path / "bomb.1.pt.trace.json.gz"
    event = _raw_event(args='{"padding": "' + "p" * 2000 + '"}').encode()
    body = b'{"traceEvents": [' + b",".join([event] * 7_500) + b"]}"  # 15 MB of events
    path.write_bytes(gzip.compress(body, compresslevel=9))
    assert path.stat().st_size < 1 << 20
    with pytest.raises(
        ProfileError,
        match=r"bomb\.1\.pt\.trace\.json\.gz: inflates to more than the 8\.0 MB "
        r"limit \(the limit applies to the decompressed size",
    ):
        load_kineto_model(path, max_bytes=8 * 2**20)
    assert load_kineto_model(path, max_bytes=16 * 2**20).host_activity.busy.total_ps > 0


def test_one_json_value_may_not_outgrow_the_window(tmp_path):
    path = tmp_path / "long.1.pt.trace.json.gz"
    path.write_bytes(
        gzip.compress(trace_text(GOOD + [_raw_event(name='"' + "a" * (MAX_VALUE_CHARS + 10) + '"')]).encode())
    )
    with pytest.raises(ProfileError, match=f"holds a JSON value longer than {MAX_VALUE_CHARS:,} characters"):
        load_kineto_model(path)
