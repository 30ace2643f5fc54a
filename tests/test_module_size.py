"""Small modules (the developers' guide): no module of the package, Python or the tab's JavaScript and CSS, runs past
MAX_LINES; generated data (static/vocabulary.js, written from vocabulary.py) and the JSON schemas are not modules.
A module that grows past it is split by concern, as findings/rules/host/ was."""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tb_gpu_advisor"
MAX_LINES = 400
SUFFIXES = (".py", ".js", ".css")
GENERATED = {"static/vocabulary.js"}


def module_lengths(package=PACKAGE):
    """{path relative to the package: line count} of every module checked."""
    return {
        path.relative_to(package).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(package.rglob("*"))
        if path.suffix in SUFFIXES and path.relative_to(package).as_posix() not in GENERATED
    }


def test_no_module_runs_past_the_limit():
    lengths = module_lengths()
    assert len(lengths) > 200 and "findings/rules/host/entries.py" in lengths  # the walk finds the package
    too_long = {path: lines for path, lines in lengths.items() if lines > MAX_LINES}
    assert not too_long, f"split these by concern (at most {MAX_LINES} lines): {too_long}"


def test_the_check_sees_a_long_module_and_skips_generated_data(tmp_path):
    (tmp_path / "static").mkdir()
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    (tmp_path / "static" / "vocabulary.js").write_text("//\n" * (MAX_LINES + 1), encoding="utf-8")
    (tmp_path / "static" / "app.js").write_text("//\n" * MAX_LINES, encoding="utf-8")
    assert module_lengths(tmp_path) == {"long.py": MAX_LINES + 1, "static/app.js": MAX_LINES}
