"""A bounded pool of analysis threads with a fair queue: the smallest pending job runs first, and one express
thread takes only small jobs, so a small run is answered while large files are analyzed."""

import heapq
import itertools
import threading
from concurrent.futures import Future


class FairPool:
    """`workers` threads that take any job, plus one that takes only jobs of at most `small_size`; pending jobs
    wait in one queue ordered by size, then by arrival. At most workers + 1 jobs run at once."""

    def __init__(self, workers=1, small_size=0, name="pool"):
        self._small_size = small_size
        self._queue = []  # (size, sequence, future, fn, args)
        self._sequence = itertools.count()
        self._ready = threading.Condition()
        self._closed = False
        self._threads = [threading.Thread(target=self._work, args=(express,), name=f"{name}-{index}", daemon=True)
                         for index, express in enumerate([False] * max(1, int(workers)) + [True])]
        for thread in self._threads:
            thread.start()

    def submit(self, size, fn, *args):
        """Future of fn(*args), run when its turn comes; `size` (e.g. bytes to read) orders the queue."""
        future = Future()
        with self._ready:
            if self._closed:
                raise RuntimeError("cannot submit to a pool that was shut down")
            heapq.heappush(self._queue, (size, next(self._sequence), future, fn, args))
            self._ready.notify_all()
        return future

    def pending(self):
        """How many jobs wait for a thread."""
        with self._ready:
            return len(self._queue)

    def shutdown(self, wait=False, cancel_futures=True):
        with self._ready:
            self._closed = True
            dropped = self._queue if cancel_futures else []
            self._queue = [] if cancel_futures else self._queue
            self._ready.notify_all()
        for _, _, future, _, _ in dropped:
            future.cancel()
        if wait:
            for thread in self._threads:
                thread.join()

    def _take(self, express):
        with self._ready:
            while True:
                if self._queue and (not express or self._queue[0][0] <= self._small_size):
                    return heapq.heappop(self._queue)
                if self._closed:
                    return None
                self._ready.wait()

    def _work(self, express):
        while (job := self._take(express)) is not None:
            _, _, future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as err:  # handed to whoever waits on the future, as an Executor does
                future.set_exception(err)
            else:
                future.set_result(result)
