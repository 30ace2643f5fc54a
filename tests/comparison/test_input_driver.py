"""compare on real fixes of the input: the driver is the input wait when more loader threads feed the step, the
input preparation when the loader leaves the step thread, and an untraced stall stays untraced time, with the
low-certainty finding that read it as input named beside it."""

from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.pipeline import analyze_host_file
from tests.data import real_trace

DEMO = "demo_logs/jax_inline_loader{}/plugins/profile/2026_01_15_09_1{}_00/h100-jax-03.xplane.pb"


def _compare(base, cand):
    return compare_reports(analyze_host_file(base), analyze_host_file(cand))["hosts"][0]


def test_more_loader_threads_cut_the_input_wait():
    host = _compare(
        real_trace("feeder/feeder_one_loader.xplane.pb"), real_trace("feeder/feeder_eight_loaders.xplane.pb")
    )
    assert host["driver"]["category"] == "input_wait"
    assert (host["driver"]["baseline_ms"], host["driver"]["baseline_pct"]) == (7.995216, 33.63)
    assert host["driver"]["untraced_batch_prep_ms"] is None
    assert (
        "faster (mean step 23.77 ms → 18.02 ms, 95% CI -35.6% to -10.7%): input wait fell from 8.00 ms to "
        in host["verdict"]
    )


def test_a_tensorflow_loader_moved_into_tf_data_cuts_the_input_preparation():
    host = _compare(
        real_trace("tf221_cpu_python_loader_inline.xplane.pb"), real_trace("tf221_cpu_python_loader_prefetch.xplane.pb")
    )
    assert host["driver"]["category"] == "input_prep"
    assert ": input preparation fell from 166.59 ms to 0 ns per step (46.9% → 0.0% of the time)." in host["verdict"]


def test_the_jax_demo_loader_moved_off_the_step_thread_cuts_the_input_preparation():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    host = _compare(root / DEMO.format("", 5), root / DEMO.format("_fixed", 4))
    assert host["driver"]["category"] == "input_prep"
    assert ": input preparation fell from 22.53 ms to " in host["verdict"]


def test_an_untraced_loader_stays_untraced_time_and_the_finding_is_named():
    host = _compare(
        real_trace("cpu_pairs/jax_loader_inline.xplane.pb"), real_trace("cpu_pairs/jax_loader_background.xplane.pb")
    )
    assert host["driver"]["category"] == "idle"
    assert host["driver"]["untraced_batch_prep_ms"] == 8.915
    assert (
        "untraced host time (Python between ops) fell from 8.81 ms to 67.6 µs per step (43.2% → 0.6% of the "
        "time). The baseline's input.host_batch_prep read 8.91 ms of each step's untraced start as batch "
        "preparation (how sure: low), and the candidate no longer shows it."
    ) in host["verdict"]
