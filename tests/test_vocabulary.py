"""One vocabulary: the tab's vocabulary.js is generated from tb_gpu_advisor/vocabulary.py, and the CLI, the HTML
report and the tab take their labels, units and colours from the same places."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tb_gpu_advisor import vocabulary
from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES
from tb_gpu_advisor.report import charts, sections
from tb_gpu_advisor.report.tab_colors import COLORS, tab_colors

REPO = Path(__file__).resolve().parents[1]


def test_the_tab_module_is_generated_from_the_python_one():
    """Regenerate with `python -m tb_gpu_advisor.vocabulary` when this fails."""
    assert Path(vocabulary.JS_PATH).read_text(encoding="ascii") == vocabulary.render_js()


def test_the_tab_reads_the_same_label_strings(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    shutil.copytree(REPO / "tb_gpu_advisor" / "static", tmp_path / "static")
    (tmp_path / "package.json").write_text(json.dumps({"type": "module"}))
    script = (
        "import {BREAKDOWN_LABELS, BOTTLENECK_LABELS, TRANSFER_LABELS, formatUs, humanizeKey} from "
        "'./static/format.js';\nconsole.log(JSON.stringify({breakdown: BREAKDOWN_LABELS, bottleneck: "
        "BOTTLENECK_LABELS, transfer: TRANSFER_LABELS, us: formatUs(12.5), key: humanizeKey('gpu_busy_pct')}));\n"
    )
    (tmp_path / "probe.js").write_text(script)
    out = json.loads(
        subprocess.run([node, "probe.js"], cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60).stdout
    )
    assert out["breakdown"] == vocabulary.BREAKDOWN_LABELS == sections.BREAKDOWN_LABELS
    assert out["bottleneck"] == vocabulary.BOTTLENECK_LABELS and out["transfer"] == vocabulary.TRANSFER_LABELS
    assert out["us"] == f"12.5{vocabulary.NBSP}{vocabulary.MICRO}" and out["key"] == "GPU busy (%)"


def test_every_category_has_a_label_a_short_label_and_the_tabs_colour():
    assert list(vocabulary.BREAKDOWN_LABELS) == list(BREAKDOWN_CATEGORIES) == list(vocabulary.BREAKDOWN_SHORT_LABELS)
    assert charts.CATEGORY_COLORS == {key: COLORS[key] for key in BREAKDOWN_CATEGORIES}
    assert len(set(charts.CATEGORY_COLORS.values())) == len(BREAKDOWN_CATEGORIES)


def test_colours_come_from_the_light_theme_and_the_category_rules():
    css = (
        ":root { --c-a: #111111; --c-b: #222222; }\n[data-theme=dark] { --c-a: #999999; }\n"
        ".cat-x, .cat-y { fill: var(--c-a); }\n.cat-z { fill: var(--c-b); background: var(--c-b); }\n"
        ".other { fill: var(--c-b); }"
    )
    assert tab_colors(css) == {"x": "#111111", "y": "#111111", "z": "#222222"}


def test_numbers_keep_their_units_and_labels_read_in_sentences():
    bind = vocabulary.bind_units
    nb = vocabulary.NBSP
    assert bind("took 37.14 ms (40.7% of 5 steps) at 9 GB/s") == f"took 37.14{nb}ms (40.7% of 5 steps) at 9{nb}GB/s"
    assert bind(f"12 {vocabulary.MICRO} and 3 s, 2 sources") == f"12{nb}{vocabulary.MICRO} and 3{nb}s, 2 sources"
    assert vocabulary.in_sentence("Input wait") == "input wait" and vocabulary.in_sentence("GPU busy") == "GPU busy"


def test_counts_agree_with_their_noun():
    from tb_gpu_advisor.vocabulary import counted

    assert counted(1, "host-to-device copy", "host-to-device copies") == "1 host-to-device copy"
    assert counted(2, "host-to-device copy", "host-to-device copies") == "2 host-to-device copies"
    assert counted(8.0, "time") == "8 times"
    assert counted(7.5, "time") == "7.5 times"
    assert counted(1234, "thread") == "1,234 threads"


def test_matrix_units_follow_the_vendor_of_the_gpus_with_kernels():
    from tb_gpu_advisor.vocabulary import matrix_unit_labels

    assert matrix_unit_labels([{"vendor": "AMD", "kernel_count": 54}]) == ("MC", "Matrix cores")
    assert matrix_unit_labels([{"vendor": "NVIDIA", "kernel_count": 3}]) == ("TC", "Tensor Cores")
    assert matrix_unit_labels([]) == ("TC", "Tensor Cores")
