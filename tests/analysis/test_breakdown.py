import pytest

from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES
from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of


def test_each_instant_counts_once_for_its_highest_category():
    builder = TraceBuilder()
    python = builder.thread()
    feeder = builder.thread("tf_data_iterator_get_next/1")
    gpu = builder.gpu(0)
    python.step(0, 0, 1000)
    feeder.input_wait(0, 200)                        # [0,200) input wait, GPU idle
    gpu.memcpy("h2d", 150, 100, 1 << 20)             # [150,200) hidden by wait? no: copy outranks wait
    gpu.kernel("volta_h884gemm_128x128", 250, 100)   # [250,350) 16-bit compute
    gpu.kernel("volta_sgemm_128x64_nn", 300, 100, stream=8)  # overlap [300,350) counts as 16-bit
    gpu.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 380, 70, stream=20)  # [400,450) exposed
    gpu.memcpy("d2h", 450, 50, 4096)                 # [450,500)
    python.event("ExecutorState::Process", 500, 200)  # host busy [500,700) minus launch calls
    python.event("cuLaunchKernel-like", 600, 20, correlation_id=999, device_id=0)  # a launch call
    step = report_of(builder)["steps"][0]["breakdown_ms"]
    assert step == pytest.approx({
        "compute_16bit": 0.1, "compute_32bit": 0.05, "collectives": 0.05, "d2h": 0.05, "d2d": 0.0,
        "h2d": 0.1, "input_wait": 0.15, "launch": 0.02, "host": 0.18, "idle": 0.3,
    })
    assert sum(step.values()) == pytest.approx(1.0)
    assert report_of(builder)["steps"][0]["gpu_busy_pct"] == 35.0


def test_categories_add_up_to_step_time_on_the_real_v100_trace(v100_trace):
    report = analyze_host_file(v100_trace)
    (step,) = report["steps"]
    assert step["time_ms"] == 21.310352
    assert sum(step["breakdown_ms"].values()) == pytest.approx(step["time_ms"], abs=1e-5)
    compute = step["breakdown_ms"]["compute_16bit"] + step["breakdown_ms"]["compute_32bit"]
    # XProf: device compute 14.875539 ms, which includes 0.04 ms of memcpys it misclassifies as compute.
    assert compute == pytest.approx(14.875539, abs=0.05)
    assert set(report["summary"]["breakdown_pct"]) == set(BREAKDOWN_CATEGORIES)
