"""What the trace shows compiled (analysis.compilation) and what the PyTorch profiler recorded (capture options), on
generated Kineto traces with exact counts."""

from tb_gpu_advisor.analysis.compilation import compilation
from tb_gpu_advisor.analysis.framework import detect_framework
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event

PROPS = [
    {
        "id": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "totalGlobalMem": 85_000_000_000,
        "computeMajor": 9,
        "computeMinor": 0,
        "numSms": 132,
    }
]


def _model(tmp_path, events, **top):
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, deviceProperties=PROPS, **top))
    return load_model(path)


def _graph_steps(count=3, kernels=5, eager=1):
    """Steps that replay one CUDA graph of `kernels` Inductor kernels and launch `eager` kernels one by one."""
    events, correlation = [], 0
    for n in range(count):
        base = n * 1000
        events.append(x_event("user_annotation", f"ProfilerStep#{n}", base, 1000))
        events.append(x_event("cpu_op", "Torch-Compiled Region: 0/0", base + 5, 300))
        correlation += 1
        events.append(launch(base + 10, 40, correlation, name="cudaGraphLaunch"))
        events += [kernel(f"triton_poi_fused_add_{k}", base + 60 + 20 * k, 10, correlation) for k in range(kernels)]
        for k in range(eager):
            correlation += 1
            events += [
                launch(base + 400 + 20 * k, 5, correlation),
                kernel("void at::native::vectorized_elementwise_kernel", base + 410 + 20 * k, 3, correlation),
            ]
    return events


def test_graph_replays_and_torch_compile_are_counted(tmp_path):
    model = _model(tmp_path, _graph_steps())
    found = compilation(model, detect_framework(model))
    assert (found.graph_launch_calls, found.graph_events, found.launched_events) == (3, 15, 18)
    assert round(found.graph_share, 4) == 0.8333 and found.graphs_hide_launches
    assert found.torch_compile[0] == "Torch-Compiled Region: 0/0"
    assert "triton_poi_fused_add_0" in found.torch_compile
    assert found.graph_note("pytorch").startswith("CUDA graphs replay 83% of the device work (15 events from 3 graph")


def test_eager_launches_are_not_graphs(tmp_path):
    model = _model(tmp_path, _graph_steps(kernels=1, eager=4))
    found = compilation(model, detect_framework(model))
    assert (found.graph_events, found.launched_events) == (0, 15)
    assert not found.graphs_hide_launches and found.graph_note() is None


def test_a_cudnn_fusion_kernel_is_no_compiler(tmp_path):
    events = [
        x_event("user_annotation", "ProfilerStep#0", 0, 100),
        launch(5, 4, 1),
        kernel("void cudnn::fusion::compute_dot_do_o_specialized<true, 128>(void const*)", 10, 20, 1),
        x_event("cpu_op", "aten::addmm", 1, 10),
    ]
    configuration = host_report(_model(tmp_path, events))["configuration"]
    assert configuration["xla"] is False and configuration["graph_replay_pct"] == 0.0


def test_recording_options_come_from_the_flags_or_the_events(tmp_path):
    events = _graph_steps(count=2) + [x_event("cpu_op", "aten::mm", 100, 5, **{"Input Dims": [[2, 2], [2, 2]]})]
    model = _model(tmp_path, events, with_flops=1)
    assert model.profiler_options == ("record_shapes", "with_flops")
    assert model.profiled_ops == 3  # two compiled regions and the mm
    bare = _model(tmp_path, _graph_steps(count=2))
    assert bare.profiler_options == ()
    # 1.5 recorded ops per 1 ms step cost ~4 us at 2.5 us each: under 5% of the step, so no note (review G11);
    # the note's wording, once material, is pinned in tests/analysis/test_capture_overhead.py
    assert not any("This capture recorded" in note for note in host_report(model)["notes"])
    assert not any("This capture recorded" in note for note in host_report(bare)["notes"])
