"""Writes the text and JSON report of every demo run and every committed real trace into one folder, so two
commits can be compared byte for byte (restructuring must change none) or a reviewer can read them all.

    .venv/bin/python scripts/report_snapshot.py OUT_DIR            # write OUT_DIR/<name>.txt and .json
    .venv/bin/python scripts/report_snapshot.py OUT_DIR --diff OLD  # then list the names whose reports differ
"""

import argparse
import filecmp
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tb_gpu_advisor.api import analyze  # noqa: E402
from tb_gpu_advisor.commands.common import render_json  # noqa: E402
from tb_gpu_advisor.report.text import render_text  # noqa: E402

TRACE_SUFFIXES = (".xplane.pb", ".pt.trace.json", ".pt.trace.json.gz")


def targets():
    """(name, path) of each demo run directory and each committed real trace file, in a fixed order."""
    for run in sorted((ROOT / "demo_logs").glob("*/plugins/profile/*")):
        yield "demo__" + run.parent.parent.parent.name, run
    real = ROOT / "tests" / "data" / "real"
    for path in sorted(real.rglob("*")):
        if path.is_file() and path.name.endswith(TRACE_SUFFIXES):
            yield "real__" + "__".join(path.relative_to(real).parts), path


def write(out):
    out.mkdir(parents=True, exist_ok=True)
    for name, path in targets():
        try:
            report = analyze(str(path), executor="inline")
            text, data = render_text(report), render_json(report)
        except Exception as error:  # a snapshot records the failure instead of stopping
            text = data = f"ERROR {type(error).__name__}: {error}\n"
        (out / f"{name}.txt").write_text(text, encoding="utf-8", errors="backslashreplace")
        (out / f"{name}.json").write_text(data, encoding="utf-8", errors="backslashreplace")
        print(name, file=sys.stderr)


def differing(new, old):
    names = sorted({p.name for p in new.iterdir()} | {p.name for p in old.iterdir()})
    return [
        n
        for n in names
        if not ((new / n).exists() and (old / n).exists() and filecmp.cmp(new / n, old / n, shallow=False))
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--diff", type=pathlib.Path, help="an earlier snapshot to compare with")
    args = parser.parse_args()
    write(args.out)
    if args.diff:
        changed = differing(args.out, args.diff)
        print("\n".join(changed) if changed else "identical")
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
