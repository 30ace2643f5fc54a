"""analysis.clock_drift: the same kernels slowing step after step are noted as a lowered clock; steps of steady
kernels, a single slow step, or steps running different kernels are not."""

from tb_gpu_advisor.testing import TraceBuilder
from tests.data import REAL
from tests.findings.scenarios import report_of, step_starts
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"
NOTE = "The same kernels with the same launch configurations"


def _trace(gemm_us, other="vectorized_elementwise_kernel"):
    """8 steps of 10 ms: a GEMM taking gemm_us[i] in step i and an element-wise kernel taking 1 + 0.25 ms x its
    share of the GEMM's slowdown."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for index, start in enumerate(step_starts(python, count=len(gemm_us), step_us=10_000)):
        gpu.kernel(GEMM, start + 10, gemm_us[index], grid=(132, 1, 1), block=(256, 1, 1))
        slow = gemm_us[index] / gemm_us[0]
        name = other if isinstance(other, str) else other[index]
        gpu.kernel(name, start + 20 + gemm_us[index], 1_000 * slow, grid=(512, 1, 1), block=(128, 1, 1))
    return report_of(builder)


def _notes(report):
    return [note for note in report["notes"] if note.startswith(NOTE)]


def test_kernels_slowing_step_after_step_are_noted_with_their_times():
    (note,) = _notes(_trace([4_000, 4_100, 4_250, 4_400, 4_600, 4_800, 5_000, 5_200]))
    # first quarter (2 steps): 4.05 + 1.0125 ms; last quarter: 5.1 + 1.275 ms: 26% longer
    assert "(2 per step) take 26% longer at the end of the capture than at its start on /device:GPU:0" in note
    assert "(5.06 -> 6.38 ms of kernel time per step)" in note and "nvidia-smi" in note


def test_steady_kernels_and_a_single_slow_step_are_not_noted():
    assert not _notes(_trace([4_000] * 8))
    assert not _notes(_trace([4_000, 3_950, 4_020, 3_990, 4_000, 3_980, 4_010, 5_200]))  # only the last step


def test_steps_running_different_kernels_are_not_compared():
    names = ["a_kernel", "b_kernel"] * 4
    assert not _notes(_trace([4_000, 4_100, 4_250, 4_400, 4_600, 4_800, 5_000, 5_200], other=names))


def test_real_h200_healthy_torch_run_notes_its_clock_drop():
    """torch/healthy: the 152 kernels of each step go from 23.6 to 28.4 ms of kernel time over 8 steps (measured
    24.4 ms without the profiler); the bf16 heldout run, flat until its last step, gets no note."""
    path = next((REAL / "h200" / "torch" / "healthy").glob("*.pt.trace.json.gz"))
    (note,) = _notes(host_report(load_model(str(path))))
    assert "(152 per step) take 20% longer" in note
    flat = next((REAL / "h200_heldout" / "torch" / "precision_bf16").glob("*.pt.trace.json.gz"))
    assert not _notes(host_report(load_model(str(flat))))
