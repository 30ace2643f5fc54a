"""ROCm copies: any event with `memcpy_details` is a copy (XProf's rule), whatever its name and line."""

from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection
from tb_gpu_advisor.testing.rocm import rocm_builder, rocm_gemm_trace
from tests.conftest import model_of, report_of
from tests.readers.xplane.equivalence import compare_paths


def test_memcpy_details_make_a_copy_whatever_the_name():
    (gpu,) = model_of(rocm_gemm_trace()).gpus
    activity = gpu.activity
    named = {
        activity.names[n]: (ActivityKind(k), CopyDirection(d))
        for n, k, d in zip(activity.name_id, activity.kind, activity.copy_direction)
    }
    assert named["CopyDeviceToDevice"] == (ActivityKind.MEMCPY, CopyDirection.D2D)
    assert named["CopyHostToDevice"] == (ActivityKind.MEMCPY, CopyDirection.H2D)
    assert named["__amd_rocclr_copyBuffer.kd"] == (ActivityKind.KERNEL, CopyDirection.NONE)


def test_rocm_copies_counted_with_bytes_and_bandwidth():
    report = report_of(rocm_gemm_trace())
    (device,) = report["devices"]
    assert (device["kernel_count"], device["memcpy_count"], device["memcpy_time_us"]) == (4, 3, 32.0)
    d2d, h2d = report["transfers"]["d2d"], report["transfers"]["h2d"]
    assert (d2d["count"], d2d["bytes"], d2d["time_us"], d2d["gbps"]) == (2, 3 << 19, 12.0, 131.072)
    assert (h2d["count"], h2d["bytes"], h2d["time_us"], h2d["gbps"]) == (1, 1 << 22, 20.0, 209.715)
    assert sum(k["occurrences"] for k in report["kernels"]) == 4
    assert report["launch"]["kernel_count"] == 4


def test_a_copy_named_like_a_kernel_with_memcpy_details_is_a_copy():
    builder = rocm_builder()
    builder.gpu(0).rocm_copy(0, 5, 4096, name="SomeRuntimeCopy")
    (gpu,) = model_of(builder).gpus
    assert list(gpu.activity.kind) == [ActivityKind.MEMCPY]
    assert gpu.activity.copies[gpu.activity.copy_id[0]].size_bytes == 4096
    assert list(gpu.activity.copy_direction) == [CopyDirection.OTHER]


def test_fast_and_reference_paths_agree_on_rocm_copies(tmp_path, caplog):
    kind, _, model = compare_paths(rocm_gemm_trace().to_bytes(), tmp_path, caplog)
    assert kind == "ok" and len(model.gpus[0].activity) == 7


def test_memset_details_make_a_memset_whatever_the_name(tmp_path, caplog):
    builder = rocm_builder()
    gpu = builder.gpu(0)
    gpu.rocm_copy(0, 5, 4096)
    gpu.rocm_fill(10, 3, 256)
    kind, _, model = compare_paths(builder.to_bytes(), tmp_path, caplog)
    assert kind == "ok"
    assert [ActivityKind(k) for k in model.gpus[0].activity.kind] == [ActivityKind.MEMCPY, ActivityKind.MEMSET]
