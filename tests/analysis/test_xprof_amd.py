"""XProf's converter beside ours on ROCm traces: the real MI300X trace and a generated one with ROCm copies.

XProf writes a cache next to the trace it converts, so each trace is converted from a copy in a temporary
`plugins/profile/<run>/` folder.
"""

import json
import os
import shutil
from collections import Counter

os.environ.setdefault("GLOG_minloglevel", "2")  # XProf's C++ logging: warnings and errors only
from xprof.convert import raw_to_tool_data  # noqa: E402

from tb_gpu_advisor.pipeline import analyze_host_file  # noqa: E402
from tb_gpu_advisor.testing.rocm import rocm_gemm_trace  # noqa: E402
from tests.data import real_trace  # noqa: E402


def _xprof_kernels(source, tmp_path):
    copy = tmp_path / "plugins" / "profile" / "run" / "host.xplane.pb"
    copy.parent.mkdir(parents=True)
    shutil.copyfile(source, copy)
    data, _ = raw_to_tool_data.xspace_to_tool_data([str(copy)], "kernel_stats", {"use_saved_result": False})
    table = json.loads(data)
    ids = [column["id"] for column in table["cols"]]
    return [dict(zip(ids, [cell["v"] for cell in row["c"]])) for row in table["rows"]]


def _by_launch(rows, name, grid, block, occurrences, total, tensor_cores):
    """{(name, grid, block): (occurrences, total ns, uses tensor cores)} summed over op names."""
    found = Counter()
    flags = {}
    for row in rows:
        key = (
            row[name],
            row[grid] if isinstance(row[grid], str) else ",".join(map(str, row[grid])),
            row[block] if isinstance(row[block], str) else ",".join(map(str, row[block])),
        )
        found[key] += int(row[occurrences]) * 10**9 + round(row[total] * 1000)
        flags[key] = bool(row[tensor_cores])
    return found, flags


def _compare(ours, theirs):
    ours_totals, ours_flags = _by_launch(ours, "name", "grid", "block", "occurrences", "total_us", "uses_tensor_cores")
    their_totals, their_flags = _by_launch(
        theirs,
        "kernel_name",
        "grid_dim",
        "block_dim",
        "occurrences",
        "total_duration_us",
        "is_kernel_using_tensor_core",
    )
    assert ours_totals == their_totals
    assert ours_flags == their_flags


def test_real_mi300x_kernels_match_xprof(tmp_path):
    source = real_trace("amd_mi300x_jax08_gemm.xplane.pb")
    report = analyze_host_file(str(source))
    ours, theirs = report["kernels"], _xprof_kernels(source, tmp_path)
    assert (sum(r["occurrences"] for r in ours), round(sum(r["total_us"] for r in ours), 3)) == (54, 3475.484)
    assert (sum(r["occurrences"] for r in theirs), round(sum(r["total_duration_us"] for r in theirs), 3)) == (
        54,
        3475.484,
    )
    _compare(ours, theirs)
    # Op names differ on purpose: XProf shows JAX's framework op name (`jit(dot)/dot_general`), we show the HLO
    # instruction (`dot.1`), the key the roofline joins kernels to their HLO by. Rows: XProf's HLO lookup gives
    # `copy.1` no op name, so it merges the runtime copy kernels of copy.1 with the unlabelled ones.
    assert (len(ours), len(theirs)) == (13, 12)
    device = report["devices"][0]
    assert (device["vendor"], device["arch"], device["compute_capability"]) == ("AMD", "gfx942", None)
    assert (device["kernel_count"], device["memcpy_count"]) == (54, 0)
    assert report["launch"]["kernel_count"] == 54


def test_generated_rocm_copies_are_not_kernels_for_xprof_either(tmp_path):
    path = rocm_gemm_trace().write(str(tmp_path / "rocm.xplane.pb"))
    report = analyze_host_file(path)
    theirs = _xprof_kernels(path, tmp_path)
    _compare(report["kernels"], theirs)
    assert sum(int(r["occurrences"]) for r in theirs) == report["devices"][0]["kernel_count"] == 4
    assert report["devices"][0]["memcpy_count"] == 3


def test_xprof_passes_the_impossible_register_count_through_we_refuse_it(tmp_path):
    path = rocm_gemm_trace(impossible_registers=True).write(str(tmp_path / "rocm.xplane.pb"))
    theirs = _xprof_kernels(path, tmp_path)
    assert next(r for r in theirs if r["kernel_name"] == "wrapped_broadcast.kd")["registers_per_thread"] == 2191500840
    report = analyze_host_file(path)
    assert next(r for r in report["kernels"] if r["name"] == "wrapped_broadcast.kd")["registers_per_thread"] is None
