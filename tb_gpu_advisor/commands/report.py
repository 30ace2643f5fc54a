"""`tb-gpu-advisor report PATH`: a shareable report (self-contained HTML, markdown or JSON), to stdout or -o FILE."""

import os

from tb_gpu_advisor.commands.common import add_target_arguments, load_report, render_json
from tb_gpu_advisor.files.discovery import NO_PROFILES, discover_runs, pick_host
from tb_gpu_advisor.errors import EXIT_BAD_INPUT, EXIT_OK, ProfileError
from tb_gpu_advisor.fanout import executor_for
from tb_gpu_advisor.pipeline import run_report
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.markdown import render_markdown
from tb_gpu_advisor.report.site import render_site

REPORT_RENDERERS = {"html": render_html, "markdown": render_markdown, "json": render_json}


def register(commands):
    parser = commands.add_parser(
        "report",
        help="write a shareable report: self-contained HTML, markdown or JSON",
        description="Write the report of a logdir, run directory or file as one HTML page (inline CSS and "
        "SVG charts: opens offline, attach it to a ticket), markdown for a pull request, or JSON.",
    )
    add_target_arguments(parser, host_help="report only this host")
    parser.add_argument("--format", choices=sorted(REPORT_RENDERERS), default="html", help="default: %(default)s")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    parser.add_argument(
        "--all",
        action="store_true",
        help="every run of the logdir as a static site in the directory -o names: index.html "
        "(each run's verdict, confidence, step time, GPU busy, top finding, change against "
        "the previous run of its series; sortable, filterable) and one self-contained page "
        "per run",
    )
    parser.set_defaults(handler=run)


def write_site(args, err):
    """`report LOGDIR --all -o DIR`: analyzes every run (a run whose hosts all fail is a row with its error)."""
    if not args.output:
        print("error: --all writes a directory of pages: name it with -o DIR", file=err)
        return EXIT_BAD_INPUT
    if args.run or args.format != "html":
        print("error: --all reports every run as HTML: drop --run and --format", file=err)
        return EXIT_BAD_INPUT
    runs = discover_runs(args.path)
    if not runs:
        raise ProfileError(args.path, NO_PROFILES)
    reports = []
    with executor_for(args.dask) as executor:
        for number, profile_run in enumerate(runs, 1):
            hosts = pick_host(profile_run.path, profile_run.hosts, args.host) if args.host else profile_run.hosts
            reports.append(
                run_report(profile_run.run, hosts, max_bytes=int(args.max_file_mb * 2**20), executor=executor)
            )
            for error in reports[-1]["errors"]:
                print(f"error: {error['file']}: {error['error']}", file=err)
            print(f"[{number}/{len(runs)}] {profile_run.run}", file=err, flush=True)
    try:
        for name, document in render_site(reports, root=args.path).items():
            target = os.path.join(args.output, *name.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(document)
    except OSError as error:
        print(f"error: {args.output}: cannot write: {error.strerror or error}", file=err)
        return EXIT_BAD_INPUT
    print(f"wrote {os.path.join(args.output, 'index.html')} and {len(reports)} run page(s)", file=err)
    return EXIT_OK


def run(args, out, err):
    if args.all:
        return write_site(args, err)
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
