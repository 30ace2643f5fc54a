"""A GPU's model from its properties, only where they fit one part's figures (review G8)."""

import pytest

from tb_gpu_advisor.analysis.peaks import device_peaks
from tb_gpu_advisor.model.device_identity import identified
from tb_gpu_advisor.model.trace import DeviceCapabilities
from tb_gpu_advisor.pipeline import analyze_host_file
from tests.data import real_trace

GIB = 2**30


def _v100(clock, memory_gib=16):
    return DeviceCapabilities(
        vendor="NVIDIA",
        sm_count=80,
        clock_mhz=clock,
        memory_bytes=int(0.985 * memory_gib * GIB),
        compute_capability=(7, 0),
    )


@pytest.mark.parametrize(
    "clock, memory, name",
    [
        (1530, 16, "Tesla V100-SXM2-16GB"),
        (1530, 32, "Tesla V100-SXM2-32GB"),
        (1380, 16, "Tesla V100-PCIE-16GB"),
        (1597, 32, "Tesla V100S-PCIE-32GB"),
    ],
)
def test_v100_boards_are_told_apart_by_clock_and_memory(clock, memory, name):
    assert identified(_v100(clock, memory)).model_name == f"{name} (identified from its properties)"


def test_without_a_clock_a_v100_board_is_not_guessed():
    """SXM2 and PCIe boards have the same SMs and memory but different peaks (125 vs 112 TFLOP/s)."""
    assert identified(_v100(None)).model_name is None


def test_amd_gcds_from_compute_units_and_memory():
    gcd = DeviceCapabilities(model_name="AMD Radeon Graphics", vendor="AMD", sm_count=104, memory_bytes=64 * GIB)
    found = identified(gcd)
    assert found.model_name.startswith("AMD Instinct MI210 or MI250 GCD") and found.arch == "gfx90a"
    peaks = device_peaks(found)
    assert (peaks.matrix_tflops, peaks.vector_tflops, peaks.hbm_gbps) == (181.0, 45.3, 1638.0)
    x = identified(
        DeviceCapabilities(model_name="AMD Radeon Graphics", vendor="AMD", sm_count=110, memory_bytes=64 * GIB)
    )
    assert x.model_name.startswith("AMD Instinct MI250X GCD") and device_peaks(x).matrix_tflops == 191.5
    # another part's compute units, or a named part, stays as the trace has it
    assert identified(DeviceCapabilities(vendor="AMD", sm_count=96, memory_bytes=48 * GIB)).model_name is None
    named = DeviceCapabilities(model_name="NVIDIA A100-SXM4-40GB", vendor="NVIDIA", sm_count=108)
    assert identified(named) is named


def test_the_real_v100x8_and_mi250_traces_are_named_with_their_peaks():
    v100 = analyze_host_file(real_trace("gpu_multi_worker_v100x8.xplane.pb"))
    gpu = next(d for d in v100["devices"] if d["kernel_count"])
    assert gpu["model_name"].startswith("Tesla V100-SXM2-16GB") and (gpu["peak_tflops"], gpu["peak_gbps"]) == (
        125.0,
        900.0,
    )
    mi250 = analyze_host_file(real_trace("kineto/mi250_minitoy_train.pt.trace.json.gz"))
    gpu = mi250["devices"][0]
    assert gpu["model_name"].startswith("AMD Instinct MI210 or MI250 GCD")
    assert (gpu["arch"], gpu["peak_tflops"], gpu["peak_gbps"]) == ("gfx90a", 181.0, 1638.0)
