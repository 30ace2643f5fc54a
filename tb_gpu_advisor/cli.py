"""The `tb-gpu-advisor` command line: `analyze` prints the report of a logdir, run directory or file (and
registers compare, check and report from tb_gpu_advisor.commands)."""

import argparse
import json
import os
import sys

from tb_gpu_advisor import __version__
from tb_gpu_advisor.commands import check as check_command, compare as compare_command, report as report_command
from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.demo import add_demo_command
from tb_gpu_advisor.discovery import resolve_target
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.fanout import add_dask_argument, executor_for
from tb_gpu_advisor.plugin.serve_command import add_serve_command
from tb_gpu_advisor.report.markdown import render_markdown
from tb_gpu_advisor.pipeline import run_report
from tb_gpu_advisor.report.text import render_text

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3

RENDERERS = {
    "text": render_text,
    "markdown": render_markdown,
    "json": lambda report: json.dumps(report, indent=2, allow_nan=False) + "\n",
}


def _add_target_arguments(parser):
    parser.add_argument("path", help="a logdir, a run directory (holding <host>.xplane.pb files) or one file")
    parser.add_argument("--run", help="run id as the Profile tab shows it (default: the newest run)")
    parser.add_argument("--host", help="analyze only this host")
    parser.add_argument("--max-file-mb", type=float, default=DEFAULT_MAX_FILE_BYTES / 2**20,
                        help="refuse .xplane.pb files larger than this (default: %(default).0f)")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="tb-gpu-advisor",
        description="Why are my GPUs not busy, and what should I change? Analyzes TensorFlow and JAX "
                    "profiles (.xplane.pb).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    analyze = commands.add_parser("analyze", help="print the report of a profile",
                                  description="Print busy/idle time, kernels, launch overhead, transfers "
                                              "and the per-step breakdown of each host's GPUs.")
    _add_target_arguments(analyze)
    add_dask_argument(analyze)
    analyze.add_argument("--format", choices=sorted(RENDERERS), default="text",
                         help="text for a terminal, json for machines, markdown for a pull request")
    analyze.set_defaults(handler=_analyze)
    for command in (compare_command, check_command, report_command):
        command.register(commands)
    add_serve_command(commands)
    add_demo_command(commands)
    return parser


def _analyze(args, out, err):
    run, host_files = resolve_target(args.path, run=args.run, host=args.host)
    with executor_for(args.dask) as executor:
        report = run_report(run, host_files, max_bytes=int(args.max_file_mb * 2**20), executor=executor)
    for error in report["errors"]:
        print(f"error: {error['file']}: {error['error']}", file=err)
    if not report["hosts"]:
        return EXIT_BAD_INPUT
    out.write(RENDERERS[args.format](report))
    return EXIT_OK


def main(argv=None, out=None, err=None):
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(out)
        return EXIT_BAD_INPUT
    try:
        return args.handler(args, out, err)
    except ProfileError as error:
        print(f"error: {error}", file=err)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as error:  # a bug of ours: one line, and the traceback only on request
        if os.environ.get("TB_GPU_ADVISOR_DEBUG"):
            raise
        print(f"internal error: {type(error).__name__}: {error} (set TB_GPU_ADVISOR_DEBUG=1 for details; "
              "please report it)", file=err)
        return EXIT_INTERNAL


def main_exit():
    """Console-script entry point."""
    sys.exit(main())
