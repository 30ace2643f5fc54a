"""A small trace as XLA's ROCm tracer writes it (JAX on an AMD Instinct GPU), for exact tests of AMD handling."""

from tb_gpu_advisor.testing.builder import TraceBuilder

# hipBLASLt/Tensile GEMM on matrix cores (MI16x16x16 instructions) built for gfx942.
TENSILE_GEMM = (
    "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0_APM1_GRVWn1_GSU1_ISA942_IU1_K1_"
    "LBSPPA0_TT2_128_WS64_WG64_4_1_WGM16.kd"
)
COPY_KERNEL = "__amd_rocclr_copyBuffer.kd"
FILL_KERNEL = "__amd_rocclr_fillBufferAligned.kd"
BROADCAST = "wrapped_broadcast.kd"


def rocm_details(grid, block, occupancy=0, registers=None):
    """`kernel_details` as the ROCm tracer writes it (no registers unless given; LDS as `group_mem`)."""
    regs = f"regs:{registers} " if registers is not None else ""
    return (
        f" {regs}grid:{','.join(map(str, grid))} block:{','.join(map(str, block))} private_mem:0 "
        f"group_mem:0 occ_pct:{occupancy}"
    )


def rocm_builder(gpus=1):
    """A TraceBuilder with `gpus` MI300X-like planes (`device_vendor` AMD, no device name, gfx9.4 numbers)."""
    builder = TraceBuilder()
    for ordinal in range(gpus):
        builder.gpu(
            ordinal,
            vendor="AMD",
            model=None,
            compute_capability=(9, 4),
            sm_count=304,
            clock_mhz=2100,
            memory_bandwidth_gbps=2662.4,
            memory_gb=192,
        )
    return builder


def rocm_gemm_trace(impossible_registers=False):
    """One MI300X: a Tensile GEMM, a broadcast fusion, the runtime's copy and fill kernels, two device-to-device
    copies and one host-to-device copy on a MemcpyOther line. Times in us; every event launched from `python`."""
    builder = rocm_builder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    gpu.kernel(
        COPY_KERNEL,
        10,
        4,
        stream=16,
        details=rocm_details((1, 1, 1), (512, 1, 1)),
        hlo_op="copy.1",
        launch=(python, 2, 3),
    )
    gpu.kernel(FILL_KERNEL, 20, 2, stream=16, details=rocm_details((4, 1, 1), (256, 1, 1)), launch=(python, 12, 3))
    gpu.rocm_copy(30, 8, 1 << 20, launch=(python, 22, 3))
    gpu.rocm_copy(40, 4, 1 << 19, launch=(python, 32, 3))
    gpu.rocm_copy(50, 20, 1 << 22, name="CopyHostToDevice", launch=(python, 42, 3))
    gpu.kernel(
        TENSILE_GEMM,
        80,
        100,
        stream=16,
        details=rocm_details((16, 16, 1), (256, 1, 1)),
        hlo_op="dot.1",
        op_name="jit(dot)/dot_general",
        launch=(python, 72, 3),
    )
    gpu.kernel(
        BROADCAST,
        190,
        10,
        stream=16,
        details=rocm_details((256, 1, 1), (256, 1, 1), registers=2191500840 if impossible_registers else None),
        hlo_op="wrapped_broadcast",
        op_name="jit(broadcast_in_dim)/broadcast_in_dim",
        launch=(python, 182, 3),
    )
    return builder
