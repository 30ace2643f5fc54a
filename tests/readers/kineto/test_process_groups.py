"""Rank counts from a Kineto trace's distributedInfo (kineto.process_groups), so that bus bandwidth is computed for
collectives whose args record no group size: written cases and the committed real ranks."""

from tb_gpu_advisor.readers.kineto.process_groups import default_group_size, with_group_sizes
from tb_gpu_advisor.model.trace import CollectiveCall
from tb_gpu_advisor.pipeline import host_report


def _call(collective, group_size=None):
    return CollectiveCall(
        source="kernel", device=0, collective=collective, start_ps=0, duration_ps=1, group_size=group_size
    )


def test_the_rank_count_comes_from_the_process_groups_or_else_the_world():
    assert default_group_size({"world_size": 8}) == (8, "world_size")
    one = {"world_size": 8, "pg_config": [{"pg_name": "0", "pg_size": 4}, {"pg_name": "1", "pg_size": 4}]}
    assert default_group_size(one) == (4, "process_groups")
    mixed = {"world_size": 8, "pg_config": [{"pg_size": 8}, {"pg_size": 2}]}
    assert default_group_size(mixed) == (None, None)  # which group a call used is unknown
    assert default_group_size({"world_size": 1}) == (None, None)
    assert default_group_size({"world_size": "8"}) == (None, None)
    assert default_group_size(None) == (None, None)


def test_a_call_keeps_its_own_group_size_and_send_recv_takes_none():
    calls = with_group_sizes((_call("allreduce", 2), _call("alltoall"), _call("sendrecv")), {"world_size": 8})
    assert [(c.group_size, c.group_size_source) for c in calls] == [(2, "profiler"), (8, "world_size"), (None, None)]


def test_real_ranks_get_bus_bandwidth_from_their_world_size(kineto_models):
    # a100_8rank_control and v100_2rank_test (PyTorch before 2.1: no Group size arg) record only world_size in
    # distributedInfo; a100_2rank_nccl records Group size per call and one process group of 2.
    expected = {
        "a100_8rank_control": {"allreduce": (8, "world_size", 80.4), "alltoall": (8, "world_size", 27.4)},
        "v100_2rank_test": {"allreduce": (2, "world_size", 16.7), "alltoall": (2, "world_size", 14.9)},
        "a100_2rank_nccl": {"allreduce": (2, "profiler", 10.0)},
    }
    for name, kinds in expected.items():
        rows = {
            row["collective"]: row for row in host_report(kineto_models[name])["collective_bandwidth"]["collectives"]
        }
        for kind, (ranks, source, busbw) in kinds.items():
            row = rows[kind]
            assert (row["group_size"], row["group_size_source"]) == (ranks, source), (name, kind)
            assert abs(row["busbw_gbps"] - busbw) < 0.1, (name, kind, row["busbw_gbps"])
            # The link is a guess (PCIe for ranks whose placement is unknown) these calls outran: no share.
            if row["best_busbw_gbps"] > 24:
                assert row["best_busbw_link_ratio"] is None
