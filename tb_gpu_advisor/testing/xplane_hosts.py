"""A multi-host XPlane session written with TraceBuilder: one `<host>.xplane.pb` per host of a data-parallel job
(one GPU each), every step its compute kernels then one NCCL all-reduce that ends on every host once the last host
arrives, each host with its own clock offset. Known amounts, for tests of the run-level view of XPlane hosts."""

from tb_gpu_advisor.testing.builder import TraceBuilder

ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
GEMM = "ampere_sgemm_128x64_tn"
EXTRA = "ampere_sgemm_64x64_nn"  # the kernel only the hosts given extra work run


def write_host_session(
    logdir,
    hosts=4,
    steps=6,
    compute_us=8000.0,
    extra_us=None,
    transfer_us=2000.0,
    clock_us=None,
    run="train",
    timestamp="2026_01_01_00_00_00",
    first_step=0,
    names=None,
):
    """Writes `<logdir>/<run>/plugins/profile/<timestamp>/worker<k>.xplane.pb` for k < `hosts`; returns the paths.

    Each step, host k launches GEMMs for `compute_us` plus `extra_us[k]` of EXTRA kernels (its extra work), then
    the all-reduce: it starts when the host arrives and ends `transfer_us` after the last host arrived, then a
    200 us tail. `clock_us(k)` is added to every time of host k (its clock offset). Steps are numbered from
    `first_step`; `names` are the hosts' names (worker<k> by default)."""
    extra_us = extra_us or {}
    builders = [TraceBuilder(hostname=names[k] if names else f"worker{k}") for k in range(hosts)]
    threads = [b.thread("python") for b in builders]
    gpus = [b.gpu(0) for b in builders]
    start = 1000.0
    for step in range(steps):
        arrivals = [start + 50 + compute_us + extra_us.get(k, 0.0) for k in range(hosts)]
        end_call = max(arrivals) + transfer_us
        end = end_call + 200.0
        for k in range(hosts):
            shift = clock_us(k) if clock_us else 0.0
            python, gpu = threads[k], gpus[k]
            python.step(first_step + step, start + shift, end - start - 10)
            at = start + 50
            for _ in range(4):
                gpu.kernel(GEMM, at + shift, compute_us / 4, launch=(python, at + shift - 20, 5))
                at += compute_us / 4
            if extra_us.get(k):
                gpu.kernel(EXTRA, at + shift, extra_us[k], launch=(python, at + shift - 20, 5))
                at += extra_us[k]
            gpu.kernel(
                ALLREDUCE, at + shift, end_call - at, stream=13, launch=(python, at + shift - 20, 5), grid=(8, 1, 1)
            )
        start = end
    return [b.write_run(logdir, run=run, timestamp=timestamp, host=b.hostname) for b in builders]
