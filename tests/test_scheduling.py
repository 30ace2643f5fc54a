"""FairPool: smallest job first, an express thread for small jobs, bounded concurrency, clean shutdown."""

import threading

import pytest

from tb_gpu_advisor.scheduling import FairPool


def test_a_small_job_runs_while_every_general_thread_holds_a_large_one():
    pool = FairPool(workers=1, small_size=10)
    release = threading.Event()
    large = [pool.submit(1_000, release.wait, 30) for _ in range(3)]
    assert pool.submit(5, lambda: "small").result(5) == "small"
    assert not any(future.done() for future in large)
    release.set()
    assert all(future.result(5) for future in large)
    pool.shutdown(wait=True)


def test_pending_jobs_run_smallest_first_then_in_arrival_order():
    pool = FairPool(workers=1, small_size=0)
    gate, order = threading.Event(), []
    busy = [pool.submit(0, gate.wait, 30), pool.submit(0, gate.wait, 30)]  # both threads held
    while pool.pending():
        threading.Event().wait(0.01)
    futures = [pool.submit(size, order.append, name) for size, name in [(50, "b"), (7, "a1"), (900, "c"), (7, "a2")]]
    gate.set()
    for future in busy + futures:
        future.result(5)
    assert order == ["a1", "a2", "b", "c"]
    pool.shutdown(wait=True)


def test_at_most_workers_plus_one_jobs_run_at_once():
    pool = FairPool(workers=2, small_size=10**9)
    lock, running, peak = threading.Lock(), [0], [0]
    gate = threading.Event()

    def job():
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        gate.wait(0.2)
        with lock:
            running[0] -= 1

    futures = [pool.submit(1, job) for _ in range(10)]
    for future in futures:
        future.result(10)
    assert peak[0] == 3
    pool.shutdown(wait=True)


def test_errors_reach_the_future_and_shutdown_cancels_what_waits():
    pool = FairPool(workers=1, small_size=0)
    assert isinstance(pool.submit(1, lambda: 1 / 0).exception(5), ZeroDivisionError)
    gate = threading.Event()
    held = [pool.submit(0, gate.wait, 30), pool.submit(0, gate.wait, 30)]
    while pool.pending():
        threading.Event().wait(0.01)
    waiting = pool.submit(1, lambda: "never")
    pool.shutdown()
    assert waiting.cancelled()
    gate.set()
    assert all(future.result(5) for future in held)
    with pytest.raises(RuntimeError):
        pool.submit(1, lambda: None)
