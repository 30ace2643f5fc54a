"""What the comparison and report subcommands share: exit codes, target options, loading a run report."""

from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.discovery import resolve_target
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.fanout import add_dask_argument, executor_for
from tb_gpu_advisor.pipeline import run_report

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2


def add_max_file_argument(parser):
    parser.add_argument("--max-file-mb", type=float, default=DEFAULT_MAX_FILE_BYTES / 2**20,
                        help="refuse .xplane.pb files larger than this (default: %(default).0f)")


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
    line); ProfileError when the target itself is bad. `dask`: a scheduler address to analyze the hosts on."""
    run_id, host_files = resolve_target(path, run=run, host=host)
    with executor_for(dask) as executor:
        report = run_report(run_id, host_files, max_bytes=int(max_file_mb * 2**20), executor=executor)
    for error in report["errors"]:
        print(f"error: {error['file']}: {error['error']}", file=err)
    if report["hosts"]:
        return report
    if not report["errors"]:
        raise ProfileError(path, "no host could be analyzed")
    return None


def load_sides(args, err):
    """(baseline, candidate) run reports named on the command line, or None after printing why."""
    baseline = load_side(args, "baseline", args.baseline, err)
    candidate = load_side(args, "candidate", args.candidate, err) if baseline else None
    return None if baseline is None or candidate is None else (baseline, candidate)


def load_side(args, side, path, err):
    """The run report of the baseline or candidate named on the command line."""
    host = getattr(args, f"{side}_host") or args.host
    return load_report(path, getattr(args, f"{side}_run"), host, args.max_file_mb, err,
                       dask=getattr(args, "dask", None))
