"""XProf's own converter reads every scenario as our analyzer does: kernels, counts, times, steps.

XProf writes a cache file next to the trace it converts, so each trace is converted from a copy placed at
`<tmp logdir>/plugins/profile/<run>/<host>.xplane.pb`. Where XProf differs, the test asserts the documented
difference (docs/scenarios.md, "Fidelity").
"""

import json
import os
import shutil
from collections import Counter

import pytest

os.environ.setdefault("GLOG_minloglevel", "2")  # XProf's C++ logging: warnings and errors only
from xprof.convert import raw_to_tool_data  # noqa: E402

from tb_gpu_advisor.scenarios import SCENARIOS  # noqa: E402

XPROF_DROPS_FIRST_AND_LAST_ABOVE = 5  # step_events_to_steps_db.cc: kDropIncomplteteStepThreshold
XLA_OP_NAME = "XlaModule"  # XProf's op name for XLA kernels when it has no HLO proto to resolve `hlo_op`


@pytest.fixture(scope="module")
def xprof(built, tmp_path_factory):
    """`xprof(name, tool)` -> XProf's JSON for the scenario's trace."""
    cache = {}

    def get(name, tool):
        if (name, tool) not in cache:
            source = built(name).path
            copy = tmp_path_factory.mktemp("xprof") / "plugins" / "profile" / name / os.path.basename(source)
            copy.parent.mkdir(parents=True)
            shutil.copyfile(source, copy)
            data, _ = raw_to_tool_data.xspace_to_tool_data([str(copy)], tool, {"use_saved_result": False})
            cache[(name, tool)] = json.loads(data)
        return cache[(name, tool)]

    return get


def _xprof_kernel_rows(table):
    ids = [column["id"] for column in table["cols"]]
    return [dict(zip(ids, [cell["v"] for cell in row["c"]])) for row in table["rows"]]


def _dims(values):
    return ",".join(str(v) for v in values)


def _launch_key(name, registers, shared, block, grid):
    return (name, int(registers), int(shared), block, grid)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_xprof_reads_the_same_kernels(name, built, xprof):
    ours = built(name).report["kernels"]
    theirs = _xprof_kernel_rows(xprof(name, "kernel_stats"))
    assert theirs, "XProf found no kernels"
    xla = {
        _launch_key(r["kernel_name"], r["registers_per_thread"], r["shmem_bytes"], r["block_dim"], r["grid_dim"])
        for r in theirs
        if r["op_name"] == XLA_OP_NAME
    }
    exact_ours, exact_theirs = Counter(), Counter()
    totals_ours, totals_theirs = Counter(), Counter()
    for row in ours:
        key = _launch_key(
            row["name"],
            row["registers_per_thread"],
            row["shared_memory_bytes"],
            _dims(row["block"]),
            _dims(row["grid"]),
        )
        if key in xla:
            totals_ours[key] += row["occurrences"] * 10**6 + round(row["total_us"] * 1000)
        else:
            exact_ours[
                key
                + (
                    row["op_name"],
                    row["occupancy_pct"],
                    row["uses_tensor_cores"],
                    row["tensor_core_eligible"],
                    row["occurrences"],
                    row["total_us"],
                    row["avg_us"],
                    row["min_us"],
                    row["max_us"],
                )
            ] += 1
    for row in theirs:
        key = _launch_key(
            row["kernel_name"], row["registers_per_thread"], row["shmem_bytes"], row["block_dim"], row["grid_dim"]
        )
        if key in xla:
            totals_theirs[key] += row["occurrences"] * 10**6 + round(row["total_duration_us"] * 1000)
        else:
            exact_theirs[
                key
                + (
                    row["op_name"],
                    row["occupancy_pct"],
                    row["is_kernel_using_tensor_core"],
                    row["is_op_tensor_core_eligible"],
                    row["occurrences"],
                    row["total_duration_us"],
                    row["avg_duration_us"],
                    row["min_duration_us"],
                    row["max_duration_us"],
                )
            ] += 1
    assert exact_ours == exact_theirs
    # XLA kernels: XProf names their op "XlaModule" (it cannot resolve `hlo_op` without the HLO proto) and so
    # merges the rows we keep apart per HLO instruction; occurrences and time per launch shape agree.
    assert totals_ours == totals_theirs


def _xprof_steps(report):
    table = next(t for t in report if t.get("rows") and "stepnum" in [c["id"] for c in t["cols"]])
    ids = [column["id"] for column in table["cols"]]
    return [dict(zip(ids, [cell.get("v") for cell in row["c"]])) for row in table["rows"]]


def _device_span_ms(model, step):
    """First start to last end of the GPU work that starts inside the step, over all GPUs: XProf's step time."""
    starts, ends = [], []
    for gpu in model.gpus:
        inside = (gpu.activity.start_ps >= step["start_ps"]) & (gpu.activity.start_ps < step["end_ps"])
        if inside.any():
            starts.append(int(gpu.activity.start_ps[inside].min()))
            ends.append(int(gpu.activity.end_ps[inside].max()))
    return (max(ends) - min(starts)) / 1e9


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_xprof_finds_the_same_steps_and_device_time(name, built, xprof):
    scenario = built(name)
    ours = scenario.report["steps"]
    theirs = _xprof_steps(xprof(name, "input_pipeline_analyzer"))
    if len(ours) > XPROF_DROPS_FIRST_AND_LAST_ABOVE:
        ours = ours[1:-1]
    assert len(theirs) == len(ours)
    markers = scenario.model.host_step_markers
    for our_step, their_step in zip(ours, theirs):
        marker = next(m for m in markers if m.name == our_step["name"])
        window = {"start_ps": marker.start_ps, "end_ps": marker.end_ps}
        # XProf's GPU step is the span of the step's device work; ours is the host step marker around it.
        assert their_step["stepTimeMs"] == pytest.approx(_device_span_ms(scenario.model, window), abs=1e-9)
        assert their_step["stepTimeMs"] <= our_step["time_ms"]
        device = our_step["breakdown_ms"]
        # XProf counts CUPTI's MemcpyH2D/D2H as compute (its prefixes are MemcpyHToD/DToH).
        assert their_step["deviceComputeTimeMs"] == pytest.approx(
            device["compute_16bit"]
            + device["compute_32bit"]
            + device["compute_unknown"]
            + device["h2d"]
            + device["d2h"]
            + device["d2d"],
            abs=1e-9,
        )
        assert their_step["deviceCollectivesTimeMs"] == pytest.approx(device["collectives"], abs=1e-9)
        # With a GPU plane present XProf ignores host events: no input, launch or host time, whatever we see.
        assert their_step["infeedTimeMs"] == their_step["kernelLaunchTimeMs"] == 0.0
        assert their_step["hostComputeTimeMs"] == 0.0


def test_xprof_does_not_see_the_input_wait_we_report(built, xprof):
    report = xprof("input_bound", "input_pipeline_analyzer")
    conclusion = next(t["p"]["input_conclusion"] for t in report if "input_conclusion" in t.get("p", {}))
    assert conclusion.startswith("Your program is NOT input-bound because only 0.0% of the total step time")
    assert built("input_bound").report["summary"]["input_wait_pct"] == 71.28


def test_xprof_counts_bfloat16_kernels_as_32_bit(built, xprof):
    overview = xprof("healthy", "overview_page")
    properties = next(t["p"] for t in overview if "device_compute_16bit_percent" in t.get("p", {}))
    # XProf looks for "half" or "fp16" in kernel names; Hopper's bf16 GEMMs and flash attention say "bf16".
    assert properties["device_compute_16bit_percent"] == "0.0%"
    assert built("healthy").report["summary"]["breakdown_pct"]["compute_16bit"] == 82.88
