"""Devices named as what they are: a CUPTI range-profiler capture is a GPU capture, AMD parts by their gfx
architecture, TPU planes as TPUs."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.report.configuration_section import configuration_rows
from tb_gpu_advisor.testing.kineto_trace import launch, trace_text, x_event
from tests.data import real_trace


def test_a_range_profiler_capture_is_a_gpu_capture_without_kernel_times(tmp_path):
    events, corr = [], 1
    for step in range(5):
        t0 = 1000 + step * 1000
        events.append(x_event("user_annotation", f"ProfilerStep#{step}", t0, 1000))
        for k in range(3):
            events += [
                x_event("cpu_op", "aten::mm", t0 + 10 + k * 300, 200),
                launch(t0 + 20 + k * 300, 5, corr),
                x_event(
                    "cuda_profiler_range",
                    "ampere_sgemm_128x64_tn",
                    t0 + 30 + k * 300,
                    100,
                    pid=0,
                    tid=0,
                    **{"sm__throughput.avg.pct_of_peak_sustained_elapsed": 41.0},
                ),
            ]
            corr += 1
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, schemaVersion=1))
    report = host_report(load_model(path))
    assert report["summary"]["verdict"].startswith("Unknown: This is a CUPTI range-profiler capture on a GPU (15 ")
    assert report["summary"]["confidence"]["level"] == "low"
    assert "ProfilerActivity.CUDA" in report["summary"]["confidence"]["reasons"][0]
    assert not any("CPU-only" in note for note in report["notes"])
    assert report["notes"][0].startswith("A GPU profile without kernel times")


def test_an_amd_gpu_without_a_model_name_is_named_by_its_gfx_architecture():
    report = host_report(load_model(real_trace("amd_mi300x_jax08_gemm.xplane.pb")))
    rows = dict(configuration_rows(report["configuration"]))
    assert report["configuration"]["gpu"]["arch"] == "gfx942"
    assert rows["GPUs"].startswith("8 x AMD gfx942 (model not in the trace)")


def test_tpu_planes_are_tpus_and_xla_runs_on_them():
    report = host_report(load_model(real_trace("tpu_v6e_inference_4chip.xplane.pb")))
    rows = dict(configuration_rows(report["configuration"]))
    assert report["configuration"]["tpu_count"] == 4
    assert rows["XLA"] == "on (TPU)" and rows["TPUs"].startswith("4 ")
