"""`tb-gpu-advisor report PATH`: a shareable report (self-contained HTML, markdown or JSON), to stdout or -o FILE."""

from tb_gpu_advisor.commands.common import add_target_arguments, load_report, render_json
from tb_gpu_advisor.errors import EXIT_BAD_INPUT, EXIT_OK
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.markdown import render_markdown

REPORT_RENDERERS = {"html": render_html, "markdown": render_markdown, "json": render_json}


def register(commands):
    parser = commands.add_parser(
        "report", help="write a shareable report: self-contained HTML, markdown or JSON",
        description="Write the report of a logdir, run directory or file as one HTML page (inline CSS and "
                    "SVG charts: opens offline, attach it to a ticket), markdown for a pull request, or JSON.")
    add_target_arguments(parser, host_help="report only this host")
    parser.add_argument("--format", choices=sorted(REPORT_RENDERERS), default="html",
                        help="default: %(default)s")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    parser.set_defaults(handler=run)


def run(args, out, err):
    report = load_report(args.path, args.run, args.host, args.max_file_mb, err, dask=args.dask)
    if report is None:
        return EXIT_BAD_INPUT
    document = REPORT_RENDERERS[args.format](report)
    if not args.output:
        out.write(document)
        return EXIT_OK
    try:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(document)
    except OSError as error:
        print(f"error: {args.output}: cannot write: {error.strerror or error}", file=err)
        return EXIT_BAD_INPUT
    print(f"wrote {args.output}", file=err)
    return EXIT_OK
