"""The HLO module of the XLA-compiled decoder step (scenarios.transformer.decoder_xla): each kernel's instruction
with its operand shapes, so the profile carries what the roofline needs (FLOPs and bytes per kernel). GEMMs are
cuBLAS-LT custom-calls, attention cuDNN's fused flash-attention custom-calls, element-wise fusions fused
computations; the reductions and the gather get no instruction (their kernels stay off the roofline)."""

from tb_gpu_advisor.testing.hlo import HloModuleBuilder, fmha_config, gemm_config, shape, tuple_shape

# Fusion kinds of decoder_xla written as element-wise ops on bfloat16 vectors.
_ELEMENTWISE = {"loop_add": "add", "loop_multiply": "multiply", "loop_exponential": "exponential"}


class DecoderHlo:
    """Collects the instructions decoder_xla reports; `to_bytes()` is the serialized HloProto of the step."""

    def __init__(self, name):
        self.module = HloModuleBuilder(name)

    def _parameter(self, name, dims, dtype="bf16"):
        return self.module.entry.parameter(name, shape(dtype, *dims))

    def gemm(self, name, m, n, k):
        """C[m, n] = A[m, k] B[k, n] in bfloat16, as XLA calls cuBLAS-LT (the layout does not change the cost)."""
        a, b = self._parameter(f"{name}.a", (m, k)), self._parameter(f"{name}.b", (k, n))
        self.module.entry.add(
            name,
            "custom-call",
            tuple_shape(shape("bf16", m, n), shape("s8", 4_194_304)),
            (a, b),
            custom_call_target="__cublas$lt$matmul",
            backend_config=gemm_config((1,), (0,), (), ()),
        )

    def fusion(self, name, kind, elements, passes):
        """An element-wise loop fusion over `elements` bfloat16 values that reads `passes - 1` of them and writes
        one (the bytes its kernel's duration assumes); kinds without an element-wise op are left out."""
        if kind not in _ELEMENTWISE:
            return
        opcode = _ELEMENTWISE[kind]
        vector = shape("bf16", elements)
        fused = self.module.computation(f"fused_{name}")
        inputs = [fused.parameter(f"param_{i}", vector) for i in range(max(1, passes - 1))]
        if opcode == "exponential":
            value = fused.add(f"{opcode}.{name}", opcode, vector, inputs[:1])
        else:
            value = fused.add(f"{opcode}.{name}.0", opcode, vector, (inputs[0], inputs[min(1, len(inputs) - 1)]))
        for index, operand in enumerate(inputs[2:], 1):
            value = fused.add(f"{opcode}.{name}.{index}", opcode, vector, (value, operand))
        operands = [self._parameter(f"{name}.{i}", (elements,)) for i in range(len(inputs))]
        self.module.entry.add(name, "fusion", vector, operands, fusion_kind="kLoop", called=[fused])

    def attention(self, name, direction, batch, heads, seq, head_dim):
        """cuDNN flash attention, forward ("fprop") or backward ("bprop"), without a mask."""
        qkv = [self._parameter(f"{name}.{n}", (batch, seq, heads, head_dim)) for n in ("q", "k", "v")]
        tensor = shape("bf16", batch, seq, heads, head_dim)
        config = fmha_config(batch, heads, seq, seq)
        if direction == "fprop":
            self.module.entry.add(
                name,
                "custom-call",
                tuple_shape(tensor, shape("f32", batch, heads, seq), shape("u8", 0)),
                qkv,
                custom_call_target="__cudnn$fmhaSoftmax",
                backend_config=config,
            )
            return
        stats = self._parameter(f"{name}.stats", (batch, heads, seq), "f32")
        grad, output = (self._parameter(f"{name}.{n}", (batch, seq, heads, head_dim)) for n in ("d_out", "out"))
        self.module.entry.add(
            name,
            "custom-call",
            tuple_shape(tensor, tensor, tensor, shape("u8", 0)),
            qkv + [stats, grad, output],
            custom_call_target="__cudnn$fmhaSoftmaxBackward",
            backend_config=config,
        )

    def to_bytes(self):
        return self.module.to_bytes()
