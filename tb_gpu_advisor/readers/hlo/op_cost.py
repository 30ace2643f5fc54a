"""OpCost: the FLOPs and logical bytes of one execution of an op, and which compute roof applies."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MATRIX, VECTOR = "matrix", "vector"
# More work than this in one kernel is an impossible value (a corrupt or hostile module): not costed.
MAX_KERNEL_WORK = 10**24


@dataclass(frozen=True)
class OpCost:
    """The work of one execution of an op; `flops` or `bytes` is None when not exactly known."""

    flops: int | None
    bytes: int | None
    compute: str  # MATRIX (dot, convolution, GEMM, attention) or VECTOR: which compute roof applies
    dtype: str | None  # element type of the matrix inputs, or of the result for vector work
    method: str  # what the FLOPs were counted from
    matrix_dims: tuple | None = None  # (batch, M, N, K) of a GEMM or of a fusion's first dot
    precision: str | None = None  # the matrix op's highest operand precision: "DEFAULT", "HIGH" or "HIGHEST"


PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")  # xla.PrecisionConfig.Precision by number


def highest_precision(values: Iterable[int | str]) -> str | None:
    """The highest of operand precisions given as numbers or names; None when none is known."""
    given = [PRECISIONS.index(v) if v in PRECISIONS else v for v in values]
    ranks = [r for r in given if isinstance(r, int) and 0 <= r < len(PRECISIONS)]
    return PRECISIONS[max(ranks)] if ranks else None
