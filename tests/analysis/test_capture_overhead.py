"""The capture-overhead note and the steps table speak of a GPU only when the trace has one."""

from tb_gpu_advisor.api import analyze
from tb_gpu_advisor.report.text import render_text
from tests.data import REAL


def test_a_cpu_only_trace_gets_no_gpu_wording():
    """The gloo DDP ranks recorded shapes on the CPU: the note says what that costs the host without a GPU busy
    0.00 ms, and the steps table has no GPU busy column."""
    (path,) = (REAL / "ddp_cpu" / "balanced").glob("rank0.*.pt.trace.json.gz")
    report = analyze(str(path))
    (host,) = report["hosts"]
    (note,) = [note for note in host["notes"] if note.startswith("This capture recorded input shapes")]
    assert "GPU" not in note and "the host runs the whole step" in note
    text = render_text(report)
    steps = text[text.index("\nSteps\n") :]
    assert "GPU busy" not in steps.split("\n\n")[0] and "collect" in steps.split("\n\n")[0]
