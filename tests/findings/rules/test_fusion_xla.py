"""fusion.elementwise_kernels counts what its fix fuses: for TensorFlow with XLA off, jit_compile fuses the
element-wise kernels together with the reductions, concatenations and gathers (loop and input fusions), so the
finding counts all of them (analysis.op_types.is_xla_fusible_kernel); a library's kernel (cuDNN batch norm) is one
fused kernel already and is left out, as are runtime copies."""

from tb_gpu_advisor.analysis.op_types import op_type_rollup
from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import EIGEN, SGEMM, findings_by_id, kernels, report_of, step_starts

ROW_REDUCE = "void tensorflow::functor::RowReduceKernel<float const*, float*, cub::Sum>(float const*, float*, int, int)"
GATHER = "void tensorflow::functor::GatherOpKernel<float, int, true>(float const*, int const*, float*, long, long)"
CUDNN_BN = "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct)"
SMALL = dict(grid=(216, 1, 1), block=(256, 1, 1))


def _tf_step_of_small_kernels():
    """Each 10 ms step: one 2 ms SGEMM, 40 element-wise kernels (1 ms), 20 row reductions (1 ms), 10 gathers
    (0.5 ms) and 2 cuDNN batch-norm kernels (1 ms): 5.5 ms of kernels, 72 kernels."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        t = kernels(gpu, start + 100, 2_000, name=SGEMM, **SMALL)
        t = kernels(gpu, t, 1_000, name=EIGEN, count=40, tf_op="model/dense/Relu", **SMALL)
        t = kernels(gpu, t, 1_000, name=ROW_REDUCE, count=20, tf_op="model/norm/Mean", **SMALL)
        t = kernels(gpu, t, 500, name=GATHER, count=10, tf_op="model/embedding/GatherV2", **SMALL)
        kernels(gpu, t, 1_000, name=CUDNN_BN, count=2, tf_op="model/bn/FusedBatchNormV3", **SMALL)
    return builder


def test_tensorflow_counts_the_reductions_and_gathers_xla_would_fuse():
    report = report_of(_tf_step_of_small_kernels())
    fusion = findings_by_id(report)["fusion.elementwise_kernels"]
    metrics = fusion["evidence"]["metrics"]
    # 40 + 20 + 10 = 70 per step over 2.5 ms of the 5.5 ms of kernels; the 40 element-wise kernels alone (1 ms,
    # 18.2%) are under both bars (50 per step, 20%), and the cuDNN batch norm is not counted
    assert metrics["elementwise_kernels_per_step"] == 70.0
    assert metrics["elementwise_share_of_kernel_time_pct"] == 45.45
    assert metrics["elementwise_ms"] == 10.0  # 2.5 ms x 4 steps
    assert fusion["summary"].startswith(
        "70 fusible kernels per step (element-wise, reductions, concatenations, gathers) take 45.5% of GPU kernel time"
    )
    card = {row["op_type"]: row["share_pct"] for row in op_type_rollup(report["kernels"])}
    assert card == {"matmul_conv": 36.36, "reduction": 36.36, "elementwise": 18.18, "copy": 9.09}
