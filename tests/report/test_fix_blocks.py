"""The HTML report splits a fix into prose and code as the tab does (static/fix_text.js, frontend/tests/
fix_text.test.mjs holds the same cases)."""

from tb_gpu_advisor.report.fix_blocks import FixBlock, fix_blocks


def test_indented_lines_are_code_the_rest_prose_paragraphs():
    fix = (
        "Keep values on the GPU\nand read them rarely:\n\n    running_loss += loss.detach()\n\n"
        "    if step % 100 == 0:\n        print(running_loss.item())\n\nTime the loader alone.\nThen compare."
    )
    assert fix_blocks(fix) == (
        FixBlock("prose", "Keep values on the GPU and read them rarely:"),
        FixBlock("code", "running_loss += loss.detach()\n\nif step % 100 == 0:\n    print(running_loss.item())"),
        FixBlock("prose", "Time the loader alone. Then compare."),
    )


def test_nothing_is_dropped():
    note = "x" * 884
    assert fix_blocks(f"{note}\n\nSecond paragraph.") == (
        FixBlock("prose", note),
        FixBlock("prose", "Second paragraph."),
    )
    assert fix_blocks("\ta = 1\r\n\tb = 2") == (FixBlock("code", "a = 1\nb = 2"),)
    assert fix_blocks("") == () and fix_blocks(None) == ()
