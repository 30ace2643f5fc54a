"""The runs and hosts of the logdir, from discovery, refreshed at most every few seconds; id lookup only."""

import threading
import time

from tb_gpu_advisor.discovery import discover_runs
from tb_gpu_advisor.plugin.params import not_found

RUNS_TTL_S = 2.0
INACTIVE_RECHECK_S = 30.0


class RunIndex:
    """Maps the Profile tab's run ids to their host files. Ids are keys: nothing a client sends becomes a path."""

    def __init__(self, logdir, clock=time.monotonic, follow_symlinks=False):
        self._logdir = logdir or ""
        self._follow_symlinks = follow_symlinks
        self._clock = clock
        self._lock = threading.Lock()
        self._runs = ()
        self._listed_at = None
        self._active = False
        self._active_checked_at = None

    def runs(self, max_age_s=RUNS_TTL_S):
        """Every ProfileRun, newest first; rescans the logdir when the last scan is older than `max_age_s`."""
        with self._lock:
            now = self._clock()
            if self._listed_at is None or now - self._listed_at > max_age_s:
                self._runs = discover_runs(self._logdir, follow_symlinks=self._follow_symlinks) if self._logdir else ()
                self._listed_at = now
                self._active = self._active or bool(self._runs)
            return self._runs

    def is_active(self):
        """True once any run was seen (then forever, like the Profile tab); a negative answer is rechecked
        at most every INACTIVE_RECHECK_S seconds, so the webapp's polling of the listing stays cheap."""
        with self._lock:
            if self._active:
                return True
            checked = self._active_checked_at
            if checked is not None and self._clock() - checked < INACTIVE_RECHECK_S:
                return False
            self._active_checked_at = self._clock()
        return bool(self.runs(max_age_s=0))

    def lookup(self, run, host):
        """(ProfileRun, HostFile) for ids the client sent; rescans once before answering 404."""
        for max_age_s in (RUNS_TTL_S, 0):
            for profile_run in self.runs(max_age_s):
                if profile_run.run == run:
                    for host_file in profile_run.hosts:
                        if host_file.host == host:
                            return profile_run, host_file
                    if max_age_s == 0:
                        raise not_found(f"run {run!r} has no host {host!r}")
        raise not_found(f"no run {run!r} in this logdir")

    def lookup_run(self, run):
        """The ProfileRun of a run id the client sent; rescans once before answering 404."""
        for max_age_s in (RUNS_TTL_S, 0):
            for profile_run in self.runs(max_age_s):
                if profile_run.run == run:
                    return profile_run
        raise not_found(f"no run {run!r} in this logdir")
