"""Launch calls blocked on a full launch queue (analysis.launch_queue): written Kineto traces with exact numbers,
and the committed real ranks, where no call is one."""

import gzip
import json

import numpy as np
import pytest

from tb_gpu_advisor.analysis.breakdown import breakdown
from tb_gpu_advisor.analysis.host_wait_spans import host_wait_spans
from tb_gpu_advisor.analysis.launch import launch_stats
from tb_gpu_advisor.analysis.launch_queue import queue_full_launches
from tb_gpu_advisor.analysis.steps import find_steps
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text
from tests.data import real_trace

PS_PER_US = 1_000_000


def _queued_trace(blocked_dur=200, blocked_start=300, gpu_gap=False, name="k", delay=0):
    """One-kernel launches of 5 us every 10 us from 0 queue 50 us kernels `k` back to back from 10 us (the GPU
    busy to 1010 us, or with a 100 us gap at 400 with `gpu_gap`); at `blocked_start` a launch call lasts
    `blocked_dur` and its kernel `name` runs `delay` us after the others, for 20 us."""
    events, correlation, at = [], 1, 10
    for index in range(20):
        if gpu_gap and index == 8:
            at += 100
        events += [launch(index * 10, 5, correlation), kernel("k", at, 50, correlation)]
        correlation += 1
        at += 50
    events += [launch(blocked_start, blocked_dur, correlation), kernel(name, at + delay, 20, correlation)]
    return events


def _model(tmp_path, events):
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events))
    return load_model(path)


def test_a_long_launch_while_the_gpu_works_through_its_queue_is_a_wait(tmp_path):
    model = _model(tmp_path, _queued_trace())
    found = queue_full_launches(model)
    assert (found.count, found.total_ps) == (1, 200 * PS_PER_US)
    assert (found.spans.start_ps.tolist(), found.spans.end_ps.tolist()) == (
        [model.profile_span_ps[0] + 300 * PS_PER_US],
        [model.profile_span_ps[0] + 500 * PS_PER_US],
    )
    # Launch time leaves it out: 20 calls of 5 us, not 300 us.
    stats = launch_stats(model, find_steps(model), found)
    assert (stats.launch_call_ps, stats.launch_call_count) == (100 * PS_PER_US, 20)
    assert (stats.queue_full_count, stats.queue_full_ps) == (1, 200 * PS_PER_US)
    report = host_report(model)
    assert report["launch"]["queue_full"] == {"count": 1, "time_us": 200.0}
    assert report["launch"]["launch_call_time_us"] == 100.0


def test_not_a_wait_when_short_when_the_gpu_idled_or_on_a_first_launch(tmp_path):
    # 45 us: under both 10x the 5 us median and 50 us.
    assert queue_full_launches(_model(tmp_path, _queued_trace(blocked_dur=45))).count == 0
    # The GPU idles 400-500 inside the call 300-500: busy 50%, the call held the GPU back.
    assert queue_full_launches(_model(tmp_path, _queued_trace(gpu_gap=True))).count == 0
    # The first launch of a kernel name may load its module: setup, not a full queue.
    assert queue_full_launches(_model(tmp_path, _queued_trace(name="fresh"))).count == 0


def test_a_blocked_launch_in_a_gap_is_a_host_wait_and_the_gap_its_launch(tmp_path):
    # The queue drains at 1010 while the blocked call (300-1015) returns; its kernel runs at 1020. The GPU is busy
    # 705 of the call's 715 us (99%): the call is a host wait (host_wait_spans). The breakdown follows the idle
    # attribution: the GPU waits for that kernel's call, still running when it went idle, and the latency to
    # the kernel (1010-1020: launch), as for the first call's 0-10; nothing is left untraced.
    model = _model(tmp_path, _queued_trace(blocked_dur=715, delay=10))
    assert queue_full_launches(model).count == 1
    lo, hi = model.profile_span_ps
    found = breakdown(model, [lo], [hi], waits=host_wait_spans(model, queue_full_launches(model))).category_ps
    assert {name: int(found[name][0]) // PS_PER_US for name in ("launch", "host_wait", "idle")} == {
        "launch": 20,
        "host_wait": 0,
        "idle": 0,
    }


def test_the_committed_real_ranks_blocked_calls(kineto_models):
    # v100_2rank_test: 21 DtoD cudaMemcpyAsync calls of 100-250 us whose copies ran ~57-61 ms later, the GPU busy
    # throughout (the host that far ahead). None in the other ranks: a100_8rank_control's 1.1 ms launch started
    # its kernel before it returned, with the GPU busy 32% of it; v100's twelve 1 ms CUDA-graph launches are the
    # usual cost of a graph launch (their own median); alexnet's 3 s and MI250's 6.5 ms first launches load
    # modules with the GPU idle.
    found = {name: queue_full_launches(model) for name, model in kineto_models.items()}
    assert {name: q.count for name, q in found.items()} == {
        "a100_8rank_control": 0,
        "v100_2rank_test": 21,
        "a100_2rank_nccl": 0,
        "a100_alexnet_sync": 0,
        "mi250_minitoy_train": 0,
    }
    assert round(found["v100_2rank_test"].total_ps / 1e9, 2) == 8.72


def test_every_blocked_call_on_the_h200_attention_run_is_inside_cuptis_command_buffer_full():
    # CUPTI writes "Command Buffer Full" overhead events (cat "overhead", pid -1) while the launch queue is full.
    # Without them (the reader's tag removed), the detector's 131 calls each overlap one; with them, the 35 shorter
    # calls they cover are blocked too, and the blocked time is CUPTI's (77.3 ms) within 3%.
    from dataclasses import replace

    from tb_gpu_advisor.model.host import QUEUE_FULL_TAG

    path = real_trace("h200_heldout/torch/attention_unfused/h200.1796408927449472748.pt.trace.json.gz")
    model = load_model(path)
    tagged = {tag: spans for tag, spans in model.host_activity.tagged.items() if tag != QUEUE_FULL_TAG}
    untagged = replace(model, host_activity=replace(model.host_activity, tagged=tagged))
    found = queue_full_launches(untagged)
    assert (found.count, round(found.total_ps / 1e9, 1)) == (131, 77.5)
    recorded = queue_full_launches(model)
    assert recorded.count == 166 and (recorded.blocked | ~found.blocked).all()
    with gzip.open(path, "rt") as handle:
        events = json.load(handle)["traceEvents"]
    full = [e for e in events if e.get("cat") == "overhead" and e.get("name") == "Command Buffer Full"]
    assert round(sum(e["dur"] for e in full) / 1e3, 1) == 77.3
    assert recorded.total_ps / 1e9 == pytest.approx(77.3, rel=0.03)
    first_kernel_us = min(e["ts"] for e in events if e.get("cat") == "kernel")
    shift = first_kernel_us * PS_PER_US - int(model.gpus[0].activity.start_ps.min())
    full_start = np.array([e["ts"] * PS_PER_US - shift for e in full])
    full_end = full_start + np.array([e["dur"] * PS_PER_US for e in full])
    starts = model.host_activity.launch_start_ps[found.blocked]
    ends = starts + model.host_activity.launch_duration_ps[found.blocked]
    assert all(((full_start < end) & (full_end > start)).any() for start, end in zip(starts, ends))
    # The records are the profiler's, not host work: no host op named after them.
    assert "Command Buffer Full" not in model.host_activity.op_totals
