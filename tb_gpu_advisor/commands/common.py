"""What the subcommands share: the target and scale options, the JSON renderer, loading reports."""

import argparse
import math

from tb_gpu_advisor.commands.progress import ProgressBar, is_terminal
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.files.discovery import resolve_target
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.fanout import executor_for
from tb_gpu_advisor.file_size import limit_bytes
from tb_gpu_advisor.readers.progress import reporting_progress
from tb_gpu_advisor.pipeline import run_report
from tb_gpu_advisor.report.finite import to_json


def render_json(report):
    """The machine contract (docs/report.md): indented JSON, non-finite numbers as null."""
    return to_json(report)


def megabytes(text, unit="MB"):
    """argparse type of --max-file-mb: a finite number of MB above zero (a usage error, exit 2, otherwise)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of {unit} above 0, not {text!r}")
    return value


def seconds(text):
    """argparse type of a duration: a finite number of seconds above zero."""
    return megabytes(text, unit="seconds")


def add_max_file_argument(parser):
    parser.add_argument(
        "--max-file-mb",
        type=megabytes,
        default=DEFAULT_MAX_FILE_BYTES / 2**20,
        metavar="MB",
        help="refuse profile files larger than this, decompressed (default: %(default).0f)",
    )


def add_dask_argument(parser):
    """Adds `--dask ADDRESS` to a subcommand that analyzes runs."""
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="analyze the hosts on this Dask distributed scheduler (e.g. tcp://10.0.0.5:8786); "
        "the workers must see the files at the same paths (default: local processes)",
    )


def add_target_arguments(parser, host_help="analyze only this host"):
    """PATH, --run, --host, --max-file-mb and --dask: one profile target to analyze."""
    parser.add_argument(
        "path",
        help="a logdir, a run directory (holding <host>.xplane.pb or "
        "<worker>.<span>.pt.trace.json[.gz] files) or one file",
    )
    parser.add_argument("--run", help="run id as the Profile tab shows it (default: the newest run)")
    parser.add_argument("--host", help=host_help)
    add_max_file_argument(parser)
    add_dask_argument(parser)


def add_side_arguments(parser):
    """--baseline-run/--candidate-run and --host/--baseline-host/--candidate-host for two targets."""
    for side in ("baseline", "candidate"):
        parser.add_argument(f"--{side}-run", help=f"run id of the {side} logdir (default: its newest run)")
        parser.add_argument(f"--{side}-host", help=f"use only this host of the {side}")
    parser.add_argument("--host", help="use only this host on both sides")
    add_max_file_argument(parser)
    add_dask_argument(parser)


def load_report(path, run, host, max_file_mb, err, dask=None):
    """The run report of a target, or None when no host could be read (each bad host printed to `err` as one
    line); ProfileError when the target itself is bad. `dask`: a scheduler address to analyze the hosts on.
    On a terminal, `err` shows a progress bar while a long analysis runs."""
    run_id, host_files = resolve_target(path, run=run, host=host)
    progress = ProgressBar(err, host_files) if is_terminal(err) else None
    try:
        with executor_for(dask) as executor, reporting_progress(progress.read if progress else None):
            report = run_report(
                run_id,
                host_files,
                max_bytes=limit_bytes(max_file_mb),
                executor=executor,
                on_host_done=progress.host_done if progress else None,
            )
    finally:
        if progress is not None:
            progress.close()
    for error in report["errors"]:
        print(f"error: {error['file']}: {error['error']}", file=err)
    if report["hosts"]:
        return report
    if not report["errors"]:
        raise ProfileError(path, "no host could be analyzed")
    return None


def load_comparison(args, err):
    """The Comparison of the baseline and candidate named on the command line, or None after printing why."""
    baseline = load_side(args, "baseline", args.baseline, err)
    candidate = load_side(args, "candidate", args.candidate, err) if baseline else None
    return None if baseline is None or candidate is None else compare_reports(baseline, candidate)


def load_side(args, side, path, err):
    """The run report of the baseline or candidate named on the command line."""
    host = getattr(args, f"{side}_host") or args.host
    return load_report(
        path, getattr(args, f"{side}_run"), host, args.max_file_mb, err, dask=getattr(args, "dask", None)
    )
