"""A GPU's roofs: peak dense matrix FLOP/s by precision, the vector (non-matrix) FLOP/s and HBM bandwidth.

Peaks are upper bounds: the published figure for a known model name, else the architecture's dense FLOPs per
SM (CU) per clock x `core_count` x `clock_rate`, which is the boost clock. HBM is the published figure for a
known model, else the trace's `memory_bandwidth`; ROCm reports half the HBM peak there (MI300X: 2.66 TB/s in
the trace, 5.3 TB/s published), so an AMD device's value is doubled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


_TERA, _GIGA = 1e12, 1e9


@dataclass(frozen=True)
class DevicePeaks:
    """Roofs of one GPU in TFLOP/s and GB/s; None where neither its name nor its architecture is known."""

    matrix_tflops: float | None  # dense 16-bit (bf16/fp16) matrix: the device's headline peak
    vector_tflops: float | None  # fp32 non-matrix
    hbm_gbps: float | None
    fp8_factor: float  # matrix rate of 8-bit inputs over 16-bit (1 where the hardware has no faster 8-bit path)
    tf32_factor: float | None  # f32 matrix rate over 16-bit; None where f32 matmuls run on the vector units
    source: str  # where the FLOP/s peaks came from, for the report
    hbm_source: str = ""  # where the HBM figure came from, saying when the trace's was corrected

    def matrix_roof(self, dtype: str) -> float | None:
        """Peak TFLOP/s of a matrix op with `dtype` inputs."""
        if self.matrix_tflops is None:
            return None
        if dtype in (None, "bf16", "f16"):
            return self.matrix_tflops
        if dtype.startswith("f8") or dtype in ("s8", "u8", "f4e2m1fn"):
            return self.matrix_tflops * self.fp8_factor
        if dtype == "f32":
            return self.matrix_tflops * self.tf32_factor if self.tf32_factor else self.vector_tflops
        return self.vector_tflops  # f64 and the rest: no faster than the fp32 vector units on these parts

    def vector_roof(self, dtype: str) -> float | None:
        """Peak TFLOP/s of element-wise work on `dtype` (16-bit types run packed, two per lane)."""
        if self.vector_tflops is None:
            return None
        return self.vector_tflops * (2 if dtype in ("bf16", "f16") else 1)


# Published dense figures at boost clock: (16-bit matrix TFLOP/s, fp32 vector TFLOP/s, HBM GB/s, fp8 factor,
# tf32 factor). Matched against the lower-cased model name, most specific pattern first. Sources (vendor
# datasheets; sparse figures halved to dense): NVIDIA H100 and H200 Tensor Core GPU datasheets (SXM: BF16 989.4,
# FP32 66.9, TF32 494.7 dense; H100 3.35 TB/s, H200 4.8 TB/s HBM3e); NVIDIA HGX B200 / GB200 NVL72 specifications
# (per GPU BF16 2.25 / 2.5 PFLOP/s dense, 8 TB/s); NVIDIA A100 datasheet (BF16 312, FP32 19.5, TF32 156;
# 1555 GB/s 40 GB, 2039 GB/s 80 GB SXM); NVIDIA V100 datasheet (Tensor 125 SXM2 / 112 PCIe, FP32 15.7 / 14,
# 900 GB/s; no bf16 or TF32: 16-bit is fp16); AMD Instinct MI300X / MI300A / MI325X data sheets (BF16 1307.4 /
# 980.6 / 1307.4 dense, FP32 vector 163.4 / 122.6, 5.3 / 5.3 / 6 TB/s); AMD Instinct MI250X / MI250 data sheets
# (BF16 383 / 362.1, FP32 vector 95.7 / 90.5, 3.2 TB/s; one GCD, as ROCm shows it, half of each) and MI210 (as an
# MI250 GCD: BF16 181, FP32 45.3, 1.6 TB/s). fp32 GEMMs with TF32 off (cuBLAS `_ffma_`/simt kernels,
# JAX precision HIGHEST) run on the fp32 vector units: their roof is the vector figure (analysis.roofline).
_BY_NAME = (
    (r"\bh200\b", (989.4, 66.9, 4800, 2, 0.5)),
    (r"\bh100\b.*\bnvl\b", (835.5, 60.0, 3900, 2, 0.5)),
    (r"\bh100\b.*\bpcie\b", (756.5, 51.2, 2000, 2, 0.5)),
    (r"\bh100\b|\bh800\b", (989.4, 66.9, 3350, 2, 0.5)),
    (r"\bh20\b", (148.0, 44.0, 4000, 2, 0.5)),
    (r"\bgb200\b", (2500.0, 80.0, 8000, 2, 0.5)),
    (r"\bb200\b", (2250.0, 75.0, 8000, 2, 0.5)),
    (r"\ba100\b.*\b80\s*gb\b.*\bpcie\b|\ba100\b.*\bpcie\b.*\b80\s*gb\b", (312.0, 19.5, 1935, 1, 0.5)),
    (r"\ba100\b.*\b80\s*gb\b", (312.0, 19.5, 2039, 1, 0.5)),
    (r"\ba100\b|\ba800\b", (312.0, 19.5, 1555, 1, 0.5)),
    (r"\bv100s\b", (130.0, 16.4, 1134, 1, None)),
    (r"\bv100\b.*\bpcie\b", (112.0, 14.0, 900, 1, None)),
    (r"\bv100\b", (125.0, 15.7, 900, 1, None)),
    (r"\bt4\b", (65.0, 8.1, 320, 1, None)),
    (r"\bl40s\b", (362.05, 91.6, 864, 2, 0.5)),
    (r"\bl40\b", (181.05, 90.5, 864, 2, 0.5)),
    (r"\bl4\b", (121.0, 30.3, 300, 2, 0.5)),
    (r"\bmi355x\b", (2516.6, 157.3, 8000, 2, 0.5)),
    (r"\bmi350x\b", (2306.9, 144.2, 8000, 2, 0.5)),
    (r"\bmi325x\b", (1307.4, 163.4, 6000, 2, 0.5)),
    (r"\bmi300x\b", (1307.4, 163.4, 5300, 2, 0.5)),
    (r"\bmi300a\b", (980.6, 122.6, 5300, 2, 0.5)),
    (r"\bmi250x gcd\b", (191.5, 47.9, 1638, 1, None)),
    (r"\bmi210\b|\bmi250 gcd\b", (181.0, 45.3, 1638, 1, None)),
    (r"\bmi250x\b", (383.0, 95.7, 3277, 1, None)),
    (r"\bmi250\b", (362.1, 90.5, 3277, 1, None)),
)
# Dense FLOPs per SM (CU) per clock: (16-bit matrix, fp32 vector, fp8 factor, tf32 factor). Consumer parts of
# an architecture can be slower (GeForce halves 16-bit with fp32 accumulation): these are upper bounds.
_BY_ARCH = {
    "sm_60": (256, 128, 1, None),
    "sm_61": (256, 256, 1, None),
    "sm_70": (1024, 128, 1, None),
    "sm_72": (1024, 128, 1, None),
    "sm_75": (1024, 128, 1, None),
    "sm_80": (2048, 128, 1, 0.5),
    "sm_86": (1024, 256, 1, 0.5),
    "sm_87": (1024, 256, 1, 0.5),
    "sm_89": (1024, 256, 2, 0.5),
    "sm_90": (4096, 256, 2, 0.5),
    "sm_100": (8192, 256, 2, 0.5),
    "sm_120": (1024, 256, 2, 0.5),
    "gfx908": (1024, 256, 1, None),
    "gfx90a": (1024, 256, 1, None),
    "gfx942": (2048, 256, 2, 0.5),
    "gfx950": (4096, 256, 2, 0.5),
}
_AMD_HBM_REPORTED_FRACTION = 0.5
_AMD_GFX_BY_CAPABILITY = {(9, 4): "gfx942", (9, 5): "gfx950"}


def device_arch(caps):
    """`sm_XY` or the gfx name of a device: the model's `arch` where it has one, else from vendor and
    compute capability."""
    arch = getattr(caps, "arch", None)
    if arch:
        return arch
    vendor = (caps.vendor or "").upper()
    if vendor == "AMD":
        return _AMD_GFX_BY_CAPABILITY.get(caps.compute_capability)
    if caps.compute_capability and vendor in ("", "NVIDIA"):
        return "sm_%d%d" % caps.compute_capability
    return None


def _is_amd(caps):
    return (caps.vendor or "").upper() == "AMD" or (device_arch(caps) or "").startswith("gfx")


def device_peaks(caps):
    """DevicePeaks of a GPU from its DeviceCapabilities."""
    name = (caps.model_name or "").lower()
    for pattern, (matrix, vector, hbm, fp8, tf32) in _BY_NAME:
        if re.search(pattern, name):
            return DevicePeaks(
                matrix,
                vector,
                float(hbm),
                fp8,
                tf32,
                f"published figures for {caps.model_name}",
                f"published figure for {caps.model_name}",
            )
    hbm, hbm_source = None, ""
    if caps.memory_bandwidth_bytes_per_s:
        hbm = caps.memory_bandwidth_bytes_per_s / _GIGA
        hbm_source = "the trace's memory_bandwidth"
        if _is_amd(caps):
            hbm_source = (
                f"the trace's memory_bandwidth {hbm:g} GB/s corrected x{1 / _AMD_HBM_REPORTED_FRACTION:g}: "
                "ROCm reports half the HBM peak"
            )
            hbm /= _AMD_HBM_REPORTED_FRACTION
    arch = device_arch(caps)
    per_clock = _BY_ARCH.get(arch)
    if per_clock is None or not caps.sm_count or not caps.clock_mhz:
        return DevicePeaks(
            None,
            None,
            hbm,
            1,
            None,
            "unknown architecture" if per_clock is None else "no core count or clock rate in the trace",
            hbm_source,
        )
    matrix, vector, fp8, tf32 = per_clock
    cycles = caps.sm_count * caps.clock_mhz * 1e6
    return DevicePeaks(
        matrix * cycles / _TERA,
        vector * cycles / _TERA,
        hbm,
        fp8,
        tf32,
        f"{arch}: {matrix} FLOP/clock per SM (CU) x {caps.sm_count} x {caps.clock_mhz:g} MHz",
        hbm_source,
    )
