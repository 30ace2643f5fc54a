"""Kineto's `est. achieved occupancy %` reaches the report as achieved_occupancy_pct, never as the theoretical
occupancy_pct, and the text and HTML kernel tables show it under its own header."""

import pytest

from tb_gpu_advisor.readers.kineto.values import kernel_config
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.text import render_text
from tb_gpu_advisor.vocabulary import OCCUPANCY_LABELS, occupancy_kind
from tests.readers.kineto.real import real_kineto


@pytest.fixture(scope="module")
def alexnet_report():
    from tb_gpu_advisor.api import analyze

    return analyze(str(real_kineto("a100_alexnet_sync")))


@pytest.mark.parametrize(
    "value, expected", [(63, 63.0), (0, None), (101, None), (-3, None), ("63", None), (True, None), (None, None)]
)
def test_the_estimate_is_a_percentage_and_zero_is_unknown(value, expected):
    assert kernel_config({"est. achieved occupancy %": value}).achieved_occupancy_pct == expected


def test_a_real_pytorch_trace_reports_the_estimate_apart_from_theoretical_occupancy(alexnet_report):
    host = alexnet_report["hosts"][0] if "hosts" in alexnet_report else alexnet_report
    kernels = host["kernels"]
    assert all(k["occupancy_pct"] is None for k in kernels)
    sgemm = next(k for k in kernels if k["name"].startswith("ampere_sgemm_32x32_sliced1x4_tn"))
    assert sgemm["achieved_occupancy_pct"] == 25.0  # the trace's value for this launch
    # The nvjet/xmma kernels whose estimate Kineto writes as 0 stay unknown.
    assert any(k["achieved_occupancy_pct"] is None for k in kernels)
    assert occupancy_kind(kernels) == "achieved"


def test_the_text_and_html_tables_head_the_column_by_what_it_holds(alexnet_report):
    header = OCCUPANCY_LABELS["achieved"][0].lower()
    text = render_text(alexnet_report)
    table = text[text.index("Kernels") :]
    assert header in table.splitlines()[2] and "25.0%" in table
    assert f'<th class="num">{header}</th>' in render_html(alexnet_report)


def test_xplane_kernels_keep_theoretical_occupancy():
    kernels = [{"occupancy_pct": 50.0, "achieved_occupancy_pct": None}, {"occupancy_pct": None}]
    assert occupancy_kind(kernels) == "theoretical" and occupancy_kind([]) == "theoretical"
