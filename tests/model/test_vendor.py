from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.model.vendor import AMD, NVIDIA, amd_arch, infer_vendor, normalize_vendor
from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of
from tests.data import real_trace

_TENSILE = "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_ISA942_IU1_K1_WG64_4_1_WGM16.kd"


def test_vendor_spellings():
    assert [normalize_vendor(v) for v in ("Nvidia", "NVIDIA Corporation", "AMD", "amd", "", None, "Intel")] == [
        NVIDIA,
        NVIDIA,
        AMD,
        AMD,
        None,
        None,
        "Intel",
    ]


def test_vendor_inferred_when_the_trace_writes_none():
    assert infer_vendor(None, (7, 0), ["volta_sgemm_128x64_nn"]) == NVIDIA
    assert infer_vendor(None, (9, 4), ["wrapped_broadcast.kd"]) == AMD
    assert infer_vendor(None, None, ["k"]) is None


def test_gfx_name_only_when_the_trace_names_it():
    assert amd_arch(["AMD Instinct MI300X gfx942:sramecc+:xnack-"], []) == "gfx942"
    assert amd_arch([], [_TENSILE]) == "gfx942"
    assert amd_arch([], ["Cijk_..._ISA90a_..."]) == "gfx90a"
    assert amd_arch([], ["wrapped_broadcast.kd"]) is None  # never from the capability numbers


def test_amd_device_has_gfx_arch_and_no_compute_capability():
    builder = TraceBuilder()
    builder.gpu(0, vendor="AMD", model=None, compute_capability=(9, 4), sm_count=304).kernel(_TENSILE, 0, 10)
    (device,) = report_of(builder)["devices"]
    assert (device["vendor"], device["arch"], device["compute_capability"]) == ("AMD", "gfx942", None)


def test_nvidia_device_arch_from_its_compute_capability():
    builder = TraceBuilder()
    builder.gpu(0, compute_capability=(9, 0)).kernel("k", 0, 10)
    (device,) = report_of(builder)["devices"]
    assert (device["vendor"], device["arch"], device["compute_capability"]) == ("NVIDIA", "sm_90", "9.0")


def test_real_traces_vendor_and_arch():
    amd = load_model(str(real_trace("amd_mi300x_jax08_gemm.xplane.pb")))
    assert {(g.capabilities.vendor, g.capabilities.arch, g.capabilities.compute_capability) for g in amd.gpus[:1]} == {
        (AMD, "gfx942", None)
    }
    v100 = load_model(str(real_trace("gpu_multi_worker_v100x8.xplane.pb")))
    assert {(g.capabilities.vendor, g.capabilities.arch) for g in v100.gpus} == {(NVIDIA, "sm_70")}


def test_tpu_profile_says_so():
    report = analyze_host_file(str(real_trace("tpu_v6e_inference_4chip.xplane.pb")))
    assert report["summary"]["verdict"].startswith("Unknown: This is a TPU profile (4 TPU planes, no GPU)")
    assert report["notes"][0].startswith("This is a TPU profile (4 /device:TPU planes, no GPU)")
    assert not any("CPU-only" in note for note in report["notes"])


def test_a_tpu_profile_says_what_the_advisor_cannot_tell_and_gives_no_gpu_advice():
    """tpu_v6e_inference_4chip once read "Confidence: medium" with step-marker advice (StepTraceAnnotation) and
    "Time: host compute 65%, idle 35%" over 97.6 s with no TPU time in it."""
    from tb_gpu_advisor.report.text import render_text

    report = analyze_host_file(str(real_trace("tpu_v6e_inference_4chip.xplane.pb")))
    summary = report["summary"]
    assert summary["tpu_count"] == 4 and summary["gpu_count"] == 0
    assert summary["confidence"]["level"] == "low"
    (reason,) = summary["confidence"]["reasons"]
    assert reason.startswith("A TPU profile (4 TPU planes, no GPU): this advisor measures GPUs, so it cannot say")
    assert "StepTraceAnnotation" not in reason and report["findings"] == []
    assert summary["breakdown_pct"] == {} and summary["input_wait_pct"] is None
    assert summary["verdict"].startswith("Unknown: This is a TPU profile")  # not "Not enough trace"
    text = render_text({"schema_version": 1, "run": None, "hosts": [report], "errors": []})
    assert "Time:" not in text and "StepTraceAnnotation" not in text


def test_idle_sibling_gpus_take_the_gfx_name_their_twin_shows():
    builder = TraceBuilder()
    for ordinal in range(3):
        builder.gpu(ordinal, vendor="AMD", model=None, compute_capability=(9, 4), sm_count=304)
    builder.gpu(3, vendor="AMD", model=None, compute_capability=(9, 0), sm_count=104)  # another model: unknown
    builder.gpu(0).kernel(_TENSILE, 0, 10)
    assert [d["arch"] for d in report_of(builder)["devices"]] == ["gfx942", "gfx942", "gfx942", None]
