"""A trace without a GPU reads without GPU words: no GPU busy column in the Steps table and a capture-overhead note
sized on the host (review G11, on the committed 4-rank gloo DDP CPU capture); the note is left out where its cost is
inside run-to-run noise (the MI250 capture: 35 recorded ops in a 9 ms step)."""

import pytest

from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.report.text import render_text
from tests.data import REAL, real_trace


@pytest.fixture(scope="module")
def ddp_rank0():
    return host_report(load_model(str(next((REAL / "ddp_cpu" / "balanced").glob("rank0.*.pt.trace.json.gz")))))


def test_cpu_only_steps_table_has_no_gpu_column(ddp_rank0):
    text = render_text({"hosts": [ddp_rank0]})
    steps = text[text.index("\nSteps\n") :]
    header = steps.splitlines()[3]
    assert header.split()[:2] == ["step", "time"] and "GPU" not in header


def test_cpu_only_overhead_note_is_sized_on_the_host(ddp_rank0):
    """287 ops recorded with shapes per 9.67 ms step: about 0.7 ms at 2.5 us each, a material share (7%)."""
    (note,) = [n for n in ddp_rank0["notes"] if n.startswith("This capture recorded")]
    assert "GPU" not in note
    assert "about 0.7 ms of each 9.67 ms step" in note


def test_gpu_trace_keeps_the_gpu_column():
    report = host_report(load_model(str(real_trace("kineto/v100_2rank_test.pt.trace.json.gz"))))
    text = render_text({"hosts": [report]})
    steps = text[text.index("\nSteps\n") :]
    assert "GPU busy" in steps.splitlines()[3]


def test_immaterial_overhead_note_is_left_out():
    report = host_report(load_model(str(real_trace("kineto/mi250_minitoy_train.pt.trace.json.gz"))))
    assert not [n for n in report["notes"] if n.startswith("This capture recorded")]


def test_cpu_only_header_has_no_gpu_busy_figure(ddp_rank0):
    header = next(line for line in render_text({"hosts": [ddp_rank0]}).splitlines() if line.startswith("GPUs:"))
    assert header.startswith("GPUs: none   input wait:") and "busy" not in header
