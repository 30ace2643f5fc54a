"""Device roofs from the model name, else the architecture, and HBM with ROCm's half-reported bandwidth."""

import pytest

from tb_gpu_advisor.analysis.peaks import device_peaks
from tb_gpu_advisor.model.trace import DeviceCapabilities


@pytest.mark.parametrize(
    "name, matrix, hbm",
    [
        ("NVIDIA H100 80GB HBM3", 989.4, 3350),
        ("NVIDIA H100 PCIe", 756.5, 2000),
        ("NVIDIA H200", 989.4, 4800),
        ("NVIDIA H20", 148.0, 4000),
        ("NVIDIA A100-SXM4-40GB", 312.0, 1555),
        ("Tesla V100-SXM2-16GB", 125.0, 900),
        ("Tesla T4", 65.0, 320),
        ("NVIDIA L4", 121.0, 300),
        ("NVIDIA L40S", 362.05, 864),
        ("AMD Instinct MI300X", 1307.4, 5300),
        ("AMD Instinct MI355X", 2516.6, 8000),
    ],
)
def test_known_models_use_published_figures(name, matrix, hbm):
    peaks = device_peaks(DeviceCapabilities(model_name=name, sm_count=1, clock_mhz=1.0))
    assert (peaks.matrix_tflops, peaks.hbm_gbps) == (matrix, hbm)


def test_same_architecture_differs_by_model():
    h100 = device_peaks(DeviceCapabilities(model_name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0)))
    h20 = device_peaks(DeviceCapabilities(model_name="NVIDIA H20", compute_capability=(9, 0)))
    assert h20.matrix_tflops < h100.matrix_tflops / 6


def test_unknown_model_falls_back_to_the_architecture():
    caps = DeviceCapabilities(
        model_name="NVIDIA Future GPU",
        vendor="Nvidia",
        compute_capability=(9, 0),
        sm_count=132,
        clock_mhz=1830.0,
        memory_bandwidth_bytes_per_s=3_352_320_000_000,
    )
    peaks = device_peaks(caps)
    assert peaks.matrix_tflops == pytest.approx(4096 * 132 * 1830e6 / 1e12)
    assert peaks.hbm_gbps == pytest.approx(3352.32)
    assert "sm_90" in peaks.source


def test_rocm_bandwidth_is_doubled():
    caps = DeviceCapabilities(
        vendor="AMD",
        compute_capability=(9, 4),
        sm_count=304,
        clock_mhz=2100.0,
        memory_bandwidth_bytes_per_s=2_662_400_000_000,
    )
    peaks = device_peaks(caps)
    assert peaks.hbm_gbps == pytest.approx(5324.8)
    assert peaks.matrix_roof("f8e4m3fnuz") == pytest.approx(2 * peaks.matrix_tflops)


def test_unknown_architecture_has_no_flops_peak():
    peaks = device_peaks(DeviceCapabilities(memory_bandwidth_bytes_per_s=10**12))
    assert peaks.matrix_tflops is None and peaks.vector_tflops is None and peaks.hbm_gbps == 1000.0


def test_precision_roofs():
    a100 = device_peaks(DeviceCapabilities(model_name="NVIDIA A100-SXM4-80GB"))
    v100 = device_peaks(DeviceCapabilities(model_name="Tesla V100-SXM2-16GB"))
    assert a100.matrix_roof("f32") == 156.0  # TF32
    assert v100.matrix_roof("f32") == 15.7  # no TF32: fp32 on the vector units
    assert a100.vector_roof("bf16") == 39.0 and a100.vector_roof("f32") == 19.5
