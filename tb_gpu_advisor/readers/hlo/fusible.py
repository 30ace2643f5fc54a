"""Which HLO instructions XLA folds into their neighbours when it compiles them in one program: element-wise
arithmetic and data movement (broadcast, reshape, convert, copy, transpose, ...). Dots, convolutions, reductions,
custom calls, gathers, scatters, sorts and control flow do their own work in any program."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tb_gpu_advisor.readers.hlo.cost import ELEMENTWISE, MAX_CALL_DEPTH, TRANSCENDENTAL, ModuleIndex, memoized
from tb_gpu_advisor.readers.hlo.modules import parse_module

DATA_MOVEMENT = frozenset(
    (
        "parameter",
        "constant",
        "broadcast",
        "reshape",
        "bitcast",
        "bitcast-convert",
        "transpose",
        "copy",
        "slice",
        "concatenate",
        "pad",
        "iota",
        "reverse",
        "get-tuple-element",
        "tuple",
    )
)
FUSIBLE_OPCODES = ELEMENTWISE | TRANSCENDENTAL | DATA_MOVEMENT


def is_fusible(instruction: Any, index: ModuleIndex, depth: int = 0) -> bool:
    """True when `instruction` of the module `index` (hlo.cost.ModuleIndex) is element-wise or data movement, a
    fusion counting as such when every instruction of the computations it calls is (each computation judged
    once; one missing, cyclic or nested deeper than MAX_CALL_DEPTH is kept as work)."""
    if instruction.opcode in FUSIBLE_OPCODES:
        return True
    if instruction.opcode != "fusion" or depth > MAX_CALL_DEPTH or not instruction.called_computation_ids:
        return False
    return all(
        memoized(index, "fusible", computation_id, depth, _all_fusible) is True
        for computation_id in instruction.called_computation_ids
    )


def _all_fusible(computation: Any, index: ModuleIndex, depth: int) -> bool:
    return all(is_fusible(inner, index, depth) for inner in computation.instructions)


def fusible_names(hlo_protos: Mapping[int, bytes], names: Iterable[str]) -> dict[str, bool]:
    """{name: fusible} for the names among `names` that some module of `hlo_protos` (program id -> serialized
    HloProto) gives an instruction: XLA's CPU runtime names each thunk after its instruction. A name that
    modules give to different kinds of instruction is not fusible; names no module has are left out."""
    wanted = set(names)
    found: dict[str, bool] = {}
    if not wanted:
        return found
    for data in hlo_protos.values():
        index = parse_module(data)
        if index is None:
            continue
        for name in wanted.intersection(index.by_name):
            found[name] = found.get(name, True) and is_fusible(index.by_name[name], index)
    return found
