"""The /ranks route's answer: the run-level view of a run's ranks (pipeline.ranks_report, the run report's `ranks`
object), from the RankProfiles the service keeps beside each host's cached report: no file is read twice.

A run's futures are kept across the client's polls, so a run of more hosts than the service caches (128 ranks
against 32 entries) is analyzed once, not again at each poll for the hosts the cache let go; the answer is kept
per version of the run's files."""

import threading
import time
from collections import OrderedDict
from concurrent.futures import wait

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.files.discovery import version
from tb_gpu_advisor.pipeline import ranks_report

MAX_RUNS = 8  # runs whose answer (or analyses in flight) are kept


class RanksAnswers:
    """Answers /ranks for the runs of one server."""

    def __init__(self):
        self._lock = threading.Lock()
        self._runs = OrderedDict()  # run id -> (files key, started, futures, answer body or None)

    def answer(self, service, profile_run, wait_s):
        """(HTTP code, body) for ProfileRun `profile_run`, its hosts analyzed on `service` (AnalysisService): 202 {run, state: "running", done, total, elapsed_s,
        progress} while its hosts are analyzed (after waiting up to `wait_s`), else 200 {run, hosts, ranks, reason,
        failed_hosts}: `ranks` the run report's `ranks` object, or null with the `reason` in words."""
        hosts = list(profile_run.hosts)
        key = tuple((h.host, h.path, _version(h)) for h in hosts)
        with self._lock:
            kept = self._runs.get(profile_run.run)
            if kept is None or kept[0] != key:
                futures = [service.submit_rank(profile_run.run, h) for h in hosts]
                kept = (key, time.monotonic(), futures, None)
                self._runs[profile_run.run] = kept
            self._runs.move_to_end(profile_run.run)
            while len(self._runs) > MAX_RUNS:
                self._runs.popitem(last=False)
        _, started, futures, body = kept
        if body is not None:
            return 200, body
        wait(futures, timeout=wait_s)
        done = sum(future.done() for future in futures)
        if done < len(futures):
            return 202, {
                "run": profile_run.run,
                "state": "running",
                "error": None,
                "done": done,
                "total": len(futures),
                "elapsed_s": round(time.monotonic() - started, 1),
                "progress": round(done / len(futures), 3) if futures else 1.0,
            }
        body = _body(profile_run, hosts, futures)
        with self._lock:
            if self._runs.get(profile_run.run, (None,))[0] == key:
                self._runs[profile_run.run] = (key, started, (), body)  # the futures (and profiles) let go
        return 200, body


def _version(host_file):
    try:
        return getattr(host_file, "version", None) or version(host_file.path)
    except ProfileError:
        return None  # unreadable: its analysis says why


def _body(profile_run, hosts, futures):
    failed = [h.host for h, f in zip(hosts, futures) if f.cancelled() or f.exception() is not None]
    profiles = [f.result() for f in futures if not f.cancelled() and f.exception() is None and f.result()]
    ranks = ranks_report(profiles)
    return {
        "run": profile_run.run,
        "hosts": len(hosts),
        "ranks": ranks,
        "reason": None if ranks is not None else _reason(len(hosts), len(profiles), failed),
        "failed_hosts": failed,
    }


def _reason(hosts, ranks, failed):
    """Why a run has no run-level view, in words."""
    if hosts < 2:
        return "This run has one host: there are no other ranks to compare it with."
    if failed and ranks + len(failed) >= 2:
        return (
            f"{len(failed)} of the run's {hosts} hosts could not be analyzed, so fewer than two ranks are left "
            "to compare."
        )
    if ranks == 1:
        return (
            "Only one of the run's hosts names its rank in a distributed job: the others are separate runs, "
            "not ranks to compare."
        )
    return (
        f"None of the run's {hosts} hosts names its rank in a distributed job (PyTorch's distributedInfo) or "
        "ran a collective (the hosts of one TensorFlow or JAX job meet in them), so they are separate programs, "
        "not ranks to join on one timeline."
    )
