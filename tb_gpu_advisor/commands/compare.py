"""`tb-gpu-advisor compare BASELINE CANDIDATE`: what changed between two profiles, and whether beyond noise."""

from tb_gpu_advisor.commands.common import add_side_arguments, load_comparison
from tb_gpu_advisor.comparison.render import COMPARISON_RENDERERS
from tb_gpu_advisor.errors import EXIT_BAD_INPUT, EXIT_OK


def register(commands):
    parser = commands.add_parser(
        "compare",
        help="compare two profiles: step time with its noise, where the time went, kernels",
        description="Compare a baseline profile with a candidate (each a logdir, run directory or file): "
        "step time change with its 95% confidence interval, per-category time per step, GPU "
        "busy, kernels matched by name, findings resolved and new, and a one-line verdict.",
    )
    parser.add_argument("baseline", help="the profile before the change")
    parser.add_argument("candidate", help="the profile after the change")
    parser.add_argument(
        "--format",
        choices=sorted(COMPARISON_RENDERERS),
        default="text",
        help="text for a terminal, json for machines, markdown for a pull request",
    )
    add_side_arguments(parser)
    parser.set_defaults(handler=run)


def run(args, out, err):
    comparison = load_comparison(args, err)
    if comparison is None:
        return EXIT_BAD_INPUT
    out.write(COMPARISON_RENDERERS[args.format](comparison))
    return EXIT_OK
