"""The runs and hosts of the logdir, from discovery, relisted in the background and at most every few seconds; id
lookup only.

Requests never list the logdir themselves, and never under a lock: a listing older than RUNS_TTL_S is refreshed
by a background thread while requests read the previous one; an id not in the listing starts a relisting
(waited for, without the lock) only when none ran in the last MIN_RELIST_S, else it is a 404 at once. A local
relisting re-reads only run directories that changed (discovery's memo).
"""

import logging
import os
import posixpath
import threading
import time

from tb_gpu_advisor.constants import XPLANE_SUFFIX
from tb_gpu_advisor.files.discovery import discover_runs
from tb_gpu_advisor.plugin.params import not_found
from tb_gpu_advisor.remote import is_remote_url

logger = logging.getLogger(__name__)

RUNS_TTL_S = 2.0
MIN_RELIST_S = 5.0
INACTIVE_RECHECK_S = 30.0
LIST_WAIT_S = 60.0  # a request waits no longer for a relisting another request started


class RunIndex:
    """Maps the Profile tab's run ids to their host files. Ids are keys: nothing a client sends becomes a path."""

    def __init__(self, logdir, clock=time.monotonic, follow_symlinks=False, min_relist_s=MIN_RELIST_S):
        self._logdir = logdir or ""
        self._follow_symlinks = follow_symlinks
        self._clock = clock
        self._min_relist_s = min_relist_s
        self._state = threading.Condition()
        self._runs = None  # the latest listing (None until the first one is done)
        self._by_id = {}
        self._listed_at = None  # when the latest listing started
        self._started_at = None  # when the latest relisting started (rate limit)
        self._listing = False
        self._memo = {}  # discovery's per-run-directory memo: only changed directories are read again
        self._active = False
        self._active_checked_at = None
        self.listings = 0  # how many listings ran (for tests and benchmarks)

    def runs(self, max_age_s=RUNS_TTL_S):
        """Every ProfileRun, newest first, from the latest listing. Only the first call waits (for the first
        listing); later ones start a background relisting when theirs is older than `max_age_s`."""
        with self._state:
            stale = self._runs is not None and self._clock() - self._listed_at > max_age_s
        if self._runs is None:
            self._relist(wait=True)
        elif stale:
            self._relist(wait=False)
        with self._state:
            return self._runs or ()

    def is_active(self):
        """True once any run was seen (then forever, like the Profile tab); a negative answer is rechecked
        at most every INACTIVE_RECHECK_S seconds, so the webapp's polling of the listing stays cheap."""
        with self._state:
            if self._active:
                return True
            checked = self._active_checked_at
            if checked is not None and self._clock() - checked < INACTIVE_RECHECK_S:
                return False
            self._active_checked_at = self._clock()
            first = self._runs is None
        if not first:
            self._relist(wait=True, forced=True)
        return bool(self.runs())

    def lookup(self, run, host):
        """(ProfileRun, HostFile) for ids the client sent; an unknown one waits for a relisting only when none
        ran in the last MIN_RELIST_S, else answers 404 from the listing at hand."""
        profile_run = self._find(run, lambda found: any(h.host == host for h in found.hosts))
        if profile_run is None:
            raise not_found(f"no run {run!r} in this logdir")
        for host_file in profile_run.hosts:
            if host_file.host == host:
                return profile_run, host_file
        raise not_found(f"run {run!r} has no host {host!r}")

    def lookup_run(self, run):
        """The ProfileRun of a run id the client sent; 404 as lookup()."""
        profile_run = self._find(run, lambda found: True)
        if profile_run is None:
            raise not_found(f"no run {run!r} in this logdir")
        return profile_run

    def _find(self, run, complete):
        self.runs()
        with self._state:
            found = self._by_id.get(run)
        if found is not None and complete(found):
            return found
        if self._relist(wait=True):
            with self._state:
                found = self._by_id.get(run)
        return found

    def _relist(self, wait, forced=False):
        """Starts a relisting unless one ran within min_relist_s (or one is running: then joins it when
        `wait`); True when a relisting finished while this call waited. The lock is never held while listing."""
        with self._state:
            now = self._clock()
            recent = self._started_at is not None and now - self._started_at < self._min_relist_s
            if not self._listing and (self._runs is None or forced or not recent):
                self._listing = True
                self._started_at = now
                if not wait:
                    threading.Thread(target=self._list, args=(False,), name="gpu-advisor-listing", daemon=True).start()
                    return False
                mine = True
            elif self._listing and wait:
                mine = False
            else:
                return False
        if mine:
            self._list()
            return True
        with self._state:
            return self._state.wait_for(lambda: not self._listing, LIST_WAIT_S)

    def _list(self, raise_errors=True):
        """Lists the logdir into the index; on an error the previous listing stays (a bucket that cannot be
        listed right now) and the error is raised to a waiting request, logged for a background one."""
        started = self._clock()
        runs = None
        try:
            runs = (
                discover_runs(self._logdir, follow_symlinks=self._follow_symlinks, memo=self._memo)
                if self._logdir
                else ()
            )
        except Exception as err:
            if raise_errors:
                raise
            logger.warning("tb-gpu-advisor: cannot list %s: %s", self._logdir, err)
        finally:
            with self._state:
                if runs is not None or self._runs is None:
                    self._runs = tuple(runs or ())
                    self._by_id = {profile_run.run: profile_run for profile_run in self._runs}
                    self._listed_at = started
                    self._active = self._active or bool(self._runs)
                self._listing = False
                self.listings += 1
                self._state.notify_all()


def run_format(profile_run):
    """ "xplane" when the run's files are XPlane (the Profile tab can show them), else "kineto" (PyTorch traces,
    which open in Perfetto or chrome://tracing)."""
    return "xplane" if any(h.path.endswith(XPLANE_SUFFIX) for h in profile_run.hosts) else "kineto"


def relative_path(path, logdir):
    """`path` relative to `logdir` with "/" separators (a local path or a URL below it), else its file name: what
    the tab may show of where a file is, never the server's own path."""
    root = str(logdir or "")
    if root and not is_remote_url(root):
        root = os.path.abspath(root)
    path, root = str(path).replace("\\", "/"), root.replace("\\", "/").rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return posixpath.basename(path)
