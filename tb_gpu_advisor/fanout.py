"""Runs one task per host of a run independently: in this process, on a local process pool, or on a Dask cluster.

`map_hosts` returns the results in the order of the host files, whatever ran them, so a run report is the same
whether it was computed in-process, in the pool or on Dask. Dask is optional
(`pip install 'tb-gpu-advisor[dask]'`) and imported only when asked for.
"""

import contextlib
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor

from tb_gpu_advisor.errors import ProfileError

DASK_CONNECT_TIMEOUT_S = 30
# Below this much data a process pool costs more (starting workers) than it saves.
POOL_MIN_BYTES = 32 * 2**20


def default_workers(host_count):
    """Local processes used for `host_count` hosts: one per core, never more than there are hosts."""
    return max(1, min(host_count, os.cpu_count() or 1))


def map_hosts(task, host_files, executor=None, on_done=None):
    """[task(host, path)] for `host_files` (files.runs.HostFile), in order; `task` must be picklable.
    `on_done(host_file)`, if given, is called as each host finishes (from another thread on an executor).

    executor: None picks a local process pool when there are two hosts or more, cores to use and at least
    POOL_MIN_BYTES of files, else runs in-process; "inline" forces in-process; any
    concurrent.futures.Executor (a process pool, or a Dask client's `get_executor()`) runs one task per host.
    """
    host_files = list(host_files)
    if executor is None:
        workers = default_workers(len(host_files))
        if workers < 2 or _total_bytes(host_files) < POOL_MIN_BYTES:
            executor = "inline"
        else:
            with local_pool(workers) as pool:
                return map_hosts(task, host_files, pool, on_done)
    if executor == "inline":
        results = []
        for host_file in host_files:
            results.append(task(host_file.host, host_file.path))
            if on_done is not None:
                on_done(host_file)
        return results
    if not isinstance(executor, Executor):
        raise TypeError(f"executor must be None, 'inline' or a concurrent.futures.Executor, not {executor!r}")
    futures = [executor.submit(task, f.host, f.path) for f in host_files]
    if on_done is not None:
        for host_file, future in zip(host_files, futures):
            future.add_done_callback(lambda _, done=host_file: on_done(done))
    return [future.result() for future in futures]


def _total_bytes(host_files):
    total = 0
    for host_file in host_files:
        try:
            total += os.path.getsize(host_file.path)
        except OSError:
            pass  # a remote URL (fetched one by one into the local cache) or an error the analysis reports
    return total


@contextlib.contextmanager
def local_pool(workers):
    """A process pool whose workers start fresh (spawn): safe inside threaded servers such as TensorBoard."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def dask_executor(address, timeout_s=None):
    """An Executor running tasks on the Dask distributed scheduler at `address` (e.g. tcp://host:8786).

    The workers need tb-gpu-advisor installed and the profile files at the same paths. Raises ProfileError
    with a clear message when Dask is not installed or the scheduler cannot be reached.
    """
    try:
        from distributed import Client
    except ImportError:
        raise ProfileError(address, "--dask needs Dask: pip install 'tb-gpu-advisor[dask]'") from None
    try:
        client = Client(address, timeout=timeout_s or DASK_CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as err:
        raise ProfileError(address, f"cannot reach the Dask scheduler: {err}") from None
    try:
        yield client.get_executor(pure=False)
    finally:
        client.close()


@contextlib.contextmanager
def executor_for(dask_address=None):
    """The executor `analyze_hosts` should use for a command line: Dask if an address is given, else None."""
    if dask_address:
        with dask_executor(dask_address) as executor:
            yield executor
    else:
        yield None
