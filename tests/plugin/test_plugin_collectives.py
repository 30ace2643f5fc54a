"""The collectives card in a real TensorBoard and Debian's chromium: the straggler demo's unsized all-reduce, the
real 2-rank A100 NCCL trace's sized calls and bus bandwidth, the link from a communication finding, none without
collectives."""

import shutil

import pytest

from tb_gpu_advisor.demo import write_demo_logdir
from tests.readers.kineto.real import real_kineto
from tests.plugin.tb_process import TensorBoardProcess, tensorboard_command
from tests.plugin.test_plugin_browser import Tab, browser  # noqa: F401 (fixture)

STRAGGLER = "multi_gpu_straggler/2026_01_15_09_20_00"
HEALTHY = "healthy/2026_01_15_09_16_00"


@pytest.fixture(scope="module")
def collectives_board(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("collectives_logdir")
    write_demo_logdir(str(logdir), names=["healthy", "multi_gpu_straggler"])
    ddp = logdir / "ddp"
    ddp.mkdir()
    shutil.copy(real_kineto("a100_2rank_nccl"), ddp / "rank0.1716398122000.pt.trace.json.gz")
    with TensorBoardProcess(tensorboard_command(str(logdir))) as process:
        yield process


def _rows(tab, selector):
    return tab.frame.eval_on_selector_all(
        f"{selector} tbody tr", "rs => rs.map(r => Array.from(r.cells, c => c.textContent.replaceAll('\\u00a0', ' ')))"
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_straggler_demo_shows_its_all_reduce_and_what_the_trace_lacks(
    browser,  # noqa: F811
    collectives_board,  # noqa: F811
    theme,
):
    tab = Tab(browser, collectives_board.url, color_scheme=theme)
    try:
        assert tab.show(STRAGGLER) == "ready"
        headers = tab.frame.eval_on_selector_all(
            "[data-testid=collectives] thead th", "ts => ts.map(t => t.textContent)"
        )
        assert headers == [
            "Recorded on",
            "Collective",
            "Calls",
            "Per step",
            "Time",
            "Bytes in",
            "Dtype",
            "Group",
            "Sizes from",
            "Issued by",
        ]
        # 12 calls over 4 GPUs and 3 steps: 1 per step and GPU, named by TensorFlow's op
        assert _rows(tab, "[data-testid=collectives]") == [
            ["kernel", "allreduce", "12", "1", "766.9 ms", "not in the trace", "f32"]
            + ["not in the trace"] * 2
            + ["CollectiveReduceV2"]  # f32 from the kernel name, as the all-reduce finding says (issue 31 K4)
        ]
        assert _rows(tab, "[data-testid=collective-bandwidth]") == [["allreduce", "0", "sizes not in the trace"]]
        assert tab.frame.query_selector("[data-testid=collective-link]") is None  # nothing measured against it
        # the communication finding points at the table, and the link scrolls to it
        link = tab.frame.wait_for_selector(
            "details[data-finding-id='communication.allreduce_exposed'] [data-testid=collectives-link]",
            state="attached",
        )
        tab.frame.eval_on_selector(
            "details[data-finding-id='communication.allreduce_exposed']", "d => { d.open = true; }"
        )
        link.click()
        tab.frame.wait_for_function(
            "() => { const r = document.getElementById('collectives').getBoundingClientRect(); "
            "return r.top >= -1 && r.top < window.innerHeight / 2; }"
        )
        tab.screenshot(f"collectives_straggler_{theme}")
        muted = tab.frame.eval_on_selector("[data-testid=collectives] td.muted", "c => getComputedStyle(c).color")
        plain = tab.frame.eval_on_selector("[data-testid=collectives] td.num", "c => getComputedStyle(c).color")
        assert muted != plain  # "not in the trace" reads quieter than the numbers, in either theme
        assert tab.errors == [] and tab.failed == []
    finally:
        tab.close()


def test_a_real_nccl_trace_shows_sizes_and_bus_bandwidth_and_sorts(browser, collectives_board):  # noqa: F811
    tab = Tab(browser, collectives_board.url)
    try:
        assert tab.show("ddp", "rank0") == "ready"
        rows = _rows(tab, "[data-testid=collectives]")
        assert rows[0] == [
            "host",
            "allreduce",
            "15",
            "5",
            "2.83 ms",
            "292.5 MiB",
            "Float",
            "2",
            "profiler args",
            "record_param_comms",
        ]
        assert [
            "kernel",
            "allreduce",
            "15",
            "5",
            "46.8 ms",
            "292.5 MiB",
            "Float",
            "2",
            "profiler args",
            "nccl:all_reduce",
        ] in rows
        assert len(rows) == 5
        bandwidth = _rows(tab, "[data-testid=collective-bandwidth]")
        assert bandwidth == [
            ["allreduce", "12", "10 GB/s", "10 GB/s", "13 GB/s", "54.1%"],
            ["broadcast", "0", "no call of 8 MiB or more"],
        ]
        assert tab.text("[data-testid=collective-link]").startswith("Link: 24 GB/s PCIe per GPU (NVIDIA A100-PG509-200")
        tab.frame.click("[data-testid=collectives] button.sort[data-sort='4']")  # Time, most first
        times = [row[4] for row in _rows(tab, "[data-testid=collectives]")]
        assert times[0] == "46.8 ms" and times[-1] == "0.114 ms", times  # one unit in the column
        tab.frame.click("[data-testid=collectives] button.sort[data-sort='4']")
        assert _rows(tab, "[data-testid=collectives]")[0][4] == "0.114 ms"
        assert tab.frame.get_attribute("[data-testid=collectives] th[aria-sort=ascending] button", "data-sort") == "4"
        tab.screenshot("collectives_a100_2rank")
        assert tab.errors == [] and tab.failed == []
    finally:
        tab.close()


def test_no_card_without_collectives(browser, collectives_board):  # noqa: F811
    tab = Tab(browser, collectives_board.url)
    try:
        assert tab.show(HEALTHY) == "ready"
        tab.frame.wait_for_selector("#transfers")
        assert tab.frame.query_selector("#collectives") is None
        assert tab.frame.query_selector("[data-testid=collectives-link]") is None
    finally:
        tab.close()
