"""`tb-gpu-advisor analyze PATH`: the report of a logdir, run directory or file, as text, markdown or JSON."""

from tb_gpu_advisor.commands.common import add_target_arguments, load_report, render_json
from tb_gpu_advisor.errors import EXIT_BAD_INPUT, EXIT_OK
from tb_gpu_advisor.report.markdown import render_markdown
from tb_gpu_advisor.report.text import render_text

RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}


def register(commands):
    parser = commands.add_parser(
        "analyze",
        help="print the report of a profile",
        description="Print busy/idle time, kernels, launch overhead, transfers "
        "and the per-step breakdown of each host's GPUs.",
    )
    add_target_arguments(parser)
    parser.add_argument(
        "--format",
        choices=sorted(RENDERERS),
        default="text",
        help="text for a terminal, json for machines, markdown for a pull request",
    )
    parser.set_defaults(handler=run)


def run(args, out, err):
    report = load_report(args.path, args.run, args.host, args.max_file_mb, err, dask=args.dask)
    if report is None:
        return EXIT_BAD_INPUT
    out.write(RENDERERS[args.format](report))
    return EXIT_OK
