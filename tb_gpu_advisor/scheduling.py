"""A fair job queue (smallest pending job first; express takers get only small jobs) and a bounded pool of
threads over it, so a small run is answered while large files are analyzed."""

import heapq
import itertools
import threading
from concurrent.futures import Future


class FairQueue:
    """Pending jobs ordered by size, then by arrival; `take` blocks until a job fits the taker or it closes."""

    def __init__(self, small_size=0):
        self.small_size = small_size
        self._queue = []  # (size, sequence, future, fn, args)
        self._sequence = itertools.count()
        self.ready = threading.Condition()  # also guards what the pool keeps beside the queue
        self.closed = False

    def put(self, size, future, fn, args):
        with self.ready:
            if self.closed:
                raise RuntimeError("cannot submit to a pool that was shut down")
            heapq.heappush(self._queue, (size, next(self._sequence), future, fn, args))
            self.ready.notify_all()

    def __len__(self):
        with self.ready:
            return len(self._queue)

    def take(self, express=False, allowed=None, recheck_s=None):
        """The smallest job (a small one only when `express`), once `allowed()` (called under the lock) is
        true; None once closed. `recheck_s` bounds each wait when `allowed` depends on time."""
        with self.ready:
            while True:
                if (
                    self._queue
                    and (not express or self._queue[0][0] <= self.small_size)
                    and (allowed is None or allowed())
                ):
                    return heapq.heappop(self._queue)
                if self.closed:
                    return None
                self.ready.wait(recheck_s)

    def close(self, cancel_futures=True):
        """Refuses new jobs; cancels the pending ones when `cancel_futures`."""
        with self.ready:
            self.closed = True
            dropped, self._queue = (self._queue, []) if cancel_futures else ([], self._queue)
            self.ready.notify_all()
        for _, _, future, _, _ in dropped:
            future.cancel()


def run_job(future, fn, args):
    """Runs fn(*args) into `future`, as an Executor does."""
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args)
    except BaseException as err:  # handed to whoever waits on the future
        future.set_exception(err)
    else:
        future.set_result(result)


class FairPool:
    """`workers` threads that take any job, plus one that takes only jobs of at most `small_size`; pending jobs
    wait in one FairQueue. At most workers + 1 jobs run at once. In-process: the server uses
    isolated_pool.IsolatedPool, whose jobs run in worker processes."""

    def __init__(self, workers=1, small_size=0, name="pool"):
        self._queue = FairQueue(small_size)
        self._threads = [
            threading.Thread(target=self._work, args=(express,), name=f"{name}-{index}", daemon=True)
            for index, express in enumerate([False] * max(1, int(workers)) + [True])
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, size, fn, *args):
        """Future of fn(*args), run when its turn comes; `size` (e.g. bytes to read) orders the queue."""
        future = Future()
        self._queue.put(size, future, fn, args)
        return future

    def pending(self):
        """How many jobs wait for a thread."""
        return len(self._queue)

    def shutdown(self, wait=False, cancel_futures=True):
        self._queue.close(cancel_futures)
        if wait:
            for thread in self._threads:
                thread.join()

    def _work(self, express):
        while (job := self._queue.take(express)) is not None:
            _, _, future, fn, args = job
            run_job(future, fn, args)
