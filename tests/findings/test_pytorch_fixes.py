"""PyTorch rules and PyTorch wording, on small written Kineto traces (exact numbers) and the real ones."""

import numpy as np
import pytest

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


def _report(tmp_path, events):
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, deviceProperties=PROPS))
    return host_report(load_model(path))


def _finding(report, finding_id):
    return next((f for f in report["findings"] if f["id"] == finding_id), None)


def _step(n, start):
    return x_event("user_annotation", f"ProfilerStep#{n}", start, 1000)


def test_gpu_idle_after_a_host_sync_is_the_finding(tmp_path):
    # Each 1 ms step: a kernel 10-110 us, the host syncs 20-110 us, the next launch only at 310 us (kernel
    # 320-420 us): after the sync the GPU idles 110 -> 320 us = 210 us per step, 21% of the step.
    events = []
    for n, base in ((1, 0), (2, 1000)):
        events += [
            _step(n, base),
            launch(base + 5, 4, 100 * n),
            kernel("gemm_kernel", base + 10, 100, 100 * n),
            launch(base + 20, 90, 100 * n + 1, name="cudaStreamSynchronize"),
            launch(base + 310, 4, 100 * n + 2),
            kernel("gemm_kernel", base + 320, 100, 100 * n + 2),
        ]
    report = _report(tmp_path, events)
    assert report["summary"]["framework"] == "pytorch"
    finding = _finding(report, "sync.host_syncs_in_step")
    assert finding["severity"] == "high"
    assert finding["evidence"]["metrics"]["syncs_per_step"] == 1.0
    assert finding["evidence"]["metrics"]["idle_after_sync_ms"] == 0.42
    assert finding["evidence"]["metrics"]["idle_after_sync_pct"] == 21.0
    # Whole counts without decimals, the noun agreeing; a share of the step time (not "of the steps").
    assert finding["summary"].startswith("The host waited for the GPU 1 time per step;")
    assert "(21.0% of the step time)" in finding["summary"]
    assert "torch.cuda.synchronize()" in finding["fix"]


def test_a_sync_that_waits_for_a_device_to_host_read_is_left_to_the_copy_rule(tmp_path):
    events = [_step(1, 0), _step(2, 1000)]
    for n, base in ((1, 0), (2, 1000)):
        events += [
            launch(base + 5, 4, 100 * n),
            kernel("gemm_kernel", base + 10, 100, 100 * n),
            launch(base + 110, 2, 100 * n + 1, name="cudaMemcpyAsync"),
            x_event(
                "gpu_memcpy",
                "Memcpy DtoH (Device -> Pinned)",
                base + 111,
                2,
                pid=0,
                tid=7,
                device=0,
                stream=7,
                correlation=100 * n + 1,
                bytes=4,
            ),
            launch(base + 112, 2, 100 * n + 3, name="cudaStreamSynchronize"),
            launch(base + 310, 4, 100 * n + 2),
            kernel("gemm_kernel", base + 320, 100, 100 * n + 2),
        ]
    report = _report(tmp_path, events)
    assert _finding(report, "sync.host_syncs_in_step") is None
    copy_rule = _finding(report, "transfer.d2h_sync_in_step")
    assert copy_rule is not None and ".item()" in copy_rule["fix_summary"]


def test_zero_grad_filling_gradients(tmp_path):
    events = [_step(1, 0), _step(2, 1000)]
    for base in (0, 1000):
        events += [
            x_event("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", base + 500, 100),
            x_event("cpu_op", "aten::zero_", base + 510, 10),
            x_event("cpu_op", "aten::zero_", base + 530, 10),
            x_event("cpu_op", "aten::zero_", base + 700, 10),
        ]  # outside zero_grad: not counted
    finding = _finding(_report(tmp_path, events), "memory.zero_grad_fills")
    assert finding["severity"] == "low"
    assert finding["evidence"]["metrics"]["zero_grad_fill_ms"] == 0.04
    assert "set_to_none=True" in finding["fix_summary"]


def test_no_pytorch_rule_on_a_set_to_none_loop(tmp_path):
    events = [_step(1, 0), _step(2, 1000), x_event("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", 500, 5)]
    report = _report(tmp_path, events)
    assert {f["id"] for f in report["findings"]} & {"memory.zero_grad_fills", "sync.host_syncs_in_step"} == set()


def test_dataloader_wait_reads_as_pytorch(tmp_path):
    events = []
    for n, base in ((1, 0), (2, 1000)):
        events += [
            _step(n, base),
            x_event("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", base + 1, 600),
            launch(base + 610, 4, n),
            kernel("gemm_kernel", base + 620, 300, n),
        ]
    report = _report(tmp_path, events)
    assert report["summary"]["verdict"].startswith("Input-bound: the GPU waits for the DataLoader")
    finding = _finding(report, "input.gpu_waits_for_input")
    assert finding["title"] == "The GPU waits for the DataLoader"
    assert "num_workers" in finding["fix"] and "tf.data" not in finding["fix"]


@pytest.mark.parametrize(
    "name, expected",
    [
        # one rank of 8: its collective time includes waiting for ranks this file does not show, so at most medium
        (
            "a100_8rank_control",
            {
                "communication.allreduce_exposed": "medium",
                "host.gpu_idle_host_busy": "medium",
                # aten::copy_ and aten::fill_ kernels are copies/fills, as the Kernels card says (issue 31): the
                # element-wise rest is under the 20% bar of fusion.elementwise_kernels
                "transfer.d2h_sync_in_step": "low",
            },
        ),
        (
            "v100_2rank_test",
            {
                "steps.uneven_step_time": "low",  # the slow steps compute more (review G6): no estimate
                "precision.fp32_matmul": "medium",
                "communication.allreduce_exposed": "medium",
            },
        ),
        # The GPU waits for launch calls 2.9% of the steps (idle attribution): the 3.9% of launch calls in the gaps
        # counted the copy calls (1.5%) too, and a copy is not a launch.
        (
            "a100_2rank_nccl",
            {
                "host.gpu_idle_host_busy": "high",
                "communication.allreduce_exposed": "medium",
                "sync.host_syncs_in_step": "low",
            },
        ),
    ],
)
def test_real_traces_get_findings_in_pytorch_terms(name, expected, kineto_models):
    report = host_report(kineto_models[name])
    assert {f["id"]: f["severity"] for f in report["findings"]} == expected
    for finding in report["findings"]:
        assert "tf.data" not in finding["fix"] and "tf.keras" not in finding["fix"], finding["id"]
    collectives = _finding(report, "communication.allreduce_exposed")
    by_kind = collectives["evidence"]["metrics"]["collective_ms_by_kind"]
    if by_kind.get("allreduce", 0) > sum(by_kind.values()) / 2:
        assert "gradient_as_bucket_view=True" in collectives["fix"] and "no_sync()" in collectives["fix"]
        assert collectives["title"] == "Gradient all-reduce is not hidden behind compute"
    else:  # TorchRec-style traffic (send/recv, all-to-all): DDP bucket advice does not apply
        assert "bucket_cap_mb" not in collectives["fix"] and "DDP" not in collectives["fix_summary"]
        assert "send/recv" in collectives["fix"] and "not gradient all-reduce" in collectives["fix"]
        # the title names the dominant kind, read from the host ops (`nccl:all_to_all` issues the
        # `ncclKernel_SendRecv` kernels of both these TorchRec ranks), not "Gradient all-reduce"
        assert max(by_kind, key=by_kind.get) == "alltoall"
        assert collectives["title"] == "All-to-all exchanges are not hidden behind compute"
        assert collectives["evidence"]["metrics"]["issued_by"]["alltoall"] == ["nccl:all_to_all"]


def test_every_pytorch_wording_rewords_a_known_finding_keeping_its_category():
    from tb_gpu_advisor.findings.catalog import CATALOG, VARIANTS, entry_for

    entry_for("input.gpu_waits_for_input", "pytorch")  # loads the variants
    assert VARIANTS["pytorch"]
    for key, wording in VARIANTS["pytorch"].items():
        assert key in CATALOG and wording.title != CATALOG[key].title, key  # a title only where it differs
        entry = entry_for(key, "pytorch")
        assert entry.category == CATALOG[key].category and entry.title == (wording.title or CATALOG[key].title), key
        assert entry.fix and len(entry.fix_summary) <= 100, key
        assert entry.docs and all(url.startswith("https://") for url in entry.docs), key
    assert entry_for("input.gpu_waits_for_input", "tensorflow") is CATALOG["input.gpu_waits_for_input"]


def test_a_finding_has_one_pytorch_wording():
    """A finding PyTorch's variants reword (findings/pytorch_fixes.py) has no inline `pytorch=` idiom as well:
    entry_for returns the variant for PyTorch runs, so an inline idiom beside it would never be shown."""
    from tb_gpu_advisor.findings.catalog import CATALOG, VARIANTS, entry_for

    entry_for("input.gpu_waits_for_input", "pytorch")  # loads the variants
    assert {key for key in VARIANTS["pytorch"] if CATALOG[key].pytorch is not None} == set()
    assert any(entry.pytorch is not None for entry in CATALOG.values())  # the others keep theirs


def test_volta_gets_float16_autocast_with_a_grad_scaler_not_bfloat16(kineto_models):
    """The V100 (cc 7.0) has float16 Tensor Cores only: bfloat16 autocast would run no faster there."""
    report = host_report(kineto_models["v100_2rank_test"])
    finding = _finding(report, "precision.fp32_matmul")
    assert finding["fix_summary"].startswith('torch.autocast("cuda", dtype=torch.float16) with a GradScaler')
    assert "dtype=torch.bfloat16" not in finding["fix"] and "GradScaler" in finding["fix"]


def test_v100_torchrec_trace_is_below_the_elementwise_fusion_bar(kineto_models):
    """Checked by hand: its element-wise kernels (aten add/mul/tanh_backward, the Adam multi_tensor_apply) are 15.47%
    of kernel time, 865 per step; the FBGEMM split-embedding kernels, CatArrayBatchedCopy and reduce_kernel are not
    element-wise (an embedding lookup, a copy, a reduction), so the 20% bar of fusion.elementwise_kernels is not
    met and the finding stays out."""
    from tb_gpu_advisor.analysis.kernel_names import kernel_class
    from tb_gpu_advisor.model.trace import ActivityKind

    (gpu,) = [g for g in kineto_models["v100_2rank_test"].gpus if len(g.activity)]
    activity = gpu.activity
    kernels = activity.kind == ActivityKind.KERNEL
    by_name = np.array([kernel_class(name) == "elementwise" for name in activity.names])
    elementwise = kernels & by_name[activity.name_id]
    share = 100.0 * activity.duration_ps[elementwise].sum() / activity.duration_ps[kernels].sum()
    assert round(share, 2) == 15.47 and int(elementwise.sum()) == 5191
    for name in activity.names:
        if name.startswith(
            (
                "void split_embedding",
                "void at::native::(anonymous namespace)::CatArrayBatchedCopy",
                "void at::native::reduce_kernel",
            )
        ):
            assert kernel_class(name) != "elementwise", name
    report = host_report(kineto_models["v100_2rank_test"])
    assert _finding(report, "fusion.elementwise_kernels") is None
