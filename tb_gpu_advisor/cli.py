"""The `tb-gpu-advisor` command line: every subcommand is registered from tb_gpu_advisor.commands."""

import argparse
import os
import sys

from tb_gpu_advisor import __version__
from tb_gpu_advisor.commands import analyze, check, compare, demo, mcp, report, serve
from tb_gpu_advisor.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK, ProfileError
from tb_gpu_advisor.report.safe_text import EscapingWriter

COMMANDS = (analyze, compare, check, report, serve, demo, mcp)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="tb-gpu-advisor",
        description="Why are my GPUs not busy, and what should I change? Analyzes TensorFlow and JAX "
        "profiles (.xplane.pb) and PyTorch profiler traces (.pt.trace.json[.gz]).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv=None, out=None, err=None):
    out = EscapingWriter(out or sys.stdout)
    err = EscapingWriter(err or sys.stderr)
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
        print(
            f"internal error: {type(error).__name__}: {error} (set TB_GPU_ADVISOR_DEBUG=1 for details; "
            "please report it)",
            file=err,
        )
        return EXIT_INTERNAL


def main_exit():
    """Console-script entry point."""
    sys.exit(main())
