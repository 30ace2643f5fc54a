from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of


def test_balance_names_the_least_busy_gpu_and_nccl_share():
    builder = TraceBuilder()
    builder.thread().step(0, 0, 1000)
    for ordinal, compute in ((0, 800), (1, 800), (2, 400)):
        gpu = builder.gpu(ordinal)
        gpu.kernel("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 0, compute)
        gpu.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 900, 100, stream=30)
    balance = report_of(builder)["balance"]
    assert balance == {
        "active_gpu_count": 3,
        "busy_pct_min": 50.0,
        "busy_pct_max": 90.0,
        "busy_pct_spread": 40.0,
        "least_busy_device": "/device:GPU:2",
        "most_busy_device": "/device:GPU:0",
        "kernel_time_us_min": 500.0,
        "kernel_time_us_max": 900.0,
        "nccl_time_us": 300.0,
        "nccl_share_pct": 13.04,  # 300 of 2300 us
    }
