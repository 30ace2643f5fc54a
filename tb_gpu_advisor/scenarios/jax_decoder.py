"""A healthy JAX run whose profile carries the jitted step's HLO: the roofline places each GEMM, attention and
element-wise kernel by its FLOPs and bytes."""

from tb_gpu_advisor.scenarios.decoder_hlo import DecoderHlo
from tb_gpu_advisor.scenarios.devices import H100_SXM5_80GB
from tb_gpu_advisor.scenarios.engine import transfer_us
from tb_gpu_advisor.scenarios.jax_loop import MODULE, PROGRAM_ID, Batch, new_jax_run, run_jax_steps
from tb_gpu_advisor.scenarios.transformer import decoder_xla

STEPS = 5
SPEC = H100_SXM5_80GB
BATCH, SEQ, LAYERS, HIDDEN, HEADS, VOCAB = 16, 1024, 12, 1024, 16, 50304


def build(steps=STEPS, jitter=None):
    """A GPT-style decoder (12 layers, hidden 1024), batch 16 of 1,024 tokens, bfloat16 under `jax.jit` on 1x
    H100, fed one step ahead (`prefetch_to_device`): cuBLAS GEMMs, cuDNN flash attention and XLA fusions run back
    to back. `jax.profiler.trace` stores the compiled step's HLO in the profile, so each kernel's FLOPs and bytes
    are known and the roofline shows where it stands against the H100's roofs.

    Advice: nothing urgent; no finding should be high. The roofline shows the GEMMs near the Tensor-Core roof
    and the element-wise fusions on the memory roof.
    """
    hlo = DecoderHlo(MODULE)
    ops = decoder_xla(SPEC, BATCH, SEQ, LAYERS, HIDDEN, HEADS, VOCAB, hlo=hlo)
    run = new_jax_run(SPEC, "h100-jax-07", hlo.to_bytes())
    tokens = BATCH * SEQ * 4
    copies = ((tokens, transfer_us(tokens, SPEC.host_link_gbps)), (tokens, transfer_us(tokens, SPEC.host_link_gbps)))
    run_jax_steps(run, steps, Batch((), copies, sent_ahead=True), ops, jitter=jitter, program_id=PROGRAM_ID)
    return run.builder
