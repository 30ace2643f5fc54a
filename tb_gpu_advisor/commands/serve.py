"""`tb-gpu-advisor serve LOGDIR`: TensorBoard with the GPU Advisor tab; tensorboard is imported only when it runs."""

import os

from tb_gpu_advisor.discovery import discover_runs
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.remote import is_remote_url

DEFAULT_PORT = 6006
DEFAULT_HOST = "127.0.0.1"


def add_serve_arguments(parser):
    """--port and --host, shared by `serve` and `demo`."""
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help="port to serve on, 0 for any free port (default: %(default)s)")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help="address to listen on (default: %(default)s, this machine only)")


def register(commands):
    """Registers `serve LOGDIR [--port N] [--host ADDR]` on the CLI's subparsers."""
    serve = commands.add_parser("serve", help="start TensorBoard with the GPU Advisor tab on a logdir",
                                description="Start TensorBoard (all its usual tabs) with the GPU Advisor tab "
                                            "on LOGDIR and print the tab's URL.")
    serve.add_argument("logdir", help="the logdir TensorBoard should read: a directory or any fsspec URL "
                                      "(s3://bucket/prefix, gs://..., az://...)")
    add_serve_arguments(serve)
    serve.set_defaults(handler=run)
    return serve


def run(args, out, err):
    if is_remote_url(args.logdir):
        discover_runs(args.logdir)  # a missing bucket or prefix, or no credentials: one line before TensorBoard starts
    elif not os.path.isdir(args.logdir):
        raise ProfileError(args.logdir, "no such directory")
    from tb_gpu_advisor.plugin.serve import serve  # imports tensorboard

    return serve(args.logdir, port=args.port, host=args.host, out=out, err=err)
