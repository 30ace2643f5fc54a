"""Costs of the HLO instructions kernels name: (program id, `hlo_op`) -> OpCost, parsing only the modules asked for."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from google.protobuf.message import DecodeError

from tb_gpu_advisor.readers.hlo.cost import ModuleIndex, instruction_cost
from tb_gpu_advisor.readers.hlo.op_cost import OpCost
from tb_gpu_advisor.readers.hlo.schema import HloProto

logger = logging.getLogger(__name__)


def parse_module(data: bytes) -> ModuleIndex | None:
    """ModuleIndex of a serialized HloProto, or None if it does not decode."""
    try:
        return ModuleIndex(HloProto.FromString(data).hlo_module)
    except (DecodeError, RuntimeError, ValueError):
        return None


def op_costs(
    hlo_protos: Mapping[int, bytes],
    pairs: Iterable[tuple[int, str]],
    modules: dict[int, ModuleIndex | None] | None = None,
) -> dict[tuple[int, str], OpCost | None]:
    """{(program id, instruction name): OpCost or None} for the pairs whose module the trace carries; `modules`
    ({program id: ModuleIndex or None}) caches the parsed modules and is filled as they are parsed."""
    costs: dict[tuple[int, str], OpCost | None] = {}
    modules = {} if modules is None else modules
    for program_id, name in pairs:
        if program_id not in hlo_protos:
            continue
        if program_id not in modules:
            modules[program_id] = parse_module(hlo_protos[program_id])
            if modules[program_id] is None:
                logger.info("HLO module of program %s does not decode; its kernels are not costed", program_id)
        index = modules[program_id]
        instruction = index.by_name.get(name) if index is not None else None
        costs[(program_id, name)] = (
            instruction_cost(instruction, index) if index is not None and instruction is not None else None
        )
    return costs
