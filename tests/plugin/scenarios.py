"""Logdirs for the plugin tests: several runs, hosts with and without GPUs, a corrupt host, HTML in names,
and an input-bound run with its prefetch fix for comparisons."""

import os
import shutil
import tempfile

from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.pairs import write_input_pair
from tb_gpu_advisor.testing.quickstart import write_quickstart
from tests.data import real_trace

XSS_KERNEL = "<img src=x onerror=alert(1)>_kernel<float&amp;>"
CORRUPT_BYTES = b"\x0a\xff\xff\xff\xff\x0f this is not an XSpace \xef\xbf\xbd"

QUICKSTART = "quickstart_input_bound/2026_01_01_00_00_00"
MULTI_HOST = "multi_host/2026_01_02_00_00_00"
CPU_ONLY = "cpu_only/2026_01_03_00_00_00"
XSS = "html_names/2026_01_04_00_00_00"
CORRUPT = "corrupt/2026_01_05_00_00_00"
REAL_V100 = "real_v100x8/2026_01_06_00_00_00"
# A problem and its fix (testing/pairs.py): input bound, then prefetching; for comparisons.
INPUT_BOUND = "input_bound/2026_01_07_00_00_00"
PREFETCH = "prefetch/2026_01_08_00_00_00"
ROOFLINE_MI300X = "roofline_mi300x/2026_01_09_00_00_00"  # the committed real MI300X JAX trace, with its HLO


def _busy_two_gpus(hostname):
    """Two GPUs kept busy by back-to-back half-precision GEMMs, 4 steps of 2 ms."""
    builder = TraceBuilder(hostname=hostname)
    python = builder.thread("python")
    for ordinal in (0, 1):
        gpu = builder.gpu(ordinal)
        for step in range(4):
            start = 1000 + step * 2000
            if ordinal == 0:
                python.step(step, start, 2000)
            t = start + 50
            for index in range(9):
                gpu.kernel(
                    "ampere_h16816gemm_256x128_ldg8_stages_32x3_nn"
                    if index % 2
                    else "void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_32x6_tn_align8>"
                    "(Params)",
                    t,
                    200,
                    grid=(108, 2, 1),
                    block=(128, 1, 1),
                    occupancy_pct=25.0,
                    launch=(python, t - 30, 6),
                    tf_op=f"model/dense_{index}/MatMul:MatMul",
                )
                t += 210
            gpu.memcpy("h2d", start + 10, 30, 4 << 20, src="pinned", is_async=True, launch=(python, start + 2, 4))
    return builder


def _cpu_only():
    builder = TraceBuilder(hostname="cpu")
    python = builder.thread("python")
    for step in range(3):
        python.step(step, 1000 + step * 5000, 5000)
        python.input_wait(1000 + step * 5000, 2000)
        python.event("Dense/MatMul", 3100 + step * 5000, 2500)
    return builder


def _html_names():
    builder = TraceBuilder(hostname="xss")
    python = builder.thread("python")
    gpu = builder.gpu(0)
    python.step(0, 1000, 1000)
    gpu.kernel(XSS_KERNEL, 1100, 300, launch=(python, 1050, 5), tf_op="<b>op</b>:MatMul")
    gpu.kernel("void plain_kernel<int>(int)", 1500, 100, launch=(python, 1450, 5))
    return builder


def _many_kernels(count=60):
    """One GPU, `count` distinct kernels with increasing duration: for paging and sorting."""
    builder = TraceBuilder(hostname="worker0")
    python = builder.thread("python")
    gpu = builder.gpu(0)
    python.step(0, 1000, 100_000)
    t = 1100
    for index in range(count):
        gpu.kernel(
            f"kernel_{index:03d}",
            t,
            10 + index,
            occupancy_pct=float(index % 100),
            registers=16 + index,
            launch=(python, t - 40, 5),
        )
        t += 20 + index
    return builder


def _write_corrupt(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(CORRUPT_BYTES)
    return path


def profile_dir(logdir, run_id):
    tb_run, timestamp = run_id.rsplit("/", 1)
    return os.path.join(logdir, tb_run, "plugins", "profile", timestamp)


def _write_pair_run(logdir, run_id, fixed, seed):
    """One side of the input pair as run `run_id` (pairs.py names its runs itself, so it writes elsewhere first)."""
    target = os.path.join(profile_dir(logdir, run_id), "localhost.xplane.pb")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        shutil.move(write_input_pair(scratch, fixed, seed), target)
    return target


def write_plugin_logdir(logdir):
    """Writes every scenario under `logdir`; returns {run id: [hosts]}.

    With the committed real traces: the 8xV100 trace as its own run, and the real mangled (corrupt) TPU trace as
    a second host of the corrupt run.
    """
    write_quickstart(logdir)
    _busy_two_gpus("worker0").write(os.path.join(profile_dir(logdir, MULTI_HOST), "worker0.xplane.pb"))
    _many_kernels().write(os.path.join(profile_dir(logdir, MULTI_HOST), "worker1.xplane.pb"))
    _write_corrupt(os.path.join(profile_dir(logdir, MULTI_HOST), "worker2.xplane.pb"))
    _cpu_only().write(os.path.join(profile_dir(logdir, CPU_ONLY), "cpu.xplane.pb"))
    _html_names().write(os.path.join(profile_dir(logdir, XSS), "xss.xplane.pb"))
    _write_corrupt(os.path.join(profile_dir(logdir, CORRUPT), "broken.xplane.pb"))
    _write_pair_run(logdir, INPUT_BOUND, fixed=False, seed=0)
    _write_pair_run(logdir, PREFETCH, fixed=True, seed=1)
    runs = {
        QUICKSTART: ["localhost"],
        MULTI_HOST: ["worker0", "worker1", "worker2"],
        CPU_ONLY: ["cpu"],
        XSS: ["xss"],
        CORRUPT: ["broken"],
        INPUT_BOUND: ["localhost"],
        PREFETCH: ["localhost"],
    }
    shutil.copyfile(
        real_trace("tpu_inference_utf8_mangled.xplane.pb"),
        os.path.join(profile_dir(logdir, CORRUPT), "tpu_mangled.xplane.pb"),
    )
    runs[CORRUPT].append("tpu_mangled")
    target = os.path.join(profile_dir(logdir, REAL_V100), "v100x8.xplane.pb")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(real_trace("gpu_multi_worker_v100x8.xplane.pb"), target)
    runs[REAL_V100] = ["v100x8"]
    os.makedirs(profile_dir(logdir, ROOFLINE_MI300X), exist_ok=True)
    shutil.copyfile(
        real_trace("amd_mi300x_jax08_gemm.xplane.pb"),
        os.path.join(profile_dir(logdir, ROOFLINE_MI300X), "mi300x.xplane.pb"),
    )
    runs[ROOFLINE_MI300X] = ["mi300x"]
    return runs
