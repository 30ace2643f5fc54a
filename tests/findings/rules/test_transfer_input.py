"""transfer.wide_input_copies and transfer.input_copy_in_step: what the input copies send and when."""

from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape
from tests.findings.scenarios import findings_by_id, kernels, report_of, step_starts

IMAGES = (64, 224, 224, 3)
IMAGE_BYTES = 64 * 224 * 224 * 3 * 4


def image_module(dtype="f32", dims=IMAGES):
    module = HloModuleBuilder("jit_train_step")
    images = module.entry.parameter("images", shape(dtype, *dims))
    module.entry.add("negate", "negate", shape(dtype, *dims), (images,))
    return module.to_bytes()


def jax_image_loop(dtype="f32", dims=IMAGES, copy_bytes=IMAGE_BYTES, astype=True, copy_us=3_000, copies=1, ahead=False):
    """4 JAX steps of 10 ms on one A100: `copies` host-to-device copies of `copy_bytes` each (pinned, async),
    at the step's start (or during the previous step's compute, `ahead`), then compute to the step's end."""
    builder = TraceBuilder()
    builder.metadata(jax_version="0.4.30")
    builder.hlo_module(1, "jit_train_step", image_module(dtype, dims))
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        if astype:
            python.event("$<unknown> astype", start + 10, 500)
        python.event("PjitFunction(train_step)", start + 600, 50)
        at = start - 5_000 if ahead else start + 700
        for index in range(copies):
            gpu.memcpy("h2d", at + index * copy_us, copy_us, copy_bytes, src="pinned", is_async=True)
        kernels(gpu, start + 700 + (0 if ahead else copies * copy_us), 9_300 - (0 if ahead else copies * copy_us))
    return builder


def test_a_float32_image_batch_gets_the_uint8_advice_with_its_shape():
    found = findings_by_id(report_of(jax_image_loop()))
    finding = found["transfer.wide_input_copies"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["wide_copies"], metrics["wide_copy_bytes"], metrics["certainty"]) == (4, 4 * IMAGE_BYTES, "high")
    assert metrics["wide_copy_exposed_ms"] == 12.0
    assert finding["evidence"]["pointers"]["inputs"] == [
        {
            "parameter": "images",
            "program": "program 1",
            "dtype": "f32",
            "shape": [64, 224, 224, 3],
            "bytes": IMAGE_BYTES,
            "copies": 4,
        }
    ]
    # 3 ms of each 10 ms step is the exposed copy; uint8 sends a quarter: 2.25 ms saved per step
    assert finding["speedup_kind"] == "model" and finding["estimated_speedup"] == 1.29
    assert "astype(jnp.float32)" in finding["fix"] and "f32[64x224x224x3]" in finding["fix"]
    # the same copies, not prefetched: the in-step copy finding too, sharing the copy pool
    assert "transfer.input_copy_in_step" in found
    assert "transfer.input_copy_in_step" in finding["overlaps_with"]


def test_no_decode_or_astype_on_the_host_is_medium_certainty():
    finding = findings_by_id(report_of(jax_image_loop(astype=False)))["transfer.wide_input_copies"]
    assert finding["evidence"]["metrics"]["certainty"] == "medium"
    assert "check what your loader reads" in finding["fix"]


def test_quiet_for_8_bit_inputs_non_image_shapes_unmatched_sizes_and_hidden_copies():
    quiet = [
        jax_image_loop(dtype="u8", copy_bytes=IMAGE_BYTES // 4),
        jax_image_loop(dims=(64, 150528), copy_bytes=IMAGE_BYTES),  # flat features, not an image
        jax_image_loop(copy_bytes=IMAGE_BYTES - 4096),
        jax_image_loop(ahead=True),
    ]
    for builder in quiet:
        assert "transfer.wide_input_copies" not in findings_by_id(report_of(builder))


def test_input_copy_in_step_and_many_copies_per_step():
    finding = findings_by_id(report_of(jax_image_loop(copy_bytes=4_000_000, copy_us=500, copies=6)))[
        "transfer.input_copy_in_step"
    ]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["input_copies_per_step"], metrics["exposed_pct"]) == (6.0, 30.0)
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.43
    assert finding["fix"].startswith("Each step sends 6 separate copies")
    assert "prefetch_to_device" in finding["fix"]
    assert "transfer.input_copy_in_step" not in findings_by_id(report_of(jax_image_loop(ahead=True)))
    # under 5% of the step: not worth restructuring the feed
    small = jax_image_loop(copy_bytes=4_000_000, copy_us=400)
    assert "transfer.input_copy_in_step" not in findings_by_id(report_of(small))
