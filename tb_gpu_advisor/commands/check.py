"""`tb-gpu-advisor check`: a CI gate that exits 1 when the candidate regressed beyond a threshold and noise."""

import argparse

from tb_gpu_advisor.commands.common import add_side_arguments, load_comparison
from tb_gpu_advisor.comparison.gate import DEFAULT_MAX_REGRESSION_PCT, METRICS, GateError, check_comparison
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
        "check", help="CI gate: exit 1 when the candidate is slower than the baseline beyond noise",
        description="Exit 0 when the candidate is not worse than the baseline by more than --max-regression "
                    "and beyond the step-to-step noise (95%% confidence interval), 1 on a regression, 2 on bad "
                    "input or usage. Prints one line saying why.")
    parser.add_argument("--baseline", required=True, help="the stored reference profile")
    parser.add_argument("--candidate", required=True, help="the profile to check")
    parser.add_argument("--metric", choices=METRICS, default="step_time",
                        help="step_time / step_time_median (%% of the baseline), gpu_busy (points), or a "
                             "time category per step (%% of the baseline step time); default: %(default)s")
    parser.add_argument("--max-regression", type=_percent, default=DEFAULT_MAX_REGRESSION_PCT, metavar="PCT",
                        help="allowed worsening (default: %(default)s)")
    add_side_arguments(parser)
    parser.set_defaults(handler=run)


def run(args, out, err):
    comparison = load_comparison(args, err)
    if comparison is None:
        return EXIT_BAD_INPUT
    try:
        result = check_comparison(comparison, args.metric, args.max_regression)
    except GateError as error:
        print(f"error: {error}", file=err)
        return EXIT_BAD_INPUT
    print(result.reason, file=out)
    return EXIT_OK if result.passed else EXIT_REGRESSION
