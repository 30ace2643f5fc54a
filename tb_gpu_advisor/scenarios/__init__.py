"""The scenario library: realistic single-host GPU training traces, each a known problem or its fix.

`SCENARIOS` maps a run name to its `Scenario`; `scenario.build()` returns a `TraceBuilder` holding the trace, every
step identical; `scenario.build_realistic()` the same run with seeded step-to-step jitter (what the demo writes).
Generation is deterministic: the same code always writes the same bytes. See docs/scenarios.md.
"""

from collections.abc import Callable
from dataclasses import dataclass

from tb_gpu_advisor.scenarios import (
    cpu_placement,
    healthy,
    host_bound,
    input_bound,
    jax_decoder,
    jax_input,
    launch_bound,
    low_occupancy,
    multi_gpu,
    precision,
    transfer_bound,
)
from tb_gpu_advisor.scenarios.jitter import Jitter


@dataclass(frozen=True)
class Scenario:
    """One trace of the library and what the advisor should say about it.

    `expected_bottleneck` uses the verdict vocabulary of `summary.bottleneck` (input, host, host_blocked, launch, transfer,
    kernel, communication, none); `expected_top_finding` is the category of the finding that should come first
    (None: no finding should be high). `fixed_variant_of` names the scenario this one fixes.
    """

    name: str
    title: str
    problem: str
    expected_bottleneck: str
    build: Callable
    fixed_variant_of: str | None = None
    expected_top_finding: str | None = None
    advice: str = ""

    @property
    def description(self):
        """The docstring of the build function: what the trace shows and what the advice should be."""
        return " ".join((self.build.__doc__ or "").split())

    def build_realistic(self):
        """The run as a real one looks: seeded step-to-step jitter and a slower first profiled step."""
        return self.build(jitter=Jitter(self.name))


_ENTRIES = (
    Scenario(
        "input_bound",
        "ResNet-50 on 1x V100 waits for a sequential tf.data map",
        "Each 224 ms step spends 160 ms in IteratorGetNext while the GPU idles.",
        "input",
        input_bound.build,
        None,
        "input",
        "map(..., num_parallel_calls=tf.data.AUTOTUNE) and .prefetch(tf.data.AUTOTUNE)",
    ),
    Scenario(
        "input_bound_fixed",
        "ResNet-50 on 1x V100 with a parallel, prefetching pipeline",
        "The next batch is built in the background; IteratorGetNext returns at once.",
        "none",
        input_bound.build_fixed,
        "input_bound",
    ),
    Scenario(
        "launch_bound",
        "Unrolled custom LSTM on 1x A100: 850 tiny kernels a step",
        "Kernels of 2-6 us wait for launches that each take 11.5 us of executor time.",
        "launch",
        launch_bound.build,
        None,
        "launch",
        "tf.function(jit_compile=True), a larger batch, CUDA graphs",
    ),
    Scenario(
        "launch_bound_fixed",
        "The same LSTM compiled with XLA",
        "126 fused kernels per step run back to back.",
        "none",
        launch_bound.build_fixed,
        "launch_bound",
    ),
    Scenario(
        "transfer_bound",
        "U-Net on 1x A100-PCIe fed 67 MB NumPy batches",
        "Every step first copies its batch from pageable memory, synchronously, at 9 GB/s.",
        "transfer",
        transfer_bound.build,
        None,
        "transfer",
        "tf.data with prefetch_to_device: pinned, asynchronous copies that overlap compute",
    ),
    Scenario(
        "transfer_bound_fixed",
        "The same U-Net with prefetch_to_device",
        "Batches are copied from pinned memory on the copy stream during the previous step.",
        "none",
        transfer_bound.build_fixed,
        "transfer_bound",
    ),
    Scenario(
        "low_occupancy",
        "PointNet++ on 1x A100: a custom op launched with 16 blocks of 32 threads",
        "query_ball_point_gpu takes 14 ms of a 24 ms step at 18.75% theoretical occupancy on 16 of 108 SMs.",
        "kernel",
        low_occupancy.build,
        None,
        "occupancy",
        "one thread per centroid in 128-256 thread blocks, a grid of several blocks per SM, fewer registers",
    ),
    Scenario(
        "low_occupancy_fixed",
        "PointNet++ with the grouping kernels launched over the whole GPU",
        "query_ball_point_gpu runs 128 blocks of 128 threads at 75% occupancy in 0.9 ms.",
        "none",
        low_occupancy.build_fixed,
        "low_occupancy",
    ),
    Scenario(
        "fp32_on_tensor_cores",
        "DistilBERT in float32 with TF32 off on 1x A100",
        "Every matmul is an ampere_sgemm kernel on the CUDA cores; the Tensor Cores stay idle.",
        "kernel",
        precision.build,
        None,
        "precision",
        'keras.mixed_precision.set_global_policy("mixed_float16") (or bfloat16), or allow TF32',
    ),
    Scenario(
        "fp32_on_tensor_cores_fixed",
        "DistilBERT in mixed precision on 1x A100",
        "Matmuls run as fp16 Tensor-Core GEMMs; the step is about 5x shorter.",
        "none",
        precision.build_fixed,
        "fp32_on_tensor_cores",
    ),
    Scenario(
        "multi_gpu_straggler",
        "4x A100-PCIe data parallel: NCCL all-reduce dominates, GPU:2 straggles",
        "A 470 MB float32 all-reduce over PCIe takes longer than compute, and three GPUs wait in NCCL for "
        "the power-capped GPU:2.",
        "communication",
        multi_gpu.build,
        None,
        "communication",
        "fix the straggler; all-reduce float16 gradients in packs that overlap backward; sync less often",
    ),
    Scenario(
        "multi_gpu_straggler_fixed",
        "4x A100-PCIe with balanced GPUs, fp16 packs and 2 micro-batches",
        "Half the bytes, overlapped with the last backward pass, once per two micro-batches; about a fifth "
        "of the step is still exposed all-reduce over PCIe.",
        "communication",
        multi_gpu.build_fixed,
        "multi_gpu_straggler",
        "communication",
    ),
    Scenario(
        "host_bound",
        "Text classifier on 1x H100 starved by CPU ops on the launch threads",
        "Tokenizer ops and tf.data work occupy the inter-op threads that launch the kernels.",
        "host",
        host_bound.build,
        None,
        "host",
        "tokenize in tf.data with parallel map and prefetch; TF_GPU_THREAD_MODE=gpu_private",
    ),
    Scenario(
        "host_bound_fixed",
        "The same classifier with tf.data tokenization and gpu_private threads",
        "A private thread launches the kernels back to back.",
        "none",
        host_bound.build_fixed,
        "host_bound",
    ),
    Scenario(
        "healthy",
        "GPT-style decoder, bfloat16 + XLA on 1x H100: busy and balanced",
        "Large Tensor-Core GEMMs and flash attention back to back; nothing to fix.",
        "none",
        healthy.build,
    ),
    Scenario(
        "jax_inline_loader",
        "ViT-B/16 in JAX on 1x H100 building each batch on the step thread",
        "Each 52 ms step starts with 22 ms of reading, decoding and stacking in Python while the GPU idles.",
        "input",
        jax_input.build,
        None,
        "input",
        "grain or tf.data as_numpy_iterator() in the background; flax prefetch_to_device",
    ),
    Scenario(
        "jax_inline_loader_fixed",
        "The same ViT fed by grain and prefetch_to_device",
        "The step thread takes a batch already on the GPU and dispatches at once.",
        "none",
        jax_input.build_fixed,
        "jax_inline_loader",
    ),
    Scenario(
        "jax_float32_images",
        "A small ViT in JAX on 1x H100 sent float32 image batches inside the step",
        "Each step first copies a 201 MB float32 batch while the GPU waits; uint8 is a quarter of it.",
        "transfer",
        jax_input.build_float_images,
        None,
        "transfer",
        "send uint8 and convert in the jitted step; device_put the next batch during the step",
    ),
    Scenario(
        "jax_float32_images_fixed",
        "The same ViT sent uint8 images one step ahead",
        "50 MB uint8 batches go to the GPU while the previous step computes.",
        "none",
        jax_input.build_float_images_fixed,
        "jax_float32_images",
    ),
    Scenario(
        "cpu_placed_op",
        "Text classifier on 1x H100 with a float64 MatMul placed on the CPU",
        "feature_cross/MatMul runs 7.4 ms on the CPU between a copy back and a copy out; the GPU waits.",
        "host",
        cpu_placement.build,
        None,
        "placement",
        "tf.debugging.set_log_device_placement(True); compute the cross in float32 on the GPU",
    ),
    Scenario(
        "cpu_placed_op_fixed",
        "The same classifier with the feature cross in float32 on the GPU",
        "One more cuBLAS GEMM; no copies, no CPU op in the step.",
        "none",
        cpu_placement.build_fixed,
        "cpu_placed_op",
    ),
    # Last, so that the runs above keep their demo timestamps (demo.demo_timestamp) and bytes.
    Scenario(
        "jax_decoder_roofline",
        "GPT-style decoder in JAX on 1x H100, its compiled HLO in the profile",
        "GEMMs and flash attention back to back; the HLO gives each kernel's FLOPs and bytes, so the roofline shows.",
        "none",
        jax_decoder.build,
    ),
)

SCENARIOS = {scenario.name: scenario for scenario in _ENTRIES}


def fixed_pairs():
    """(problem, fix) Scenario pairs, in library order."""
    return [(SCENARIOS[s.fixed_variant_of], s) for s in _ENTRIES if s.fixed_variant_of]
