"""Small rank sets built from numbers, for exact expectations: each rank computes, reads its input, then meets the
others in one all-reduce that moves its data once the last rank arrives, then runs a tail."""

from tb_gpu_advisor.analysis.ranks.profile import RankCall, RankProfile, RankStep, WorkRow

MS = 1_000_000_000  # ps


def rank_set(
    compute_ms,
    input_ms=None,
    steps=5,
    transfer_ms=2.0,
    tail_ms=1.0,
    clock_ms=None,
    work=None,
    bytes_=4 * 2**20,
    link_gbps=None,
    buckets=1,
    machine=None,
    world_size=None,
):
    """RankProfiles of len(compute_ms) ranks; `clock_ms[r]` is added to every time of rank r (its clock offset);
    `work[r]`: WorkRows of rank r (default: one op, its count and time from compute_ms). With `buckets` > 1 each
    rank launches an all-reduce after each equal share of its compute, the transfers one after the other (each
    `transfer_ms / buckets` from its last arrival or the previous one's end); `machine(r)` names rank r's machine."""
    count = len(compute_ms)
    input_ms = input_ms or [0.0] * count
    clock_ms = clock_ms or [0.0] * count
    per_rank = [[] for _ in range(count)]
    start = 0.0
    for step in range(steps):
        calls = [[] for _ in range(count)]
        end_call = start
        for k in range(buckets):
            arrivals = [start + input_ms[r] + compute_ms[r] * (k + 1) / buckets for r in range(count)]
            end_call = max(max(arrivals), end_call) + transfer_ms / buckets
            for r in range(count):
                shift = clock_ms[r]
                calls[r].append(RankCall("allreduce", _ps(arrivals[r] + shift), _ps(end_call + shift), bytes_, count))
        end = end_call + tail_ms
        for r in range(count):
            shift = clock_ms[r]
            per_rank[r].append(
                RankStep(
                    step_num=step + 1,
                    start_ps=_ps(start + shift),
                    end_ps=_ps(end + shift),
                    compute_ps=_ps(compute_ms[r] + tail_ms),
                    input_ps=_ps(input_ms[r]),
                    host_ps=0,
                    idle_ps={},
                    calls=tuple(calls[r]),
                )
            )
        start = end
    profiles = []
    for r in range(count):
        rows = work[r] if work else (WorkRow("aten::mm", steps * 10, _ps(steps * compute_ms[r])),)
        profiles.append(
            RankProfile(
                host=f"rank{r}",
                path=f"rank{r}.pt.trace.json",
                rank=r,
                world_size=world_size or count,
                backend="nccl",
                device="NVIDIA A100-SXM4-80GB" if link_gbps else "cpu",
                origin_ps=0,
                steps=tuple(per_rank[r]),
                work=rows,
                link_kind="nvlink" if link_gbps else None,
                link_gbps=link_gbps,
                link_known=bool(link_gbps),
                machine=machine(r) if machine else None,
            )
        )
    return profiles


def _ps(ms):
    return int(round(ms * MS))
