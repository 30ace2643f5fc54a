"""`tb-gpu-advisor report PATH`: a shareable report (self-contained HTML, markdown or JSON), to stdout or -o FILE."""

import json

from tb_gpu_advisor.commands.common import EXIT_BAD_INPUT, EXIT_OK, add_max_file_argument, load_report
from tb_gpu_advisor.fanout import add_dask_argument
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.markdown import render_markdown

REPORT_RENDERERS = {
    "html": render_html,
    "markdown": render_markdown,
    "json": lambda report: json.dumps(report, indent=2, allow_nan=False) + "\n",
}


def register(commands):
    parser = commands.add_parser(
        "report", help="write a shareable report: self-contained HTML, markdown or JSON",
        description="Write the report of a logdir, run directory or file as one HTML page (inline CSS and "
                    "SVG charts: opens offline, attach it to a ticket), markdown for a pull request, or JSON.")
    parser.add_argument("path", help="a logdir, a run directory (holding <host>.xplane.pb or "
                                     "<worker>.<span>.pt.trace.json[.gz] files) or one file")
    parser.add_argument("--run", help="run id as the Profile tab shows it (default: the newest run)")
    parser.add_argument("--host", help="report only this host")
    parser.add_argument("--format", choices=sorted(REPORT_RENDERERS), default="html",
                        help="default: %(default)s")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    add_max_file_argument(parser)
    add_dask_argument(parser)
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
