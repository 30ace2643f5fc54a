"""Small TraceBuilder scenarios for the finding rules: a healthy loop and the pieces each rule's scenario uses."""

import json

from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of as _report_of

STEP_US = 10_000
START_US = 1_000
TC_GEMM = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel"
SGEMM = "ampere_sgemm_128x64_tn"
EIGEN = "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<float>>, long>(int)"
CUSTOM = "void my_kernel<float>(float*, int)"
BIG = dict(grid=(1024, 1, 1), block=(256, 1, 1), registers=168, dynamic_shared=98_304, occupancy_pct=12.5)


def step_starts(python, count=4, step_us=STEP_US, start_us=START_US, durations=None):
    """Marks `count` consecutive steps on `python`; returns their start times (us)."""
    starts, t = [], start_us
    for index in range(count):
        duration = durations[index] if durations else step_us
        python.step(index, t, duration)
        starts.append(t)
        t += duration
    return starts


def kernels(
    gpu, start_us, total_us, name=TC_GEMM, count=1, gap_us=0.0, launch_thread=None, launch_ahead_us=2000, **config
):
    """`count` equal kernels filling `total_us` from `start_us` with `gap_us` between them; returns the end."""
    config = config or BIG
    duration = (total_us - gap_us * (count - 1)) / count
    t = start_us
    for _ in range(count):
        launch = (launch_thread, t - launch_ahead_us, 5) if launch_thread else None
        gpu.kernel(name, t, duration, launch=launch, **config)
        t += duration + gap_us
    return t - gap_us


def healthy(step_count=10):
    """Big bf16 Tensor Core GEMMs back to back (96% busy), launched 2 ms ahead, prefetching input."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    builder.metadata(cuda_runtime_version="12020", cuda_driver_version="12040")
    for start in step_starts(python, step_count):
        python.input_wait(start, 20)
        kernels(gpu, start + 200, 9_600, count=4, launch_thread=python)
        gpu.memcpy("h2d", start + 1_000, 50, 1_000_000, src="pinned", is_async=True)
    return builder


def report_of(builder):
    """HostReport of a builder, checked to be strict JSON (no NaN/inf) like the CLI prints it."""
    report = _report_of(builder)
    json.dumps(report, allow_nan=False)
    return report


def findings_by_id(report):
    return {finding["id"]: finding for finding in report["findings"]}
