"""The trace confidence beside the verdict in the text, markdown and HTML reports."""

from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.markdown import render_markdown
from tb_gpu_advisor.report.text import render_text
from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import healthy, kernels, report_of


def _low_report():
    builder = TraceBuilder()
    python = builder.thread("python")
    python.step(0, 0, 10_000)
    python.input_wait(0, 6_000)
    kernels(builder.gpu(0), 6_100, 3_800, launch_thread=python)
    return {"schema_version": 1, "run": None, "hosts": [report_of(builder)], "errors": []}


def test_text_puts_the_confidence_and_its_reasons_under_the_verdict():
    lines = render_text(_low_report()).splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("Verdict: Not enough trace"))
    confidence = next(i for i, line in enumerate(lines) if line.startswith("Confidence: low"))
    assert verdict < confidence < verdict + 4
    assert "Framework: tensorflow" in lines[confidence]
    assert lines[confidence + 1].startswith("   - Only 1 complete step in the profile")


def test_markdown_and_html_show_the_level_and_the_reasons():
    report = _low_report()
    markdown = render_markdown(report)
    assert "Confidence: low   Framework: tensorflow" in markdown
    assert "Only 1 complete step in the profile" in markdown
    html = render_html(report)
    assert '<div class="confidence confidence-low"><b>Confidence: low</b> · framework: tensorflow<ul><li>Only 1' in html


def test_a_high_confidence_report_shows_the_level_without_reasons():
    report = {"schema_version": 1, "run": None, "hosts": [report_of(healthy())], "errors": []}
    assert "Confidence: high   Framework: tensorflow\n" in render_text(report)
    assert (
        '<div class="confidence confidence-high"><b>Confidence: high</b> · framework: tensorflow</div>'
        in render_html(report)
    )


def test_reports_without_confidence_still_render():
    report = _low_report()
    for key in ("confidence", "framework", "framework_evidence"):
        del report["hosts"][0]["summary"][key]
    assert "Confidence" not in render_text(report) and 'class="confidence' not in render_html(report)


def test_an_inferred_first_cause_lowers_high_confidence_to_medium_never_raises_low():
    """A diagnosis whose first finding is host.op_stall (a wait inferred from untraced time) carries the reason;
    the report's confidence is then at most medium with that reason first, and left as it is without one."""
    from tb_gpu_advisor.findings.rules.host_stalls import INFERRED_CAUSES, INFERRED_REASON
    from tb_gpu_advisor.report.host_report import _with_inferred_cause

    assert INFERRED_CAUSES["host.op_stall"] == INFERRED_REASON
    high = {"level": "high", "reasons": []}
    low = {"level": "low", "reasons": ["too few steps"]}
    assert _with_inferred_cause(high, INFERRED_REASON) == {"level": "medium", "reasons": [INFERRED_REASON]}
    assert _with_inferred_cause(low, INFERRED_REASON) == {"level": "low", "reasons": [INFERRED_REASON, "too few steps"]}
    assert _with_inferred_cause(high, None) is high
