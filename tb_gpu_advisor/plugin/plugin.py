"""The GPU Advisor TBPlugin: JSON routes over the AnalysisService, the static files, listing metadata.

Every response goes through tensorboard's http_util.Respond (nosniff, no-cache, CSP); errors are JSON
{"error": message} with 400 (malformed request), 404 (unknown run, host or file), 405 (not GET) or 422 (the
profile itself cannot be analyzed). docs/http_api.md documents each route.
"""

import json
from concurrent.futures import TimeoutError as FutureTimeout

from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from tb_gpu_advisor.analysis.timeline import DEFAULT_BINS
from tb_gpu_advisor.constants import (
    DEFAULT_CACHE_BYTES,
    DEFAULT_CACHE_ENTRIES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MEMORY_BUDGET_BYTES,
    DEFAULT_TIME_BUDGET_S,
    PLUGIN_NAME,
    SCHEMA_VERSION,
)
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.file_size import limit_bytes
from tb_gpu_advisor.overview.service import OverviewService
from tb_gpu_advisor.plugin import comparison, fonts, params, static_files
from tb_gpu_advisor.plugin.ranks_route import RanksAnswers
from tb_gpu_advisor.plugin.run_index import RunIndex, relative_path, run_format
from tb_gpu_advisor.report.finite import finite
from tb_gpu_advisor.report.kernel_page import (
    DEFAULT_LIMIT,
    DEFAULT_SORT,
    MAX_FILTER_CHARS,
    MAX_LIMIT,
    OP_TYPE_CHOICES,
    SORT_KEYS,
    kernel_page,
)
from tb_gpu_advisor.service import AnalysisService

JSON = "application/json"
STATIC_PREFIX = f"/data/plugin/{PLUGIN_NAME}/static/"
# A request waits this long for an analysis, then gets 202 {"state": "running"} and asks again.
REQUEST_WAIT_S = 20.0
MAX_TIMELINE_BINS = 1000
PROFILE_TAB_ELSEWHERE = (
    "The Profile tab cannot show these runs: the GPU Advisor reads them from a place TensorBoard's "
    "own logdir does not include, so their timelines open only where the files are."
)


def _respond(request, body, code=200, headers=None):
    return http_util.Respond(request, finite(body), JSON, code=code, headers=headers)


def _respond_large(request, body):
    """_respond for a large body (10,000 overview rows): serialized once, without the two walks over every value
    that finite() and TensorBoard's Cleanse make, unless the body holds a non-finite number."""
    try:
        text = json.dumps(body, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return _respond(request, body)
    return http_util.Respond(request, text, JSON)


def _error(request, code, message, headers=None):
    return _respond(request, {"error": message}, code=code, headers=headers)


def _json_route(handler):
    """A GET route answering JSON: RequestError -> 400/404, ProfileError -> 422, other methods -> 405."""

    @wrappers.Request.application
    def route(self, request):
        if request.method not in ("GET", "HEAD"):
            return _error(request, 405, f"method {request.method} not allowed", headers=[("Allow", "GET, HEAD")])
        try:
            return handler(self, request)
        except params.RequestError as err:
            return _error(request, err.http_code, err.message)
        except ProfileError as err:
            return _error(request, 422, f"cannot analyze {_basename(err.path)}: {err.problem}")

    route.__name__ = handler.__name__
    route.__doc__ = handler.__doc__
    return route


def _mib(value, default):
    """Bytes of a MiB flag (at least 1), or `default` when it is unset."""
    return limit_bytes(value) if value else default


def _basename(path):
    """The file name only: responses name files relative to their run, never by the server's path."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


class GpuAdvisorPlugin(base_plugin.TBPlugin):
    """Serves the GPU Advisor tab for the profiles under the logdir."""

    plugin_name = PLUGIN_NAME

    def __init__(self, context):
        flags = context.flags
        max_mb = getattr(flags, "gpu_advisor_max_file_mb", None)
        entries = getattr(flags, "gpu_advisor_cache_entries", None) or DEFAULT_CACHE_ENTRIES
        self.logdir = getattr(flags, "gpu_advisor_logdir", None) or context.logdir
        self.profile_tab_reads_logdir = self.logdir == context.logdir
        self.index = RunIndex(self.logdir, follow_symlinks=bool(getattr(flags, "gpu_advisor_follow_symlinks", False)))
        self.service = AnalysisService(
            max_entries=entries,
            max_bytes=_mib(max_mb, DEFAULT_MAX_FILE_BYTES),
            cache_bytes=_mib(getattr(flags, "gpu_advisor_cache_mb", None), DEFAULT_CACHE_BYTES),
            time_budget_s=getattr(flags, "gpu_advisor_time_budget_s", None) or DEFAULT_TIME_BUDGET_S,
            memory_budget_bytes=_mib(getattr(flags, "gpu_advisor_memory_budget_mb", None), DEFAULT_MEMORY_BUDGET_BYTES),
        )
        self.overview = OverviewService(self.service, list_runs=self.index.runs)
        self.ranks = RanksAnswers()
        self.wait_s = REQUEST_WAIT_S
        self._static = static_files.allowed_files()
        self._fonts_css = fonts.fonts_css(getattr(context, "assets_zip_provider", None)).encode("utf-8")

    def get_plugin_apps(self):
        return {
            "/runs": self.runs_route,
            "/report": self.report_route,
            "/status": self.status_route,
            "/kernels": self.kernels_route,
            "/timeline": self.timeline_route,
            "/compare": self.compare_route,
            "/ranks": self.ranks_route,
            "/environment": self.environment_route,
            "/overview": self.overview_route,
            "/static/*": self.static_route,
            "/fonts.css": self.fonts_route,
        }

    def is_active(self):
        return self.index.is_active()

    def frontend_metadata(self):
        return base_plugin.FrontendMetadata(
            es_module_path="/static/index.js", tab_name="GPU Advisor", disable_reload=True
        )

    def _target(self, request):
        run = params.identifier(request.args, "run", allow_slash=True)
        host = params.identifier(request.args, "host")
        return self.index.lookup(run, host)

    def _await(self, request, future, target):
        """The future's result, or a 202 status response when the analysis is still running."""
        try:
            return future.result(self.wait_s), None
        except FutureTimeout:
            profile_run, host_file = target
            body = {"run": profile_run.run, "host": host_file.host, **self.service.status(host_file)}
            return None, _respond(request, body, code=202)

    @_json_route
    def runs_route(self, request):
        """[{run, hosts, format, files}] newest first, as the Profile tab lists them; `files` name each host's
        file relative to the logdir (never the server's path)."""
        return _respond(
            request,
            [
                {
                    "run": r.run,
                    "hosts": [h.host for h in r.hosts],
                    "format": run_format(r),
                    "files": {h.host: relative_path(h.path, self.logdir) for h in r.hosts},
                }
                for r in self.index.runs()
            ],
        )

    @_json_route
    def report_route(self, request):
        """The HostReport of one run and host: what `analyze --format json` prints under hosts[]."""
        target = self._target(request)
        report, pending = self._await(request, self.service.submit(target[0].run, target[1]), target)
        return pending or _respond(
            request, {"schema_version": SCHEMA_VERSION, **report, "file": _basename(report["file"])}
        )

    @_json_route
    def status_route(self, request):
        """{run, host, state, error, elapsed_s}: idle, running, done or error; never starts an analysis."""
        profile_run, host_file = self._target(request)
        return _respond(request, {"run": profile_run.run, "host": host_file.host, **self.service.status(host_file)})

    @_json_route
    def kernels_route(self, request):
        """One page of the kernel table, filtered and sorted server-side."""
        target = self._target(request)
        args = request.args
        page_args = dict(
            offset=params.integer(args, "offset", 0, 0),
            limit=params.integer(args, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT, clamp=True),
            sort=params.choice(args, "sort", SORT_KEYS, DEFAULT_SORT),
            order=params.choice(args, "order", ("asc", "desc"), "desc"),
            text_filter=params.text(args, "filter", MAX_FILTER_CHARS),
            op_type_filter=params.choice(args, "op_type", OP_TYPE_CHOICES, ""),
        )
        report, pending = self._await(request, self.service.submit(target[0].run, target[1]), target)
        if pending:
            return pending
        return _respond(
            request, {"run": target[0].run, "host": target[1].host, **kernel_page(report["kernels"], **page_args)}
        )

    @_json_route
    def timeline_route(self, request):
        """Per-GPU busy fraction in equal time bins over the analysis window, and the host's input wait."""
        target = self._target(request)
        bins = params.integer(request.args, "bins", DEFAULT_BINS, 1, MAX_TIMELINE_BINS, clamp=True)
        future = self.service.submit_timeline(target[0].run, target[1], bins)
        timeline, pending = self._await(request, future, target)
        return pending or _respond(request, {"run": target[0].run, "host": target[1].host, **timeline})

    @_json_route
    def compare_route(self, request):
        """compare_reports(baseline HostReport, candidate HostReport), after the four ids it compares."""
        baseline, candidate = comparison.comparison_targets(self.index, request.args)
        future = self.service.submit_comparison(baseline[1], candidate[1])
        try:
            result = future.result(self.wait_s)
        except FutureTimeout:
            return _respond(request, comparison.pending_body(self.service, baseline, candidate), code=202)
        names = {key: _basename(result[key]) for key in ("baseline_file", "candidate_file") if result.get(key)}
        return _respond(request, {**comparison.ids(baseline, candidate), **result, **names})

    @_json_route
    def ranks_route(self, request):
        """The run-level view of a run's ranks (the run report's `ranks` object), or why it has none."""
        profile_run = self.index.lookup_run(params.identifier(request.args, "run", allow_slash=True))
        code, body = self.ranks.answer(self.service, profile_run, self.wait_s)
        return _respond_large(request, body) if code == 200 else _respond(request, body, code=code)

    @_json_route
    def overview_route(self, request):
        """Every run's row (verdict, confidence, step time, GPU busy, top finding, change against the previous
        run of its series) as far as analyzed; queues the analyses of the others and never waits for one."""
        return _respond_large(request, self.overview.overview())

    @_json_route
    def environment_route(self, request):
        """What the tab needs to know about this server: whether the Profile tab reads the same logdir."""
        note = None if self.profile_tab_reads_logdir else PROFILE_TAB_ELSEWHERE
        return _respond(request, {"profile_tab": {"available": note is None, "note": note}})

    @wrappers.Request.application
    def fonts_route(self, request):
        """TensorBoard's own Roboto faces (plugin/fonts.py), for the tab's iframe."""
        if request.method not in ("GET", "HEAD"):
            return _error(request, 405, f"method {request.method} not allowed", headers=[("Allow", "GET, HEAD")])
        return http_util.Respond(request, self._fonts_css, "text/css")

    @wrappers.Request.application
    def static_route(self, request):
        if request.method not in ("GET", "HEAD"):
            return _error(request, 405, f"method {request.method} not allowed", headers=[("Allow", "GET, HEAD")])
        path = request.path
        name = path[len(STATIC_PREFIX) :] if path.startswith(STATIC_PREFIX) else None
        target = self._static.get(name) if name else None
        if target is None:
            return _error(request, 404, "no such static file")
        with open(target, "rb") as handle:
            body = handle.read()
        return http_util.Respond(request, body, static_files.content_type(name))
