"""Every rule runs without failing on traces that lack steps, a host plane, GPU work or the current format."""

from tb_gpu_advisor.findings.verdict import BOTTLENECK_OF_CATEGORY
from tb_gpu_advisor.readers.xplane.build import build_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.readers.xplane.reader import parse_space
from tests.findings.scenarios import CUSTOM, EIGEN, SGEMM, kernels, report_of


def everything(builder, gpus=2, markers=False):
    """A bit of every kind of activity, without host step markers unless `markers`."""
    python = builder.thread("python")
    data = builder.thread("tf_data_private_threadpool/1")
    for index in range(3):
        start = 1_000 + index * 10_000
        if markers:
            python.step(index, start, 10_000)
        python.input_wait(start, 2_000)
        data.event("Iterator::Root::Map::TFRecord", start, 1_500)
        data.event("EagerPyFunc:EagerPyFunc", start, 1_000)
        python.event("save/SaveV2:SaveV2", start + 2_000, 300)
        python.event("EagerLocalExecute: MatMul", start + 2_300, 100)
        for ordinal in range(gpus):
            gpu = builder.gpu(ordinal)
            if builder.legacy:
                gpu.step_marker(index, start, 10_000)
            gpu.memcpy("h2d", start + 2_400, 100, 8_000_000, group_id=index)
            end = kernels(
                gpu,
                start + 2_500,
                3_000,
                name=EIGEN,
                count=60,
                gap_us=5.0,
                launch_thread=python,
                launch_ahead_us=20,
                grid=(4, 1, 1),
                block=(1024, 1, 1),
                registers=64,
            )
            end = kernels(gpu, end, 2_000, name=SGEMM, grid=(2, 1, 1), block=(256, 1, 1), registers=255)
            gpu.memcpy("d2h", end, 20, 4, group_id=index)
            kernels(
                gpu,
                end + 200,
                1_000,
                name="ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
                stream=30,
                grid=(2, 1, 1),
                block=(256, 1, 1),
            )
            kernels(gpu, end + 1_300, 500, name=CUSTOM, grid=(1, 1, 1), block=(32, 1, 1), registers=16)
    return builder


def no_rule_failed(report):
    failures = [note for note in report["notes"] if note.startswith("Finding rule")]
    assert not failures
    summary = report["summary"]
    named = summary["bottleneck_finding"]
    if named is not None:  # the verdict names a finding of this report, of the bottleneck's kind
        category = {f["id"]: f["category"] for f in report["findings"]}[named]
        assert BOTTLENECK_OF_CATEGORY[category] == summary["bottleneck"]
    assert (summary["bottleneck"] == "unknown") == (summary["bottleneck_reason"] is not None)
    return report


def test_current_format_with_and_without_step_markers():
    with_steps = no_rule_failed(report_of(everything(TraceBuilder(), markers=True)))
    assert len(with_steps["findings"]) >= 5
    no_rule_failed(report_of(everything(TraceBuilder())))


def test_legacy_pre_grouped_format():
    no_rule_failed(report_of(everything(TraceBuilder(legacy=True))))


def test_without_a_host_plane():
    space = everything(TraceBuilder()).xspace()
    del space.planes[0]
    no_rule_failed(host_report(build_model(parse_space(space.SerializeToString(), "gpu_only.xplane.pb"))))


def test_gpu_planes_without_work_and_host_only():
    builder = TraceBuilder()
    builder.gpu(0)
    python = builder.thread("python")
    python.step(0, 0, 1_000)
    python.input_wait(0, 500)
    report = no_rule_failed(report_of(builder))
    assert report["summary"]["bottleneck"] == "input"
