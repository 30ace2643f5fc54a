"""Launch values no GPU allows are unknown (null), named in a note, and never become advice."""

import json

import pytest

from tb_gpu_advisor.analysis.plausibility import implausible_values
from tb_gpu_advisor.model.details import KernelConfig
from tb_gpu_advisor.model.trace import DeviceCapabilities
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.rocm import BROADCAST, rocm_gemm_trace
from tests.conftest import report_of

_A100 = DeviceCapabilities(vendor="NVIDIA", compute_capability=(8, 0))
_MI300 = DeviceCapabilities(vendor="AMD", arch="gfx942")


def _config(registers=32, block=(128, 1, 1), shared=0, occupancy=50.0):
    return KernelConfig(registers, shared, 0, (1, 1, 1), block, occupancy)


@pytest.mark.parametrize(
    "config, caps, fields",
    [
        (_config(), _A100, set()),
        (_config(registers=255), _A100, set()),
        (_config(registers=256), _A100, {"registers_per_thread"}),
        (_config(registers=512), _MI300, set()),
        (_config(registers=2191500840), _MI300, {"registers_per_thread"}),
        (_config(block=(1024, 1, 1)), _A100, set()),
        (_config(block=(1025, 1, 1)), _A100, {"block"}),
        (_config(block=(32, 32, 2)), _A100, {"block"}),
        (_config(shared=163 * 1024), _A100, set()),
        (_config(shared=164 * 1024), _A100, {"shared_memory_bytes"}),
        (_config(shared=65536), _MI300, set()),
        (_config(shared=1 << 20), _MI300, {"shared_memory_bytes"}),
        (_config(occupancy=100.0), _A100, set()),
        (_config(occupancy=100.5), _A100, {"occupancy_pct"}),
        (_config(occupancy=-1.0), _A100, {"occupancy_pct"}),
    ],
)
def test_limits(config, caps, fields):
    assert {item.field for item in implausible_values(config, caps)} == fields


def test_impossible_registers_on_rocm_are_null_with_a_note_naming_the_kernel():
    report = report_of(rocm_gemm_trace(impossible_registers=True))
    row = next(k for k in report["kernels"] if k["name"] == BROADCAST)
    assert (row["registers_per_thread"], row["occupancy_pct"], row["block"]) == (None, None, [256, 1, 1])
    notes = [n for n in report["notes"] if "2191500840" in n]
    assert len(notes) == 1 and notes[0].startswith(
        f"Kernel {BROADCAST}: registers per thread 2191500840 is above AMD's maximum of 512 registers per thread"
    )
    assert "occupancy.low_occupancy" not in {f["id"] for f in report["findings"]}
    assert "2191500840" not in json.dumps(report["findings"])


def test_impossible_values_never_raise_low_occupancy_on_nvidia():
    def report(registers, occupancy):
        builder = TraceBuilder()
        python = builder.thread("python")
        gpu = builder.gpu(0)
        for step in range(4):
            python.step(step, step * 1000, 1000)
            gpu.kernel(
                "my_custom_kernel",
                step * 1000 + 10,
                950,
                grid=(4096, 1, 1),
                block=(256, 1, 1),
                registers=registers,
                occupancy_pct=occupancy,
                launch=(python, step * 1000 + 2, 5),
            )
        return report_of(builder)

    assert "occupancy.low_occupancy" in {f["id"] for f in report(128, 12.5)["findings"]}
    corrupt = report(2191500840, 250.0)
    assert "occupancy.low_occupancy" not in {f["id"] for f in corrupt["findings"]}
    (row,) = corrupt["kernels"]
    assert (row["registers_per_thread"], row["occupancy_pct"]) == (None, None)
    assert sum("my_custom_kernel" in note for note in corrupt["notes"]) == 2


def test_zero_recorded_occupancy_is_unknown():
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 0, 10, occupancy_pct=0.0)
    assert report_of(builder)["kernels"][0]["occupancy_pct"] is None
