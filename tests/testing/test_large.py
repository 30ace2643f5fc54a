"""The large-trace scenario writes a valid multi-GPU training trace with what it says it holds."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.large import write_training_trace


def test_scenario_counts_and_pairing(tmp_path):
    size = write_training_trace(tmp_path / "t.xplane.pb", gpus=4, steps=3, kernels_per_step=200, seed=1)
    assert size.kernels == 4 * 3 * 200 and size.bytes > 4 * 3 * 200 * 60
    model = load_model(size.path)
    report = host_report(model)
    assert [gpu.name for gpu in model.gpus] == [f"/device:GPU:{i}" for i in range(4)]
    assert report["launch"]["kernel_count"] == size.kernels
    assert report["launch"]["unpaired_count"] == 0  # every kernel has its host launch
    assert report["summary"]["step_time_ms"]["count"] == 3
    assert report["transfers"]["h2d"]["count"] == 4 * 3 and report["transfers"]["d2h"]["count"] == 4 * 3
    assert report["balance"]["nccl_time_us"] > 0 and 0 < report["summary"]["gpu_busy_pct"] <= 100
    assert report["summary"]["input_wait_pct"] > 0
