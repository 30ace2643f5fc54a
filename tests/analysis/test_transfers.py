from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of


def test_bytes_bandwidth_pageable_and_sync_per_direction():
    builder = TraceBuilder()
    gpu = builder.gpu(0)
    gpu.memcpy("h2d", 0, 100, 1_000_000, src="pageable", dst="device", is_async=False)
    gpu.memcpy("h2d", 200, 100, 3_000_000, src="pinned", dst="device", is_async=True)
    gpu.memcpy("d2h", 400, 50, 500_000, src="device", dst="pageable", is_async=False)
    gpu.memcpy("d2d", 500, 10, 4096, src="device", dst="device", is_async=True)
    transfers = report_of(builder)["transfers"]
    assert transfers["h2d"] == {
        "count": 2,
        "bytes": 4_000_000,
        "time_us": 200.0,
        "gbps": 20.0,
        "pageable_count": 1,
        "sync_count": 1,
        "small_count": 0,
    }
    assert transfers["d2h"] == {
        "count": 1,
        "bytes": 500_000,
        "time_us": 50.0,
        "gbps": 10.0,
        "pageable_count": 1,
        "sync_count": 1,
        "small_count": 0,
    }
    assert transfers["d2d"]["count"] == 1 and transfers["d2d"]["small_count"] == 1
    assert transfers["p2p"] == {
        "count": 0,
        "bytes": 0,
        "time_us": 0.0,
        "gbps": None,
        "pageable_count": 0,
        "sync_count": 0,
        "small_count": 0,
    }


def test_old_format_does_not_know_memory_kinds():
    builder = TraceBuilder(legacy=True)
    builder.gpu(0).memcpy("h2d", 0, 10, 112, is_async=False)
    h2d = report_of(builder)["transfers"]["h2d"]
    assert h2d["pageable_count"] is None
    assert h2d["sync_count"] == 1
    assert h2d["bytes"] == 112


def test_copies_after_pjrt_host_staging_count_as_pageable():
    """PJRT stages a NumPy buffer (`H2D Dispatch`) then copies it from its pinned bounce buffer: the first
    host-to-device copy after each staging span began counts as pageable, others keep their own memory kinds."""
    from tb_gpu_advisor.analysis.transfers import transfer_stats
    from tb_gpu_advisor.model import intervals
    from tests.conftest import model_of

    builder = TraceBuilder()
    gpu = builder.gpu(0)
    for start in (100, 150, 400, 900):
        gpu.memcpy("h2d", start, 10, 1_000_000, src="pinned", dst="device", is_async=True)
    gpu.memcpy("d2h", 120, 10, 4, src="device", dst="pinned", is_async=True)
    gpus = model_of(builder).gpus
    assert transfer_stats(gpus)["h2d"].pageable_count == 0
    # Two staging spans (ps) before the copies at 100 and 400 µs; none right before 150 or 900.
    staging = intervals.union([50_000_000, 300_000_000], [90_000_000, 350_000_000])
    stats = transfer_stats(gpus, staging)
    assert stats["h2d"].pageable_count == 2 and stats["d2h"].pageable_count == 0
