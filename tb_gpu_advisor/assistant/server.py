"""`tb-gpu-advisor mcp`: the Advisor's tools as a Model Context Protocol server on stdio. The MCP SDK (`pip install
'tb-gpu-advisor[mcp]'`) is imported only here, when the server starts, so the package works without it."""

from tb_gpu_advisor.assistant.advisor import Advisor, one_line
from tb_gpu_advisor.assistant.answers import to_text
from tb_gpu_advisor.comparison.gate import DEFAULT_MAX_REGRESSION_PCT

SDK_MISSING = (
    "the mcp command needs the Model Context Protocol SDK 2 or newer: pip install 'tb-gpu-advisor[mcp]' "
    "(or: pip install 'mcp>=2')"
)

INSTRUCTIONS = (
    "GPU profiles (TensorFlow/JAX .xplane.pb, PyTorch .pt.trace.json) analyzed by tb-gpu-advisor: why the GPUs idle "
    "and what to change. Start with list_runs, then get_verdict on a run; explain_finding gives one finding's "
    "evidence and full fix; compare_runs and check_regression compare a baseline with a candidate. Estimates say "
    "whether they are a model or an upper bound (speedup_kind): quote them as such. Read-only; only the logdirs "
    "the server was started with can be read."
)


def _sdk():
    """(MCPServer, ToolError, ToolAnnotations) of the installed SDK; ImportError with SDK_MISSING otherwise."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import ToolAnnotations
    except ImportError:
        raise ImportError(SDK_MISSING) from None
    return MCPServer, ToolError, ToolAnnotations


def build_server(advisor):
    """The MCPServer whose tools answer from `advisor` (an Advisor): compact JSON text, or a one-line error."""
    MCPServer, ToolError, ToolAnnotations = _sdk()
    server = MCPServer("tb-gpu-advisor", instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)

    def answer(call):
        try:
            return to_text(call())
        except Exception as error:  # every failure is one line for the model to read, never a traceback
            raise ToolError(one_line(error)) from None

    def tool(fn):
        server.add_tool(fn, annotations=read_only, structured_output=False)
        return fn

    @tool
    def list_runs(logdir: str | None = None, offset: int = 0, limit: int = 50) -> str:
        """The profile runs of a logdir (default: the first one the server serves), newest first, each with its
        hosts; the configured logdirs too. `logdir` may also be a directory inside one. Pages with offset/limit."""
        return answer(lambda: advisor.list_runs(logdir, offset, limit))

    @tool
    def get_verdict(
        run: str | None = None, logdir: str | None = None, host: str | None = None, offset: int = 0, limit: int = 5
    ) -> str:
        """The verdict of a run (its id from list_runs; default the newest): bottleneck, confidence, step time, GPU
        busy, where the time goes, the combined estimate of the top fixes, and the findings ranked (id, severity,
        estimated speedup and whether it is a model or a bound, fix summary), `limit` at a time from `offset`.
        `logdir` may also name a run directory or a trace file inside a served logdir (then leave `run` out);
        `host` picks a host (default the first)."""
        return answer(lambda: advisor.verdict(run, logdir, host, offset, limit))

    @tool
    def explain_finding(
        finding_id: str,
        run: str | None = None,
        logdir: str | None = None,
        host: str | None = None,
        offset: int = 0,
        limit: int = 10,
        full_text: bool = False,
    ) -> str:
        """One finding of a run with its evidence: the metrics and the threshold crossed, pointers (steps, kernels,
        host ops, time ranges in ms) `limit` at a time from `offset`, the speedup basis, the fix with code (cut
        unless full_text) and links."""
        return answer(lambda: advisor.explain(finding_id, run, logdir, host, offset, limit, full_text))

    @tool
    def compare_runs(
        baseline_run: str | None,
        candidate_run: str | None,
        logdir: str | None = None,
        candidate_logdir: str | None = None,
        host: str | None = None,
        offset: int = 0,
        limit: int = 10,
    ) -> str:
        """Compare a baseline run with a candidate: step time change with its 95% interval, what drove it,
        configuration changes, findings resolved/new/persisting (`limit` at a time from `offset`), whether the
        baseline's predicted speedup held. Both runs are in `logdir` unless `candidate_logdir` is given."""
        return answer(
            lambda: advisor.compare(baseline_run, candidate_run, logdir, candidate_logdir, host, offset, limit)
        )

    @tool
    def check_regression(
        baseline_run: str | None,
        candidate_run: str | None,
        logdir: str | None = None,
        candidate_logdir: str | None = None,
        host: str | None = None,
        metric: str = "step_time",
        max_regression_pct: float = DEFAULT_MAX_REGRESSION_PCT,
    ) -> str:
        """The CI gate of `tb-gpu-advisor check`: passed is false when the candidate is worse than the baseline by
        more than max_regression_pct and beyond the noise (95% interval). metric: step_time, step_time_median,
        gpu_busy (points) or a breakdown category (input_wait, launch, host, idle, h2d, ...)."""
        return answer(
            lambda: advisor.check(
                baseline_run, candidate_run, logdir, candidate_logdir, host, metric, max_regression_pct
            )
        )

    return server


def serve_stdio(logdirs, max_bytes):
    """Runs the server on stdin/stdout until the client closes it."""
    _sdk()  # the SDK's absence is said before anything is listed
    build_server(Advisor(logdirs, max_bytes=max_bytes)).run("stdio")
