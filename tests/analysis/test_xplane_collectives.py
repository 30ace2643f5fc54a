"""Collective kernels of XPlane traces sized from their HLO instruction (JAX/XLA) or their TensorFlow op's shapes,
and the bandwidths and finding that follow from them."""

from tb_gpu_advisor.analysis.xplane_collectives import xplane_collectives
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, replica_groups, shape, tuple_shape
from tests.data import real_trace

ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
ALLGATHER = "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
ELEMENTS = 16 * 2**20  # f32: 64 MiB
PROGRAM = 7


def _module():
    """An async all-reduce of 64 MiB over 4 devices and an all-gather (wrapped in async-start) of 2 MiB of
    bf16 per device into 8 MiB."""
    module = HloModuleBuilder("jit_train_step", PROGRAM)
    grads = module.entry.parameter("grads", shape("f32", ELEMENTS))
    start = module.entry.add(
        "all-reduce-start.1",
        "all-reduce-start",
        shape("f32", ELEMENTS),
        (grads,),
        replica_groups=replica_groups((0, 1, 2, 3)),
    )
    module.entry.add("all-reduce-done.1", "all-reduce-done", shape("f32", ELEMENTS), (start,))
    wrapped = module.computation("async_computation")
    part = wrapped.parameter("param_0", shape("bf16", 1024, 1024))
    wrapped.add(
        "all-gather.2",
        "all-gather",
        shape("bf16", 4096, 1024),
        (part,),
        dimensions=[0],
        replica_groups=replica_groups((0, 1, 2, 3)),
    )
    params = module.entry.parameter("params", shape("bf16", 1024, 1024))
    gather = module.entry.add(
        "all-gather-start.2",
        "async-start",
        tuple_shape(tuple_shape(shape("bf16", 1024, 1024)), shape("bf16", 4096, 1024), shape("s32")),
        (params,),
        called=[wrapped],
    )
    module.entry.add("all-gather-done.2", "async-done", shape("bf16", 4096, 1024), (gather,))
    return module


def _jax_trace(path, allreduce_us, gpus=4, steps=4, model="NVIDIA A100-SXM4-80GB"):
    """`steps` JAX steps on `gpus` GPUs: 5 ms of compute, the 64 MiB all-reduce taking `allreduce_us`, then the
    8 MiB all-gather in 50 us; written to `path`."""
    builder = TraceBuilder()
    builder.metadata(jax_version="0.4.35", jaxlib_version="0.4.35")
    builder.hlo_module(PROGRAM, "jit_train_step", _module().to_bytes())
    thread = builder.thread("python")
    step_us = 5_000 + allreduce_us + 300
    for n in range(steps):
        base = 100 + n * step_us
        thread.step(n, base, step_us)
        for ordinal in range(gpus):
            gpu = builder.gpu(ordinal, model=model)
            gpu.kernel("loop_multiply_fusion", base + 10, 4_980, hlo_op="multiply_fusion", program_id=PROGRAM)
            gpu.kernel(
                ALLREDUCE, base + 5_000, allreduce_us, stream=20, hlo_op="all-reduce-start.1", program_id=PROGRAM
            )
            gpu.kernel(
                ALLGATHER,
                base + 5_000 + allreduce_us + 50,
                50,
                stream=20,
                hlo_op="all-gather-start.2",
                program_id=PROGRAM,
            )
    builder.write(path)
    return load_model(str(path))


def _finding(report):
    return next((f for f in report["findings"] if f["id"] == "communication.collective_below_link"), None)


def test_hlo_sizes_each_collective_kernel(tmp_path):
    calls = xplane_collectives(_jax_trace(tmp_path / "a.xplane.pb", 4_000))
    assert len(calls) == 4 * 4 * 2
    allreduce = [call for call in calls if call.collective == "allreduce"]
    gather = [call for call in calls if call.collective == "allgather"]
    assert {(c.in_bytes, c.out_bytes, c.dtype, c.group_size, c.size_source) for c in allreduce} == {
        (64 * 2**20, 64 * 2**20, "f32", 4, "hlo")
    }
    assert {(c.in_bytes, c.out_bytes, c.dtype, c.group_size, c.size_source) for c in gather} == {
        (2 * 2**20, 8 * 2**20, "bf16", 4, "hlo")
    }
    assert sorted({call.device for call in calls}) == [0, 1, 2, 3]


def test_slow_allreduce_on_xplane_fires_with_exact_bandwidths(tmp_path):
    report = host_report(_jax_trace(tmp_path / "a.xplane.pb", 4_000))
    rows = {row["collective"]: row for row in report["collective_bandwidth"]["collectives"]}
    allreduce, gather = rows["allreduce"], rows["allgather"]
    # 64 MiB in 4 ms: algbw 16.777 GB/s; bus bandwidth x 2*3/4 = 25.166 GB/s; NVLink (A100 SXM4) 240 GB/s
    assert (allreduce["algbw_gbps"], allreduce["busbw_gbps"], allreduce["best_busbw_link_ratio"]) == (
        16.777,
        25.166,
        0.105,
    )
    assert (allreduce["group_size"], allreduce["median_bytes"], allreduce["size_source"]) == (4, 64 * 2**20, "hlo")
    # all-gather: NCCL-tests' size is the whole 8 MiB output; 8 MiB in 50 us = 167.772 GB/s, x 3/4 = 125.829
    assert (gather["median_bytes"], gather["algbw_gbps"], gather["busbw_gbps"]) == (8 * 2**20, 167.772, 125.829)
    listed = {row["collective"]: row for row in report["collectives"]}
    assert listed["allreduce"]["size_source"] == "hlo" and listed["allreduce"]["in_bytes"] == 16 * 64 * 2**20
    # time on one GPU, not the sum over the four: 4 steps x 4 ms of 4 steps x 9.3 ms
    assert allreduce["time_ms"] == 16.0 and allreduce["calls"] == 16
    finding = _finding(report)
    assert finding is not None and finding["severity"] == "medium"
    assert finding["evidence"]["metrics"]["busbw_gbps"] == 25.166
    assert finding["evidence"]["metrics"]["collective_pct"] == 43.01
    assert "xla_gpu_all_reduce_combine_threshold_bytes" in finding["fix"]


def test_fast_allreduce_on_xplane_is_quiet(tmp_path):
    # 64 MiB in 400 us: bus bandwidth 251.7 GB/s, above the practical NVLink figure
    assert _finding(host_report(_jax_trace(tmp_path / "a.xplane.pb", 400))) is None


def test_collective_without_its_module_is_listed_unsized(tmp_path):
    builder = TraceBuilder()
    thread = builder.thread("python")
    for n in range(3):
        thread.step(n, 100 + n * 10_000, 10_000)
        for ordinal in range(2):
            builder.gpu(ordinal).kernel(
                ALLREDUCE, 100 + n * 10_000 + 5_000, 4_000, hlo_op="all-reduce.9", program_id=99
            )
    builder.write(tmp_path / "b.xplane.pb")
    report = host_report(load_model(str(tmp_path / "b.xplane.pb")))
    row = report["collective_bandwidth"]["collectives"][0]
    assert (row["calls"], row["sized_calls"], row["median_bytes"], row["size_source"]) == (6, 0, None, None)
    assert report["collectives"][0]["in_bytes"] is None and _finding(report) is None


def test_tensorflow_nccl_allreduce_sized_from_its_op_shape(tmp_path):
    builder = TraceBuilder()
    thread = builder.thread("python")
    for n in range(3):
        thread.step(n, 100 + n * 10_000, 10_000)
        for ordinal in range(2):
            builder.gpu(ordinal).kernel(
                ALLREDUCE,
                100 + n * 10_000 + 5_000,
                1_000,
                tf_op="NcclAllReduce_1:NcclAllReduce",
                shape="(half[4194304])",
            )
    builder.write(tmp_path / "c.xplane.pb")
    calls = xplane_collectives(load_model(str(tmp_path / "c.xplane.pb")))
    assert {(c.collective, c.in_bytes, c.out_bytes, c.dtype, c.group_size, c.size_source) for c in calls} == {
        ("allreduce", 8 * 2**20, 8 * 2**20, "f16", None, "tf_op")
    }


def test_real_traces_have_no_collective_kernels():
    """The committed real XPlane traces: the V100 job's capture holds no NCCL kernel, the MI300X one no RCCL."""
    for name in ("gpu_multi_worker_v100x8.xplane.pb", "amd_mi300x_jax08_gemm.xplane.pb"):
        assert xplane_collectives(load_model(str(real_trace(name)))) == ()
