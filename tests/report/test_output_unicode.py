"""A lone surrogate or a bidirectional override in a trace name (issue 28) never breaks or reorders an output:
text, markdown and HTML encode as UTF-8 with the name's controls visible, and the JSON (CLI and HTTP) holds
U+FFFD where the name had a surrogate, so strict parsers accept it."""

import io
import json

import pytest

from tb_gpu_advisor import cli
from tb_gpu_advisor.report.finite import finite, to_json
from tb_gpu_advisor.report.safe_text import escape_controls, valid_unicode
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event

HOSTILE = "k\ud800\u202eevil\u2067x\u2069\u200f\udc80"  # two lone surrogates (a pair would decode to one char)
BIDI = (
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A Kineto trace whose kernel and op names carry lone surrogates (JSON escapes) and bidi controls."""
    events = []
    for step in range(4):
        at = 1_000 + step * 1_000
        events += [
            x_event("user_annotation", f"ProfilerStep#{step}", at, 900),
            launch(at + 10, 5, 100 + step),
            kernel(HOSTILE, at + 100, 500, 100 + step, grid=[4, 1, 1], block=[128, 1, 1]),
            x_event("cpu_op", "aten::" + HOSTILE, at + 5, 50),
        ]
    path = tmp_path_factory.mktemp("hostile") / "host.pt.trace.json"
    path.write_text(trace_text(events), encoding="utf-8")
    assert "\\ud800" in path.read_text(encoding="utf-8")
    return path


def _run(*argv):
    """Exit code and stdout bytes of the CLI writing to a strict UTF-8 stream, as a terminal or pipe would."""
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
    code = cli.main(list(argv), out=out, err=io.StringIO())
    out.flush()
    return code, raw.getvalue()


def _no_raw_controls(text):
    assert not any(ch in text for ch in BIDI), "a bidi control reached the output raw"
    assert not any("\ud800" <= ch <= "\udfff" for ch in text)


@pytest.mark.parametrize("form", ["text", "markdown"])
def test_text_and_markdown_encode_with_the_controls_visible(trace, form):
    code, data = _run("analyze", str(trace), "--format", form)
    assert code == 0
    text = data.decode("utf-8")
    _no_raw_controls(text)
    assert "\\u202e" in text and "\ufffd" in text


def test_html_report_encodes_with_the_controls_visible(trace, tmp_path):
    page = tmp_path / "report.html"
    code, _ = _run("report", str(trace), "-o", str(page))
    assert code == 0
    text = page.read_bytes().decode("utf-8")
    _no_raw_controls(text)
    assert "\\u202e" in text and "\\u2067" in text


def test_json_has_no_surrogate_and_parses_strictly(trace):
    code, data = _run("analyze", str(trace), "--format", "json")
    assert code == 0
    text = data.decode("utf-8")
    assert "\\ud8" not in text.lower() and "\\udf" not in text.lower()
    strings = []

    def walk(value):
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key), walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(text))
    for string in strings:
        string.encode("utf-8")
    assert any(
        "k\ufffd\u202eevil\u2067x\u2069\u200f\ufffd" in s for s in strings
    )  # the name kept, only its surrogates replaced


def test_finite_serves_valid_unicode_keys_and_values():
    value = finite({"a\udc80": ["x\ud800", 1.0, float("nan")]})
    assert value == {"a\ufffd": ["x\ufffd", 1.0, None]}
    to_json({"k": HOSTILE}).encode("utf-8")
    assert valid_unicode("plain µs") == "plain µs"
    assert escape_controls(HOSTILE) == "k\ufffd\\u202eevil\\u2067x\\u2069\\u200f\ufffd"
