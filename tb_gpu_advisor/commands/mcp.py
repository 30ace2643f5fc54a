"""`tb-gpu-advisor mcp LOGDIR [LOGDIR...]`: the advisor as a read-only MCP server on stdio for AI assistants."""

from tb_gpu_advisor.commands.common import add_max_file_argument
from tb_gpu_advisor.errors import EXIT_BAD_INPUT, EXIT_OK


def register(commands):
    parser = commands.add_parser(
        "mcp",
        help="serve the advisor to AI assistants (Model Context Protocol, stdio)",
        description="Serve the advisor over the Model Context Protocol on stdin/stdout: tools to list runs, get a "
        "run's verdict and findings, explain a finding, compare two runs and run the CI check. "
        "Read-only; only the logdirs named here are read. Needs: pip install 'tb-gpu-advisor[mcp]'.",
    )
    parser.add_argument(
        "logdirs",
        nargs="+",
        metavar="LOGDIR",
        help="a logdir the assistant may read (a directory or an fsspec URL); nothing outside is read",
    )
    add_max_file_argument(parser)
    parser.set_defaults(handler=run)


def run(args, out, err):
    from tb_gpu_advisor.assistant.confine import AdvisorError
    from tb_gpu_advisor.assistant.server import serve_stdio

    try:
        serve_stdio(args.logdirs, max_bytes=int(args.max_file_mb * 2**20))
    except (ImportError, AdvisorError) as error:
        print(f"error: {error}", file=err)
        return EXIT_BAD_INPUT
    return EXIT_OK
