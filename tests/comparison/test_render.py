import json

from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.comparison.render import COMPARISON_RENDERERS, render_comparison_markdown, render_comparison_text

from .reports import host_from_steps


def test_text_names_the_driver_and_fits_a_terminal(pair_reports):
    reports = pair_reports["transfer"]
    text = render_comparison_text(compare_reports(reports["problem"], reports["fixed"]))
    assert "Verdict: " in text and "Host→device copy ←" in text
    assert "Findings\n========\nResolved: [high]" in text
    assert (
        "Kernels\n=======\nMatched by name, op and launch shape, time per step (per launch where a kernel\n"
        "  runs more or less often per step): 0 new, 0 fused, 0 gone"
    ) in text
    lines = text.splitlines()
    verdict_at = next(i for i, line in enumerate(lines) if line.startswith("Verdict: "))
    assert all(len(line) <= 80 for line in lines[: verdict_at + 4])


def test_markdown_escapes_kernel_names_and_pipes():
    name = "void k<float, 2>(T*) | & more"
    base = host_from_steps([10.0, 10.0], kernels=[(name, 100.0, 1)])
    cand = host_from_steps([10.0, 10.0], kernels=[(name, 300.0, 1)])
    markdown = render_comparison_markdown(compare_reports(base, cand))
    assert "void k&lt;float, 2&gt;(T\\*) \\| &amp; more" not in markdown  # '*' is left alone
    assert "void k&lt;float, 2&gt;(T*) \\| &amp; more" in markdown
    assert "<float" not in markdown
    assert markdown.startswith("# GPU Advisor comparison\n\n**Verdict:** Within noise")
    assert "## Slower kernels" in markdown


def test_findings_are_listed_by_group():
    base = host_from_steps([10.0, 10.0], findings=[{"id": "GA1", "severity": "high", "title": "Input bound"}])
    text = render_comparison_text(compare_reports(base, host_from_steps([10.0, 10.0])))
    assert "Resolved: [high] Input bound (GA1)" in text


def test_json_round_trips():
    comparison = compare_reports(host_from_steps([10.0, 12.0]), host_from_steps([5.0, 6.0]))
    assert json.loads(COMPARISON_RENDERERS["json"](comparison)) == comparison
