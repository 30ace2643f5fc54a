"""Text tables fit the 80-column report: a long text value wraps under its own column."""

import os

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.report.section_model import Table
from tb_gpu_advisor.report.sections import host_sections
from tb_gpu_advisor.report.text import WIDTH, render_section, render_table

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

POOLS = (
    "python x1, tf_Compute x4, tf_data_iterator_get_next x1, tf_data_iterator_resource x1, "
    "tf_data_private_threadpool x8"
)


def test_a_long_last_column_wraps_under_itself():
    lines = render_table(
        Table(("setting", "value"), [("framework", "tensorflow"), ("thread pools", POOLS)], (False, False))
    )
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[3] == "thread pools  python x1, tf_Compute x4, tf_data_iterator_get_next x1,"
    assert lines[4] == "              tf_data_iterator_resource x1, tf_data_private_threadpool x8"
    assert lines[2] == "framework     tensorflow"


def test_the_configuration_section_of_a_multi_gpu_demo_fits():
    report = host_report(
        load_model(
            os.path.join(
                REPO, "demo_logs/multi_gpu_straggler/plugins/profile/2026_01_15_09_20_00/pcie-4gpu-02.xplane.pb"
            )
        )
    )
    section = next(s for s in host_sections(report) if s.title == "Configuration")
    lines = render_section(section)
    assert any(line.startswith("thread pools") for line in lines)
    assert all(len(line) <= WIDTH for line in lines)
