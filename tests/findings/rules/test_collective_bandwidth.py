"""communication.collective_below_link on small written Kineto traces with sized NCCL calls, and the real ones."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event

SXM = [
    {
        "id": 0,
        "name": "NVIDIA A100-SXM4-80GB",
        "totalGlobalMem": 85_899_345_920,
        "computeMajor": 8,
        "computeMinor": 0,
        "numSms": 108,
    }
]
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def _report(tmp_path, props, allreduce_us):
    """4 steps: 5 ms of compute, then a 64 MiB all-reduce over 8 ranks taking `allreduce_us`, then 100 us."""
    events = []
    step_us = 5_120 + allreduce_us
    for n in range(4):
        base = n * step_us
        events += [
            x_event("user_annotation", f"ProfilerStep#{n}", base, step_us),
            launch(base + 1, 4, 10 * n),
            kernel("ampere_sgemm_128x64_tn", base + 10, 5_000, 10 * n),
            launch(base + 5_011, 4, 10 * n + 1),
            kernel(
                ALLREDUCE,
                base + 5_020,
                allreduce_us,
                10 * n + 1,
                stream=20,
                **{
                    "Collective name": "allreduce",
                    "In msg nelems": 16 * 2**20,
                    "Out msg nelems": 16 * 2**20,
                    "dtype": "Float",
                    "Group size": 8,
                },
            ),
        ]
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, deviceProperties=props))
    return host_report(load_model(path))


def _finding(report):
    return next((f for f in report["findings"] if f["id"] == "communication.collective_below_link"), None)


def test_allreduce_far_below_nvlink(tmp_path):
    report = _report(tmp_path, SXM, 4_000)
    finding = _finding(report)
    metrics = finding["evidence"]["metrics"]
    # 64 MiB in 4 ms: algbw 16.78 GB/s, busbw x 2*7/8 = 29.36 GB/s; A100 SXM4 NVLink: 240 GB/s
    assert (metrics["algbw_gbps"], metrics["busbw_gbps"], metrics["link_gbps"]) == (16.777, 29.36, 240.0)
    assert metrics["best_busbw_link_ratio"] == 0.122 and metrics["link"] == "nvlink" and metrics["link_known"]
    assert finding["severity"] == "medium"
    assert "NCCL_ALGO" in finding["fix"] and "bucket_cap_mb" in finding["fix"]
    row = report["collective_bandwidth"]["collectives"][0]
    assert (row["collective"], row["group_size"], row["large_calls"], row["median_bytes"]) == (
        "allreduce",
        8,
        4,
        64 * 2**20,
    )


def test_allreduce_near_the_link_is_quiet(tmp_path):
    # 64 MiB in 400 us: busbw 293.6 GB/s... above the practical NVLink figure: no claim
    assert _finding(_report(tmp_path, SXM, 400)) is None


def test_unknown_link_is_judged_against_pcie_and_stays_low(tmp_path):
    props = [{**SXM[0], "name": "NVIDIA A100 80GB"}]
    report = _report(tmp_path, props, 12_000)  # busbw 9.79 GB/s: 41% of PCIe gen4's 24 GB/s, quiet
    assert _finding(report) is None and report["collective_bandwidth"]["link"]["known"] is False
    finding = _finding(_report(tmp_path, props, 40_000))  # busbw 2.94 GB/s: 12% of PCIe gen4
    assert finding["severity"] == "low" and "judged against PCIe" in finding["fix"]


def test_quiet_on_the_real_nccl_traces(kineto_models):
    for name, model in kineto_models.items():
        report = host_report(model)
        assert _finding(report) is None, name
    rows = host_report(kineto_models["a100_2rank_nccl"])["collective_bandwidth"]["collectives"]
    allreduce = next(row for row in rows if row["collective"] == "allreduce")
    # 15 sized all-reduces over 2 ranks, 12 of >= 8 MiB: median 10.0 GB/s, best 13.0 GB/s = 54% of PCIe gen4
    assert (allreduce["large_calls"], allreduce["busbw_gbps"], allreduce["best_busbw_gbps"]) == (12, 10.042, 12.994)


def test_an_nvlink_board_of_a_multi_rank_job_is_judged_against_pcie_and_named():
    """A100-PG509-200 is the A100 SXM4 board (NVLink); a file of one of 2 ranks does not say whether the ranks
    share a host, so the bus bandwidth is judged against PCIe/network and the text says both."""
    from types import SimpleNamespace
    from tb_gpu_advisor.analysis.collective_bandwidth import link_of

    board = SimpleNamespace(compute_capability=(8, 0), model_name="NVIDIA A100-PG509-200")
    assert (link_of(board).kind, link_of(board).gbps, link_of(board).known) == ("nvlink", 240.0, True)
    link = link_of(board, world_size=2)
    assert (link.kind, link.gbps, link.known) == ("pcie", 24.0, False)
    assert link.basis == (
        "NVIDIA A100-PG509-200: an NVLink (SXM) board, NVLink 240 GB/s if the 2 ranks share one "
        "host; their placement is unknown, so judged against PCIe/network, as when the ranks may "
        "be on different hosts"
    )


def test_the_text_report_shows_bus_bandwidth_and_the_link(kineto_models):
    """a100_2rank_nccl: busbw and the link were only in the json; the Collectives section now says them."""
    from tb_gpu_advisor.report.sections import host_sections

    report = host_report(kineto_models["a100_2rank_nccl"])
    section = next(s for s in host_sections(report) if s.title == "Collectives")
    assert section.lines[0] == (
        "allreduce: 12 calls of 8 MiB or more: algbw 10.0 GB/s, busbw 10.0 GB/s (median; "
        "best 13.0 GB/s, 54.1% of the link)."
    )
    assert section.lines[1].startswith("Link: 24 GB/s PCIe per GPU (NVIDIA A100-PG509-200: an NVLink (SXM) board")
    # one rank's NCCL kernel time includes spinning for its peer: the figures are floors (review ranks L6)
    assert section.lines[2].startswith("These bandwidths are lower bounds: one rank's call time includes waiting")
    assert section.lines[3] == "broadcast: no bandwidth (no call of 8 MiB or more)."  # says why, not nothing


def test_a_kind_without_bus_bandwidth_says_why():
    """The reasons the text report and the tab give, from the report's rows (vocabulary.collective_bandwidth_gap)."""
    from tb_gpu_advisor.vocabulary import COLLECTIVE_BANDWIDTH_GAPS, collective_bandwidth_gap

    measured = {"busbw_gbps": 10.0, "sized_calls": 4, "large_calls": 4, "group_size": 2}
    assert collective_bandwidth_gap(measured) is None
    unsized = {"busbw_gbps": None, "sized_calls": 0, "large_calls": 0, "group_size": None}
    assert COLLECTIVE_BANDWIDTH_GAPS[collective_bandwidth_gap(unsized)] == "sizes not in the trace"
    small = {**unsized, "sized_calls": 6, "group_size": 2}
    assert collective_bandwidth_gap(small) == "no_large_calls"
    ungrouped = {**unsized, "sized_calls": 6, "large_calls": 6, "algbw_gbps": 9.0}  # tf_op sizes: no group size
    assert collective_bandwidth_gap(ungrouped) == "no_group"
    assert collective_bandwidth_gap(ungrouped, [2, 4]) == "mixed_groups"
    assert collective_bandwidth_gap({**ungrouped, "group_size": 2}) == "no_bus_factor"


def test_the_text_report_says_why_an_unsized_collective_has_no_bandwidth(tmp_path):
    """NCCL kernels without sizes (a trace before PyTorch 2.1, or XPlane kernels with no HLO): the text says so."""
    from tb_gpu_advisor.report.sections import host_sections

    report = _report(tmp_path, SXM, 2_000)
    for row in report["collective_bandwidth"]["collectives"]:
        row.update(sized_calls=0, large_calls=0, algbw_gbps=None, busbw_gbps=None, best_busbw_gbps=None)
    section = next(s for s in host_sections(report) if s.title == "Collectives")
    assert section.lines == ("allreduce: no bandwidth (sizes not in the trace).",)
