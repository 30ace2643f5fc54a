"""What kind of operation a kernel performs, from its name and op: matmul/conv, element-wise, reduction,
collective, copy, or other; and the kernel table's time rolled up by that kind."""

import re

from tb_gpu_advisor.analysis.kernel_names import (
    is_nccl,
    is_runtime_copy,
    is_tensor_core_eligible,
    kernel_class,
    without_parameters,
)

OP_TYPES = ("matmul_conv", "elementwise", "reduction", "collective", "copy", "other")

_COLLECTIVE_OP = re.compile(
    r"all-?reduce|all-?gather|reduce-?scatter|all-?to-?all|collective-permute|"
    r"Collective(Reduce|Gather|Bcast)|Nccl|c10d::|allreduce",
    re.IGNORECASE,
)
_COPY = re.compile(
    r"copy|memcpy|memset|transpose|concat|\bpad\b|_pad_|dynamic[-_]?(update[-_]?)?slice|"
    r"gather|scatter|shuffle|layout|fill|permute",
    re.IGNORECASE,
)
_MATMUL = re.compile(
    r"gemm|gemv|matmul|cutlass|cublas|cudnn|xmma|conv|implicit|winograd|wgrad|dgrad|"
    r"^dot|[_.]dot\b|dot_general|einsum|Cijk_",
    re.IGNORECASE,
)
_REDUCTION = re.compile(r"reduc|argmax|argmin|softmax|norm|L2Loss|BiasGrad|topk|cumsum|\bscan", re.IGNORECASE)
# Op names of reductions whose kernels carry no such word (TensorFlow's Sum, Mean, Max ops); checked after the
# element-wise kernel names, since Eigen's element-wise add is `scalar_sum_op`.
_REDUCTION_OP = re.compile(r"^(Sum|Mean|Max|Min|Prod|All|Any)(_\d+)?$")  # the op name's last path component
_REDUCE_CALL = re.compile(r"reduce_(sum|mean|max|min)")
_ELEMENTWISE = re.compile(
    r"^loop_|elementwise|element_wise|unrolled|vectorized|Cwise|add|mul|relu|gelu|"
    r"sigmoid|tanh|exp|cast|convert",
    re.IGNORECASE,
)


def op_type(kernel_name, op_name=None):
    """One of OP_TYPES for a kernel row: collectives and copies first (their names say so), then matrix
    multiplies and convolutions, reductions, element-wise work; what none of these names is `other`."""
    name = without_parameters(kernel_name or "")
    op = op_name or ""
    if is_nccl(name) or _COLLECTIVE_OP.search(op):
        return "collective"
    if is_runtime_copy(name) or _COPY.search(name) or (_COPY.search(op) and not _MATMUL.search(name)):
        return "copy"
    if _MATMUL.search(name) or is_tensor_core_eligible(op, kernel_name or ""):
        return "matmul_conv"
    if _REDUCTION.search(name) or _REDUCTION.search(op):
        return "reduction"
    if kernel_class(kernel_name or "") == "elementwise" or _ELEMENTWISE.search(name):
        return "elementwise"
    if _REDUCTION_OP.match(op.rpartition("/")[2]) or _REDUCE_CALL.search(op):
        return "reduction"
    if _ELEMENTWISE.search(op):
        return "elementwise"
    return "other"


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
