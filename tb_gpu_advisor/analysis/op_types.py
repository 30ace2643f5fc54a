"""What kind of operation a kernel performs, from its name and op: matmul/conv, element-wise, reduction,
collective, copy, or other; and the kernel table's time rolled up by that kind.

One classifier for the whole package: the Kernels card's chips and bar, and the element-wise fusion finding
(findings.rules.fusion) both call op_type, so one kernel is never counted as two kinds. Kernel names are cut into
words (`TensorConversionOp` -> tensor, conversion, op; `s16816gemm` -> s, 16816, gemm; `MatMul` -> mat, mul and the
pair matmul) and matched word by word against the vocabularies below: `conv` never matches inside `Conversion`
or `convert`, and the matching is linear in the name's length."""

import re
from functools import lru_cache

from tb_gpu_advisor.analysis.kernel_names import (
    is_nccl,
    is_runtime_copy,
    is_tensor_core_eligible,
    without_parameters,
)

OP_TYPES = ("matmul_conv", "elementwise", "reduction", "collective", "copy", "other")

_COLLECTIVE_OP = re.compile(
    r"all-?reduce|all-?gather|reduce-?scatter|all-?to-?all|collective-permute|"
    r"Collective(Reduce|Gather|Bcast)|Nccl|c10d::|allreduce",
    re.IGNORECASE,
)
# Words (lower case; a pair of adjacent words also counts joined: mat+mul = matmul) that say what a kernel does.
# Random numbers are element-wise work (tensorflow::functor::FillPhiloxRandomKernelLaunch, curand, dropout),
# checked before the copy words, whose `fill` they carry.
_RANDOM_WORDS = frozenset({"philox", "random", "curand", "dropout", "bernoulli", "uniform", "randn", "rng"})
_COPY_WORDS = frozenset(
    {
        "copy",
        "memcpy",
        "memset",
        "transpose",
        "concat",
        "concatenate",
        "pad",
        "padding",
        "slice",
        "slicing",
        "gather",
        "scatter",
        "shuffle",
        "shuffling",
        "layout",
        "fill",
        "permute",
        "tonhwc",
        "tonchw",
    }
)
# Normalisation and reductions, checked before the matmul words: cuDNN's batch-norm kernels (cudnn::bn_bw_1C11_...)
# carry the library's name but are no GEMM or convolution.
_REDUCTION_WORDS = frozenset(
    {
        "reduce",
        "reduction",
        "kreduce",
        "argmax",
        "argmin",
        "softmax",
        "norm",
        "batchnorm",
        "layernorm",
        "groupnorm",
        "rmsnorm",
        "bn",
        "biasgrad",
        "loss",
        "topk",
        "cumsum",
        "scan",
    }
)
_MATMUL_WORDS = frozenset(
    {
        "gemm",
        "sgemm",
        "hgemm",
        "dgemm",
        "gemv",
        "gemvx",
        "matmul",
        "batchmatmul",
        "cutlass",
        "cublas",
        "cudnn",
        "scudnn",
        "hcudnn",
        "xmma",
        "gmma",
        "wgmma",
        "nvjet",
        "conv",
        "convolution",
        "convolve",
        "winograd",
        "wgrad",
        "dgrad",
        "implicit",
        "dot",
        "einsum",
        "cijk",
    }
)
_ELEMENTWISE_WORDS = frozenset(
    {
        "elementwise",
        "unrolled",
        "vectorized",
        "cwise",
        "eigenmeta",
        "scalar",
        "add",
        "mul",
        "sub",
        "div",
        "relu",
        "gelu",
        "silu",
        "sigmoid",
        "tanh",
        "softplus",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "pow",
        "cast",
        "convert",
        "conversion",
        "select",
        "where",
        "broadcast",
        "broadcasting",
        "bias",
        "apply",
        "adam",
        "momentum",
        "sgd",
        "functor",
    }
)
# The first word of the kernels XLA emits for element-wise fusions (loop_add_fusion, wrapped_convert).
_XLA_LOOP_WORDS = frozenset({"loop", "wrapped"})
# Op names of reductions whose kernels carry no such word (TensorFlow's Sum, Mean, Max ops); checked after the
# element-wise kernel names, since Eigen's element-wise add is `scalar_sum_op`.
_REDUCTION_OP = frozenset({"Sum", "Mean", "Max", "Min", "Prod", "All", "Any"})  # the op name's last path component


def _words(text):
    """The words of a name in one pass, no regex: runs of letters or of digits, a new word at each lower-to-upper
    case change (`TensorConversionOp` -> Tensor, Conversion, Op; `s16816gemm` -> s, 16816, gemm)."""
    words = []
    start = None
    previous = ""
    for index, char in enumerate(text):
        kind = "d" if char.isdigit() else ("u" if char.isupper() else "l") if char.isalpha() else ""
        split = not kind or kind != previous and (kind == "d" or previous == "d" or (kind == "u" and previous == "l"))
        if split and start is not None:
            words.append(text[start:index].lower())
            start = None
        if kind and start is None:
            start = index
        previous = kind
    if start is not None:
        words.append(text[start:].lower())
    return words


def name_words(text):
    """The words of a kernel or op name, lower case, with each adjacent pair also joined (`MatMul` -> mat, mul,
    matmul; `FusedBatchNorm` -> ..., batchnorm): a set, found in one pass over the name."""
    words = _words(text or "")
    return frozenset(words) | frozenset(a + b for a, b in zip(words, words[1:]))


def _first_word(text):
    words = _words(text or "")
    return words[0] if words else ""


@lru_cache(maxsize=65536)
def op_type(kernel_name, op_name=None):
    """One of OP_TYPES for a kernel: collectives and copies first (their names say so; random-number fills are
    element-wise), normalisation and reductions, matrix multiplies and convolutions, element-wise work; the op
    name decides only where the kernel name does not; what none of these names is `other`."""
    name = without_parameters(kernel_name or "")
    op = op_name or ""
    if is_nccl(name) or _COLLECTIVE_OP.search(op):
        return "collective"
    words = name_words(name)
    op_words = name_words(op)
    if is_runtime_copy(name):
        return "copy"
    if words & _RANDOM_WORDS:
        return "elementwise"
    matmul = bool(words & _MATMUL_WORDS)
    if words & _COPY_WORDS or (op_words & _COPY_WORDS and not matmul):
        return "copy"
    if words & _REDUCTION_WORDS:
        return "reduction"
    if matmul or is_tensor_core_eligible(op, kernel_name or ""):
        return "matmul_conv"
    if op_words & _REDUCTION_WORDS:
        return "reduction"
    if words & _ELEMENTWISE_WORDS or _first_word(name) in _XLA_LOOP_WORDS:
        return "elementwise"
    head, _, number = op.rpartition("/")[2].partition("_")
    if head in _REDUCTION_OP and (not number or number.isdigit()):
        return "reduction"
    if op_words & _ELEMENTWISE_WORDS:
        return "elementwise"
    return "other"


def is_elementwise_kernel(kernel_name, op_name=None):
    """op_type's element-wise kind: what the fusion finding counts, as the Kernels card's Element-wise bar does."""
    return op_type(kernel_name, op_name) == "elementwise"


# The copy-kind words of data movement XLA fuses into its loop and input fusions (concatenate, gather, slice, pad,
# broadcast of a constant): with XLA off each is its own kernel, under XLA part of a fusion. Runtime copies
# (memcpy, memset), transposes and layout changes stay out: they are not what jit_compile removes.
_XLA_FUSIBLE_COPY_WORDS = frozenset({"concat", "concatenate", "gather", "slice", "slicing", "pad", "padding", "fill"})
# The kinds XLA fuses whole: element-wise ops with the reductions (row/column reduce, softmax, norms) they feed or
# follow, into loop and input fusions.
XLA_FUSIBLE_OP_TYPES = ("elementwise", "reduction")
# Kernels of a library (cudnn::bn_fw_tr_..., cuBLAS, CUTLASS) are one fused kernel each already: XLA's own
# fusion of the same normalisation reads and writes the same tensors, so they are not counted as fusible.
_LIBRARY_WORDS = frozenset({"cudnn", "scudnn", "hcudnn", "cublas", "cutlass", "miopen"})


@lru_cache(maxsize=65536)
def is_xla_fusible_kernel(kernel_name, op_name=None):
    """What XLA (TensorFlow jit_compile, jax.jit) would fuse with XLA off, from op_type's kinds: element-wise and
    reduction kernels, and the copy kind's concatenations, gathers, slices, pads and fills (not runtime copies,
    transposes or layout changes), except a library's kernels (cuDNN batch norm: fused already). The fusion
    finding counts these for TensorFlow and JAX, whose fix is XLA."""
    kind = op_type(kernel_name, op_name)
    name = without_parameters(kernel_name or "")
    words = name_words(name)
    if words & _LIBRARY_WORDS:
        return False  # a library's kernel (cuDNN batch norm) is one fused kernel already
    if kind in XLA_FUSIBLE_OP_TYPES:
        return True
    if kind != "copy" or is_runtime_copy(name) or words & {"memcpy", "memset"}:
        return False
    return bool((words | name_words(op_name or "")) & _XLA_FUSIBLE_COPY_WORDS)


def op_type_rollup(kernels):
    """[{op_type, total_us, share_pct, kernels, occurrences}] over kernel-table rows (HostReport["kernels"]),
    largest time first, only the kinds present; share_pct is of all kernel time."""
    totals = {}
    for row in kernels:
        kind = op_type(row.get("name"), row.get("op_name"))
        entry = totals.setdefault(kind, {"op_type": kind, "total_us": 0.0, "kernels": 0, "occurrences": 0})
        entry["total_us"] += float(row.get("total_us") or 0.0)
        entry["kernels"] += 1
        entry["occurrences"] += int(row.get("occurrences") or 0)
    grand = sum(entry["total_us"] for entry in totals.values())
    out = []
    for entry in sorted(totals.values(), key=lambda e: (-e["total_us"], OP_TYPES.index(e["op_type"]))):
        share = 100.0 * entry["total_us"] / grand if grand > 0 else None
        out.append(
            {
                **entry,
                "total_us": round(entry["total_us"], 3),
                "share_pct": round(share, 2) if share is not None else None,
            }
        )
    return out
