"""`tb-gpu-advisor serve LOGDIR`: TensorBoard with the GPU Advisor tab; tensorboard is imported only when it runs."""

import os

from tb_gpu_advisor.commands.common import megabytes, seconds
from tb_gpu_advisor.constants import DEFAULT_CACHE_BYTES, DEFAULT_MEMORY_BUDGET_BYTES, DEFAULT_TIME_BUDGET_S
from tb_gpu_advisor.files.discovery import discover_runs
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.remote import is_remote_url

DEFAULT_PORT = 6006
DEFAULT_HOST = "127.0.0.1"


def add_serve_arguments(parser):
    """--port, --host, --cache-mb and the analysis budgets, shared by `serve` and `demo`."""
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="port to serve on, 0 for any free port (default: %(default)s)"
    )
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help="address to listen on (default: %(default)s, this machine only)"
    )
    parser.add_argument(
        "--cache-mb",
        type=megabytes,
        default=DEFAULT_CACHE_BYTES / 2**20,
        metavar="MB",
        help="MiB of analyses the tab keeps in memory, counted as the length of their JSON (default: %(default).0f)",
    )
    parser.add_argument(
        "--time-budget-s",
        type=seconds,
        default=DEFAULT_TIME_BUDGET_S,
        metavar="S",
        help="seconds one file's analysis may take before it is stopped and reported as over "
        "the time budget (default: %(default).0f)",
    )
    parser.add_argument(
        "--memory-budget-mb",
        type=megabytes,
        default=DEFAULT_MEMORY_BUDGET_BYTES / 2**20,
        metavar="MB",
        help="MiB of memory one file's analysis may take (Linux) before it is "
        "reported as over the memory budget (default: %(default).0f)",
    )


def tab_flags(args):
    """The --gpu_advisor_* flags TensorBoard gets for the serve arguments `args`."""
    return [
        "--gpu_advisor_cache_mb",
        repr(args.cache_mb),
        "--gpu_advisor_time_budget_s",
        repr(args.time_budget_s),
        "--gpu_advisor_memory_budget_mb",
        repr(args.memory_budget_mb),
    ]


def register(commands):
    """Registers `serve LOGDIR [--port N] [--host ADDR]` on the CLI's subparsers."""
    serve = commands.add_parser(
        "serve",
        help="start TensorBoard with the GPU Advisor tab on a logdir",
        description="Start TensorBoard (all its usual tabs) with the GPU Advisor tab "
        "on LOGDIR and print the tab's URL.",
    )
    serve.add_argument(
        "logdir",
        help="the logdir TensorBoard should read: a directory or any fsspec URL "
        "(s3://bucket/prefix, gs://..., az://...)",
    )
    add_serve_arguments(serve)
    serve.set_defaults(handler=run)
    return serve


def run(args, out, err):
    if is_remote_url(args.logdir):
        discover_runs(args.logdir)  # a missing bucket or prefix, or no credentials: one line before TensorBoard starts
    elif not os.path.isdir(args.logdir):
        raise ProfileError(args.logdir, "no such directory")
    from tb_gpu_advisor.plugin.serve import serve  # imports tensorboard

    return serve(args.logdir, port=args.port, host=args.host, out=out, err=err, extra_flags=tab_flags(args))
