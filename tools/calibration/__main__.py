"""`python -m tools.calibration [--output PATH] [--check]`: writes (or checks) docs/calibration.md."""

import argparse
import pathlib
import sys

from tools.calibration.table import calibration_rows, render_markdown

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.calibration", description=__doc__)
    parser.add_argument("--root", default=str(ROOT), help="the repository root holding tests/data/real")
    parser.add_argument("--output", help="where to write (default: ROOT/docs/calibration.md)")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when the file differs from what the script produces"
    )
    args = parser.parse_args(argv)
    output = pathlib.Path(args.output or pathlib.Path(args.root) / "docs" / "calibration.md")
    text = render_markdown(calibration_rows(args.root))
    if args.check:
        current = output.read_text(encoding="utf-8") if output.exists() else None
        if current != text:
            print(f"{output} is stale: run python -m tools.calibration", file=sys.stderr)
            return 1
        print(f"{output} is current")
        return 0
    output.write_text(text, encoding="utf-8")
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
