"""A generated JAX-style A100 trace with embedded HLO whose FLOPs and bytes are known exactly: a batched GEMM
custom-call, a fusion with a dot, cuDNN fused attention (forward causal and backward) and an element-wise fusion.
"""

from dataclasses import dataclass


from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, dot_numbers, fmha_config, gemm_config, shape, tuple_shape


@dataclass(frozen=True)
class ExpectedKernel:
    name: str
    op: str
    program_id: int
    duration_us: float
    flops: int
    bytes: int


B, T, N, H = 2, 1024, 8, 64  # attention: batch, sequence, heads, head dim
ATTENTION_FORWARD_FLOPS = 4 * B * N * T * T * H // 2  # causal
EXPECTED = (
    ExpectedKernel(
        "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32",
        "custom-call.1",
        11,
        20.0,
        2 * 8 * 512 * 256 * 1024,
        (8 * 512 * 1024 + 8 * 1024 * 256 + 8 * 512 * 256) * 2,
    ),
    ExpectedKernel(
        "loop_dot_fusion",
        "dot_fusion",
        12,
        4.0,
        2 * 256 * 128 * 512 + 256 * 128,
        (256 * 512 + 512 * 128) * 2 + 256 * 128 * 4,
    ),
    ExpectedKernel(
        "cudnn_generated_fort_native_sdpa_sm80_flash_fprop",
        "custom-call.2",
        13,
        40.0,
        ATTENTION_FORWARD_FLOPS,
        4 * B * T * N * H * 2 + B * N * T * 4,
    ),
    ExpectedKernel(
        "cudnn_generated_fort_native_sdpa_sm80_flash_bprop",
        "custom-call.3",
        13,
        100.0,
        int(ATTENTION_FORWARD_FLOPS * 2.5),
        8 * B * T * N * H * 2 + B * N * T * 4,
    ),
    ExpectedKernel("loop_add_fusion", "add_fusion", 14, 8.0, 2 * 2**20, 3 * 2**20 * 4),
)


def _gemm_module():
    module = HloModuleBuilder("jit_gemm", 11)
    a = module.entry.parameter("a", shape("bf16", 8, 512, 1024))
    b = module.entry.parameter("b", shape("bf16", 8, 1024, 256))
    call = module.entry.add(
        "custom-call.1",
        "custom-call",
        tuple_shape(shape("bf16", 8, 512, 256), shape("s8", 4194304)),
        (a, b),
        custom_call_target="__cublas$lt$matmul",
        backend_config=gemm_config((2,), (1,), (0,), (0,)),
    )
    module.entry.add("get-tuple-element.1", "get-tuple-element", shape("bf16", 8, 512, 256), (call,), tuple_index=0)
    return module


def _dot_fusion_module():
    module = HloModuleBuilder("jit_dot_fusion", 12)
    fused = module.computation("fused_dot")
    p0 = fused.parameter("param_0", shape("bf16", 256, 512))
    p1 = fused.parameter("param_1", shape("bf16", 512, 128))
    product = fused.add("dot.1", "dot", shape("f32", 256, 128), (p0, p1), dot_dimension_numbers=dot_numbers((1,), (0,)))
    fused.add("multiply.1", "multiply", shape("f32", 256, 128), (product, product))
    a = module.entry.parameter("a", shape("bf16", 256, 512))
    b = module.entry.parameter("b", shape("bf16", 512, 128))
    module.entry.add("dot_fusion", "fusion", shape("f32", 256, 128), (a, b), fusion_kind="kOutput", called=[fused])
    return module


def _attention_module():
    module = HloModuleBuilder("jit_attention", 13)
    qkv = [module.entry.parameter(n, shape("bf16", B, T, N, H)) for n in ("q", "k", "v")]
    forward = module.entry.add(
        "custom-call.2",
        "custom-call",
        tuple_shape(shape("bf16", B, T, N, H), shape("f32", B, N, T), shape("u8", 0)),
        qkv,
        custom_call_target="__cudnn$fmhaSoftmax",
        backend_config=fmha_config(B, N, T, T, "CAUSAL"),
    )
    output = module.entry.add(
        "get-tuple-element.2", "get-tuple-element", shape("bf16", B, T, N, H), (forward,), tuple_index=0
    )
    stats = module.entry.add(
        "get-tuple-element.3", "get-tuple-element", shape("f32", B, N, T), (forward,), tuple_index=1
    )
    grad = module.entry.parameter("d_out", shape("bf16", B, T, N, H))
    module.entry.add(
        "custom-call.3",
        "custom-call",
        tuple_shape(*(shape("bf16", B, T, N, H) for _ in range(3)), shape("u8", 0)),
        qkv + [stats, grad, output],
        custom_call_target="__cudnn$fmhaSoftmaxBackward",
        backend_config=fmha_config(B, N, T, T, "CAUSAL"),
    )
    return module


def _elementwise_module():
    module = HloModuleBuilder("jit_add", 14)
    fused = module.computation("fused_add")
    p0 = fused.parameter("param_0", shape("f32", 2**20))
    p1 = fused.parameter("param_1", shape("f32", 2**20))
    total = fused.add("add.1", "add", shape("f32", 2**20), (p0, p1))
    scaled = fused.add("multiply.2", "multiply", shape("f32", 2**20), (total, p0))
    fused.add("exponential.1", "exponential", shape("f32", 2**20), (scaled,))
    a = module.entry.parameter("a", shape("f32", 2**20))
    b = module.entry.parameter("b", shape("f32", 2**20))
    module.entry.add("add_fusion", "fusion", shape("f32", 2**20), (a, b), fusion_kind="kLoop", called=[fused])
    return module


MODULES = {11: _gemm_module, 12: _dot_fusion_module, 13: _attention_module, 14: _elementwise_module}


def roofline_builder(steps=3):
    """TraceBuilder of `steps` repetitions of the EXPECTED kernels on one A100-SXM4-80GB, with their modules."""
    builder = TraceBuilder()
    gpu = builder.gpu(0)
    for program_id, make in MODULES.items():
        module = make()
        builder.hlo_module(program_id, module.proto.name, module.to_bytes())
    start = 10.0
    for _ in range(steps):
        for kernel in EXPECTED:
            gpu.kernel(
                kernel.name,
                start,
                kernel.duration_us,
                hlo_op=kernel.op,
                program_id=kernel.program_id,
                hlo_module=MODULES[kernel.program_id]().proto.name,
                grid=(108, 1, 1),
            )
            start += kernel.duration_us + 1.0
    return builder
