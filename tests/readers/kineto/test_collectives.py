"""Kineto collectives named from the host op that issued them, the NCCL kernel's name only as fallback."""

from collections import Counter

import pytest

from tb_gpu_advisor.readers.kineto.build import load_kineto_model
from tb_gpu_advisor.model.collective_names import collective_of, host_collective
from tb_gpu_advisor.testing.kineto_trace import trace_text
from tb_gpu_advisor.testing.kineto_trace import x_event as x

SENDRECV = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"


@pytest.mark.parametrize(
    "name, kind",
    [
        ("nccl:all_reduce", "allreduce"),
        ("nccl:all_to_all", "alltoall"),
        ("c10d::allreduce_", "allreduce"),
        ("nccl:_reduce_scatter_base", "reducescatter"),
        ("c10d::_allgather_base_", "allgather"),
        ("nccl:broadcast", "broadcast"),
        ("nccl:send", "sendrecv"),
        ("gloo:all_reduce", "allreduce"),
        ("nccl:all_gather_into_tensor_coalesced", "allgather"),
        ("c10d::barrier", "barrier"),
    ],
)
def test_host_op_names(name, kind):
    assert host_collective(name)[0] == kind


def test_names_that_are_not_collectives():
    assert host_collective("aten::mm") is None and collective_of("fusion.3") is None
    assert collective_of("all_to_allv") == "alltoall" and collective_of("CollectiveBcastSendV2") == "broadcast"


def _model(tmp_path, events):
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(
        trace_text(events, schemaVersion=1, distributedInfo={"backend": "nccl", "rank": 0, "world_size": 4})
    )
    return load_kineto_model(path)


def test_a_sendrecv_kernel_issued_by_all_to_all_is_an_all_to_all(tmp_path):
    """NCCL runs all-to-all as grouped send/recv: the annotation around the launch names it, with its size."""
    model = _model(
        tmp_path,
        [
            x("cpu_op", "record_param_comms", "100", "20"),
            x(
                "user_annotation",
                "nccl:all_to_all",
                "102",
                "15",
                **{"Input Dims": [[4, 1024]], "Input type": ["c10::BFloat16"]},
            ),
            x("cuda_runtime", "cudaLaunchKernel", "105", "3", correlation=9),
            x("kernel", SENDRECV, "110", "40", pid=0, tid=20, device=0, stream=20, correlation=9),
            # no host op around this launch: the kernel's name is all there is
            x("cuda_runtime", "cudaLaunchKernel", "200", "3", correlation=10),
            x("kernel", SENDRECV, "210", "40", pid=0, tid=20, device=0, stream=20, correlation=10),
        ],
    )
    host, first, second = model.collectives
    assert (host.source, host.collective, host.issued_by) == ("host", "alltoall", "nccl:all_to_all")
    assert (first.collective, first.named_from, first.issued_by) == ("alltoall", "host_op", "nccl:all_to_all")
    assert (first.in_bytes, first.dtype) == (4 * 1024 * 2, "BFloat16")
    assert (second.collective, second.named_from, second.issued_by) == ("sendrecv", "kernel_name", None)


def test_a100_8rank_control_collectives_come_from_their_host_ops(kineto_models):
    """Every NCCL kernel of this TorchRec rank is `ncclKernel_SendRecv` or `ncclKernel_AllReduce`; the host ops
    say the SendRecv kernels are the sparse embeddings' all-to-all (`nccl:all_to_all`), sized from their inputs."""
    calls = [c for c in kineto_models["a100_8rank_control"].collectives if c.source == "kernel"]
    assert Counter((c.collective, c.issued_by) for c in calls) == {
        ("alltoall", "nccl:all_to_all"): 42,
        ("allreduce", "nccl:all_reduce"): 18,
    }
    assert {c.named_from for c in calls} == {"host_op"}
    # DDP's gradient buckets: 3 float32 all-reduces per step (6 steps), 1.2 GB over the profile
    reduces = [c for c in calls if c.collective == "allreduce"]
    assert (sum(c.in_bytes for c in reduces), {c.dtype for c in reduces}) == (1_200_223_224, {"Float"})


def test_the_collectives_table_says_per_step_counts_and_the_issuing_op(kineto_models):
    from tb_gpu_advisor.pipeline import host_report
    from tb_gpu_advisor.report.sections import host_sections

    section = next(
        s for s in host_sections(host_report(kineto_models["a100_8rank_control"])) if s.title == "Collectives"
    )
    rows = {(row[0], row[1]): row for row in section.table.rows}
    # 6 steps: 7 all-to-alls and 3 DDP bucket all-reduces per step, each named by its nccl: annotation
    assert rows[("kernel", "alltoall")][3] == "7" and rows[("kernel", "alltoall")][-1] == "nccl:all_to_all"
    assert rows[("kernel", "allreduce")][3] == "3" and rows[("kernel", "allreduce")][-1] == "nccl:all_reduce"
