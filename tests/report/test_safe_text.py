"""Control characters from trace names never reach a terminal or a markdown page raw."""

import io

from tb_gpu_advisor.report.safe_text import EscapingWriter, escape_controls
from tb_gpu_advisor.report.text import render_table
from tb_gpu_advisor.report.section_model import Table

OSC_TITLE = "k\x1b]0;PWNED\x07\x1b[31mred\u202e\x9b"


def test_controls_become_visible_escapes_and_newlines_stay():
    assert escape_controls(OSC_TITLE + "\nnext") == "k\\x1b]0;PWNED\\x07\\x1b[31mred\\u202e\\x9b\nnext"
    assert escape_controls("a\nb\tc", keep="") == "a\\x0ab\\x09c"
    assert escape_controls("plain text, µs and ü") == "plain text, µs and ü"


def test_a_name_with_a_newline_cannot_forge_a_table_row():
    lines = render_table(Table(headers=("kernel", "time"), rows=[("evil\nfake row", "1 ms")], numeric=(False, True)))
    assert len(lines) == 3 and "\\x0a" in lines[2]


def test_the_cli_streams_escape_everything_written():
    target = io.StringIO()
    EscapingWriter(target).write(f"error: {OSC_TITLE}.xplane.pb: bad\n")
    assert "\x1b" not in target.getvalue() and target.getvalue().endswith("bad\n")
