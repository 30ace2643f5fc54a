"""`tb-gpu-advisor check`: a CI gate that exits 1 when the candidate regressed beyond a threshold and noise."""

import argparse

import os

from tb_gpu_advisor.commands.common import add_side_arguments, load_report, load_side, render_json
from tb_gpu_advisor.comparison.check_document import check_document
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.comparison.gate import DEFAULT_MAX_REGRESSION_PCT, METRICS, GateError, check_comparisons
from tb_gpu_advisor.files.discovery import discover_runs
from tb_gpu_advisor.errors import EXIT_BAD_INPUT, EXIT_OK, EXIT_REGRESSION


def _percent(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, not {text!r}")
    return value


def register(commands):
    parser = commands.add_parser(
        "check",
        help="CI gate: exit 1 when the candidate is slower than the baseline beyond noise",
        description="Exit 0 when the candidate is not worse than the baseline by more than --max-regression "
        "and beyond the noise (95% confidence interval), 1 on a regression, 2 on bad input or usage. "
        "With several baseline runs (--baseline repeated, or a logdir holding several runs) the noise "
        "is the wider of the step-to-step and the run-to-run spread. Prints one line saying why.",
    )
    parser.add_argument(
        "--baseline",
        required=True,
        action="append",
        help="the stored reference profile; repeat it, or name a logdir of several runs, to "
        "give several baseline runs (every run of the logdir unless --baseline-run picks "
        "one; the candidate's own run is left out)",
    )
    parser.add_argument("--candidate", required=True, help="the profile to check")
    parser.add_argument(
        "--metric",
        choices=METRICS,
        default="step_time",
        help="step_time / step_time_median (%% of the baseline), gpu_busy (points), or a "
        "time category per step (%% of the baseline step time); default: %(default)s",
    )
    parser.add_argument(
        "--max-regression",
        type=_percent,
        default=DEFAULT_MAX_REGRESSION_PCT,
        metavar="PCT",
        help="allowed worsening (default: %(default)s)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: the one line; json: that line with the verdict and what was compared "
        "(tb_gpu_advisor/schema/check.schema.json); the exit status is the same",
    )
    add_side_arguments(parser)
    parser.set_defaults(handler=run)


def _baseline_runs(args, candidate_report):
    """(path, run) of every baseline run the command line names: each --baseline, a logdir of several runs
    expanded into its runs unless --baseline-run picks one; the candidate's own run is never its baseline."""
    runs = []
    for path in args.baseline:
        found = [] if args.baseline_run else discover_runs(path)
        if len(found) > 1:
            same = os.path.abspath(path) == os.path.abspath(args.candidate)
            runs += [(path, r.run) for r in found if not (same and r.run == candidate_report.get("run"))]
        else:
            runs.append((path, args.baseline_run))
    return runs


def run(args, out, err):
    candidate = load_side(args, "candidate", args.candidate, err)
    if candidate is None:
        return EXIT_BAD_INPUT
    host = args.baseline_host or args.host
    comparisons, baselines = [], []
    for path, run_id in _baseline_runs(args, candidate):
        baseline = load_report(path, run_id, host, args.max_file_mb, err, dask=args.dask)
        if baseline is None:
            return EXIT_BAD_INPUT
        baselines.append(baseline)
        comparisons.append(compare_reports(baseline, candidate))
    try:
        result = check_comparisons(comparisons, args.metric, args.max_regression)
    except GateError as error:
        print(f"error: {error}", file=err)
        return EXIT_BAD_INPUT
    if getattr(args, "format", "text") == "json":
        out.write(render_json(check_document(result, args.metric, args.max_regression, candidate, baselines)))
    else:
        print(result.reason, file=out)
    return EXIT_OK if result.passed else EXIT_REGRESSION
