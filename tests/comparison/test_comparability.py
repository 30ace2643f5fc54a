"""The compare guardrails on mismatched pairs built with TraceBuilder: different GPUs, different batch (more
work per step), fused kernels, few kernels shared."""

import pytest

from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.comparison.render import render_comparison_text
from tb_gpu_advisor.files.discovery import resolve_target
from tb_gpu_advisor.pipeline import run_report
from tb_gpu_advisor.testing.builder import TraceBuilder

STEPS = 8
GEMM, RELU = "ampere_sgemm_128x64_tn", "void Eigen::internal::EigenMetaKernel<float>(int)"
A100, H100 = "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"


def write(
    tmp_path, name, *, model=A100, gpus=1, batch=32, gemm_us=300.0, micro_batches=1, fused=False, tf_data=False, tail=0
):
    """One run: per step an H2D copy of the batch (1 MiB per 32 examples) and, per micro-batch, a GEMM and a
    ReLU on each GPU (or one fused kernel in place of the ReLU); `tf_data`: the batch read from a tf.data
    pipeline whose batch stage records its batch size; `tail`: that many more steps' kernels captured after the
    last step marker (a capture that runs on past its timed steps)."""
    builder = TraceBuilder()
    python = builder.thread("python")
    pool = builder.thread("tf_data_private_threadpool/1")
    devices = [builder.gpu(i, model=model) for i in range(gpus)]
    t = 1000.0
    for step in range(STEPS):
        cursor = t + 10
        if tf_data:
            python.event("Iterator::Root", t + 1, 8)
            pool.event("Iterator::Root::Prefetch::BatchV2", t + 1, 6, batch_size=batch)
        for gpu in devices:
            gpu.memcpy("h2d", cursor, 40.0, batch * 2**15, src="pinned", stream=9, launch=(python, cursor - 5, 4))
        cursor += 50
        for _ in range(micro_batches):
            for gpu in devices:
                gpu.kernel(GEMM, cursor, gemm_us * batch / 32 / micro_batches, launch=(python, cursor - 10, 5))
            cursor += gemm_us * batch / 32 / micro_batches + 5
            for gpu in devices:
                gpu.kernel("loop_bias_relu_fusion" if fused else RELU, cursor, 60.0, launch=(python, cursor - 10, 5))
            cursor += 65
        python.step(step, t, cursor + 10 - t)
        t = cursor + 20
    for _ in range(tail):
        for gpu in devices:
            gpu.kernel(GEMM, t, gemm_us, launch=(python, t - 10, 5))
            gpu.kernel(RELU, t + gemm_us + 5, 60.0, launch=(python, t + gemm_us - 5, 5))
        t += gemm_us + 85
    return run_report(*resolve_target(builder.write_run(str(tmp_path / name), run=name)))


def host(base, cand):
    return compare_reports(base, cand)["hosts"][0]


def test_the_same_program_is_comparable_without_warnings(tmp_path):
    base = write(tmp_path, "base")
    cand = write(tmp_path, "faster", gemm_us=150.0)
    result = host(base, cand)
    info = result["comparability"]
    assert info["warnings"] == [] and result["per_example"] is None
    assert info["hardware"] == {"baseline": f"1x {A100}", "candidate": f"1x {A100}", "differs": False}
    assert info["kernel_share"] == {"baseline": 1.0, "candidate": 1.0}
    assert info["work_per_step"] == {
        "ratio": None,
        "source": None,
        "examples_per_step": None,
        "h2d_bytes_ratio": 1.0,
        "launch_ratio": 1.0,
    }
    assert "Caution" not in result["verdict"] and result["predictions"]["measured"]["basis"] == "per_step"


def test_kernels_captured_past_the_timed_steps_are_not_more_work(tmp_path):
    """The kernel table counts every kernel of the capture: a candidate whose capture runs 2 steps past its 8
    timed steps launches no more per step (the H200 transfer_pageable/pinned pair read 1.21x the work when a
    name's occurrences were divided by the timed steps)."""
    result = host(write(tmp_path, "base"), write(tmp_path, "longer", tail=2))
    work = result["comparability"]["work_per_step"]
    assert (work["launch_ratio"], work["ratio"], work["source"]) == (1.0, None, None)
    assert result["per_example"] is None and result["comparability"]["warnings"] == []


def test_different_gpus_and_gpu_count_are_named_in_the_verdict(tmp_path):
    base = write(tmp_path, "a100")
    for name, kwargs, text in (
        ("h100", {"model": H100}, f"1x {A100} vs 1x {H100}"),
        ("two", {"gpus": 2}, f"1x {A100} vs 2x {A100}"),
    ):
        result = host(base, write(tmp_path, name, **kwargs))
        assert result["comparability"]["hardware"]["differs"]
        assert f"Caution: different hardware ({text})" in result["verdict"]
        assert "Comparability" in render_comparison_text(compare_reports(base, write(tmp_path, name, **kwargs)))


def test_more_copy_bytes_alone_are_not_more_work_the_verdict_stays_per_step(tmp_path):
    base = write(tmp_path, "b32")
    cand = write(tmp_path, "b64", batch=64)  # twice the bytes copied, the same launches: each step 1.4x longer
    result = host(base, cand)
    work = result["comparability"]["work_per_step"]
    assert (work["ratio"], work["source"], work["h2d_bytes_ratio"], work["launch_ratio"]) == (None, None, 2.0, 1.0)
    assert result["per_example"] is None and result["change"] == "slower"
    assert result["verdict"].startswith(f"{1 / result['speedup']:.2f}× slower (mean step")
    assert (
        "Caution: the candidate copies 2.00x the host-to-device bytes per step: if the batch size changed"
        in result["verdict"]
    )
    assert result["predictions"]["measured"]["basis"] == "per_step"


def test_fewer_copy_bytes_from_a_resolved_transfer_finding_are_no_regression_per_example():
    """The advisor's own fix (uint8 images instead of float32: 0.30x the bytes per step) is the step-time
    speedup it measures, never a per-example slowdown, and the byte change needs no caution."""
    result = compare_reports(
        run_report(*resolve_target("demo_logs/jax_float32_images")),
        run_report(*resolve_target("demo_logs/jax_float32_images_fixed")),
    )["hosts"][0]
    work = result["comparability"]["work_per_step"]
    assert work["h2d_bytes_ratio"] < 0.5 and work["ratio"] is None and result["per_example"] is None
    assert result["verdict"].startswith("1.29× faster (mean step 18.87 ms → 14.63 ms")
    assert "Caution" not in result["verdict"] and "Per example" not in result["verdict"]
    assert result["predictions"]["measured"]["basis"] == "per_step"


def test_more_micro_batches_are_seen_in_the_launches_and_compared_per_launch(tmp_path):
    base = write(tmp_path, "one")
    # Gradient accumulation: 2 micro-batches of the same batch per step, each GEMM launch half as long; the
    # input copy carries both micro-batches (twice the bytes).
    cand = write(tmp_path, "two", batch=64, micro_batches=2)
    result = host(base, cand)
    work = result["comparability"]["work_per_step"]
    assert work["launch_ratio"] == 2.0 and work["ratio"] == 2.0 and work["source"] == "kernel_launches_per_step"
    per_example = result["per_example"]
    assert per_example["work_ratio"] == 2.0
    assert per_example["speedup"] == pytest.approx(result["speedup"] * 2, rel=1e-3)
    assert result["verdict"].startswith(f"Per example {per_example['speedup']:.2f}× ")
    assert "Per step alone (not comparable):" in result["verdict"]
    assert result["predictions"]["measured"]["basis"] == "per_example"
    text = render_comparison_text(compare_reports(base, cand))
    assert "mean / 2.00x work" in text and "Caution: different work per step (2.00x the kernel launches" in text
    kernels = result["kernels"]
    relu = (
        next(k for group in ("faster", "slower") for k in kernels[group] if k["name"] == RELU)
        if kernels["counts"]["faster"] + kernels["counts"]["slower"]
        else None
    )
    assert relu is None, "the ReLU takes 60 us a launch on both sides: unchanged per launch"
    assert kernels["counts"]["unchanged"] == 2
    assert all(k["basis"] == "per_launch" for k in kernels["faster"] + kernels["slower"])


def test_only_launch_counts_change_the_work_when_no_copies(tmp_path):
    base = write(tmp_path, "one")
    cand = write(tmp_path, "two", micro_batches=2)  # same bytes per step, twice the launches
    work = host(base, cand)["comparability"]["work_per_step"]
    assert (work["h2d_bytes_ratio"], work["launch_ratio"], work["source"]) == (1.0, 2.0, "kernel_launches_per_step")


def test_fused_kernels_are_neutral_and_few_shared_kernels_warn(tmp_path):
    base = write(tmp_path, "eager")
    cand = write(tmp_path, "xla", fused=True)
    result = host(base, cand)
    kernels = result["kernels"]
    assert [k["name"] for k in kernels["fused"]] == ["loop_bias_relu_fusion"] and kernels["new"] == []
    assert [k["name"] for k in kernels["gone"]] == [RELU]
    share = result["comparability"]["kernel_share"]
    assert share["baseline"] == pytest.approx(300 / 360, abs=1e-3)
    assert not any("share few kernels" in w for w in result["comparability"]["warnings"])
    # A program whose kernels are nearly all different: under 30% of the kernel time matched.
    other = write(tmp_path, "other", fused=True, gemm_us=10.0)
    renamed = host(write(tmp_path, "eager2", gemm_us=10.0), other)
    assert renamed["comparability"]["kernel_share"]["baseline"] < 0.3
    assert "Caution: the profiles share few kernels" in renamed["verdict"]


def test_the_gate_checks_the_time_per_example_when_the_work_per_step_differs(tmp_path):
    from tb_gpu_advisor.comparison.gate import check_comparison

    base = write(tmp_path, "one")
    cand = write(tmp_path, "two", batch=64, micro_batches=2)  # each step longer, each example faster
    result = check_comparison(compare_reports(base, cand), "step_time")
    assert result.passed and result.reason.startswith("ok: mean time per example (the candidate does 2.00x the work")
    slower = write(tmp_path, "twoslow", batch=64, micro_batches=2, gemm_us=700.0)  # per example slower too
    result = check_comparison(compare_reports(base, slower), "step_time")
    assert not result.passed and "mean time per example" in result.reason


def test_a_different_batch_from_the_input_tensors_is_compared_per_example(tmp_path):
    base = write(tmp_path, "b32", tf_data=True)
    cand = write(tmp_path, "b64", batch=64, tf_data=True)  # 2x the examples, the same launches: 1.4x the step
    result = host(base, cand)
    work = result["comparability"]["work_per_step"]
    assert work["examples_per_step"] == {"baseline": 32, "candidate": 64, "scope": "global"}
    assert (work["ratio"], work["source"], work["launch_ratio"]) == (2.0, "examples_per_step", 1.0)
    per_example = result["per_example"]
    assert per_example["source"] == "examples_per_step" and per_example["work_ratio"] == 2.0
    assert per_example["speedup"] == pytest.approx(result["speedup"] * 2, rel=1e-3)
    assert per_example["change"] == "faster" and result["change"] == "slower"
    assert result["verdict"].startswith(
        f"Per example {per_example['speedup']:.2f}× faster (examples per step "
        "32 → 64, from the input tensors; time for 32 examples"
    )
    assert "Per step alone (not comparable):" in result["verdict"]
    assert "Caution: the candidate copies" not in result["verdict"]
    assert [c["text"] for c in result["configuration_changes"]] == ["global batch 32 → 64"]
    assert result["predictions"]["measured"]["basis"] == "per_example"
    text = render_comparison_text(compare_reports(base, cand))
    assert "Examples per step (from the input tensors): baseline 32, candidate 64." in " ".join(text.split())
    assert "Caution: different work per step (32 → 64 examples per step, from the input tensors)" in " ".join(
        text.split()
    )


def test_the_same_batch_from_the_input_tensors_outweighs_the_launch_count(tmp_path):
    base = write(tmp_path, "one", tf_data=True)
    # The same 32 examples per step in 2 micro-batches: twice the launches, the same work.
    cand = write(tmp_path, "two", micro_batches=2, tf_data=True)
    result = host(base, cand)
    work = result["comparability"]["work_per_step"]
    assert work["launch_ratio"] == 2.0 and work["examples_per_step"]["candidate"] == 32
    assert (work["ratio"], work["source"]) == (None, None) and result["per_example"] is None


def test_the_straggler_fix_stays_per_example_by_its_launches_when_the_batch_is_per_replica_or_global():
    """Under MirroredStrategy the tf.data batch (64) may be per replica or global: no examples per step on
    either side, so the two micro-batches per step of the fix are seen in the launches, as before."""
    result = compare_reports(
        run_report(*resolve_target("demo_logs/multi_gpu_straggler")),
        run_report(*resolve_target("demo_logs/multi_gpu_straggler_fixed")),
    )["hosts"][0]
    work = result["comparability"]["work_per_step"]
    assert work["examples_per_step"] is None
    assert (work["ratio"], work["source"]) == (2.0, "kernel_launches_per_step")
    assert result["per_example"]["work_ratio"] == 2.0 and result["per_example"]["examples_per_step"] is None
    assert result["verdict"].startswith("Per example 2.76× faster (the candidate does 2.00× the work per step")
    assert not any(c["setting"] in ("global_batch", "batch_per_device") for c in result["configuration_changes"])
