"""The /ranks route's answer: the run-level view of a run's ranks (pipeline.ranks_report, the run report's `ranks`
object), from the RankProfiles the service keeps beside each host's cached report: no file is read twice."""

import time
from concurrent.futures import wait

from tb_gpu_advisor.pipeline import ranks_report


def ranks_answer(service, profile_run, wait_s):
    """(HTTP code, body) for ProfileRun `profile_run`: 202 {run, state: "running", done, total, elapsed_s,
    progress} while its hosts are analyzed (after waiting up to `wait_s`), else 200 {run, hosts, ranks, reason,
    failed_hosts}: `ranks` the run report's `ranks` object, or null with the `reason` in words."""
    started = time.monotonic()
    hosts = list(profile_run.hosts)
    futures = [service.submit_rank(profile_run.run, host_file) for host_file in hosts]
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
            "progress": round(done / len(futures), 3),
        }
    failed = [h.host for h, f in zip(hosts, futures) if f.cancelled() or f.exception() is not None]
    profiles = [f.result() for f in futures if not f.cancelled() and f.exception() is None and f.result()]
    ranks = ranks_report(profiles)
    return 200, {
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
