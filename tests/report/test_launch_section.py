"""The text report's Kernel launch section: kernels replayed by a graph launch are counted against the calls they
came from, never as paired with a launch of their own."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.report.device_sections import launch_section
from tests.data import REAL


def _launch(count, calls):
    return {
        "report": {
            "launch": {
                "count": count,
                "kernel_count": count,
                "paired_call_count": calls,
                "latency_us": {"p50": 10.0, "p95": 20.0, "max": 30.0},
                "tiny_kernel_count": 0,
                "tiny_kernel_pct": 0.0,
                "per_step": None,
            }
        }
    }["report"]


def test_one_call_per_kernel_reads_as_paired_launches():
    (line, _) = launch_section(_launch(100, 100)).lines
    assert line.startswith("100 of 100 kernels paired with their host launch; launch-to-start latency p50")


def test_graph_replayed_kernels_read_as_traced_to_their_calls():
    (line, _) = launch_section(_launch(3072, 12)).lines
    assert line.startswith(
        "3,072 of 3,072 kernels traced to 12 host launch calls (a graph launch replays many kernels under one "
        "call); launch-to-start latency per call p50"
    )


def test_jax_command_buffer_run_counts_its_graph_launches():
    """jax/launch_jit: 12 command-buffer launches replay all 3,072 kernels (the note says they have no launch
    call of their own): 12 calls, not 3,072 paired launches."""
    path = next((REAL / "h200" / "jax" / "launch_jit").rglob("*.xplane.pb"))
    launch = host_report(load_model(str(path)))["launch"]
    assert (launch["count"], launch["paired_call_count"]) == (3072, 12)
