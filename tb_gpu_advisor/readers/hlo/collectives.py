"""The collective an HLO instruction runs: its kind, operand and result bytes, element type and group size.

Sync collectives (`all-reduce`), their async pairs (`all-reduce-start` / `-done`) and collectives wrapped in
`async-start` computations are read alike: the bytes are the operands' (in) and the final result's (out, the
`-done`'s shape for async pairs), the group size the size of the replica groups when every group has the same
size, None when the instruction lists no groups (every device: the count is not in the module).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tb_gpu_advisor.readers.hlo.modules import parse_module
from tb_gpu_advisor.readers.hlo.shapes import TUPLE, byte_size, type_name

# HLO opcode -> the collective's name in NCCL-tests' terms (analysis.collective_bandwidth).
KINDS = {
    "all-reduce": "allreduce",
    "all-gather": "allgather",
    "reduce-scatter": "reducescatter",
    "all-to-all": "alltoall",
    "collective-permute": "sendrecv",
    "collective-broadcast": "broadcast",
}


@dataclass(frozen=True)
class HloCollective:
    """One collective instruction's sizes; any field None where the module does not determine it."""

    collective: str
    instruction: str  # the instruction the sizes come from (the `-start` of an async pair)
    in_bytes: int | None
    out_bytes: int | None
    dtype: str | None
    group_size: int | None


class CollectiveIndex:
    """A module's instructions with, for each async start, the `-done` that completes it."""

    def __init__(self, module_index):
        self.index = module_index
        self.done_of = {}
        for instruction in module_index.by_id.values():
            if instruction.opcode.endswith("-done") and instruction.operand_ids:
                self.done_of.setdefault(instruction.operand_ids[0], instruction)

    def collective(self, name: str) -> HloCollective | None:
        """HloCollective of the instruction `name` (or of the start its `-done` completes); None if it is not a
        collective or the module is malformed."""
        instruction = self.index.by_name.get(name)
        if instruction is None:
            return None
        try:
            return self._collective(instruction)
        except (RecursionError, ValueError, TypeError, IndexError, OverflowError, KeyError, AttributeError):
            return None

    def _collective(self, instruction):
        start = self._start(instruction)
        if start is None:
            return None
        op = self._wrapped(start) if start.opcode == "async-start" else start
        opcode = op.opcode[: -len("-start")] if op.opcode.endswith("-start") else op.opcode
        if opcode not in KINDS:
            return None
        operands = self.index.operands(start)
        if not operands:
            return None
        in_sizes = [byte_size(o.shape) for o in operands]
        done = self.done_of.get(start.id)
        if done is not None:
            out_bytes = byte_size(done.shape)
        elif op is not start or not start.opcode.endswith("-start"):
            out_bytes = byte_size(op.shape)
        else:  # a start without its done: its result is the output only when it is no tuple
            out_bytes = None if start.shape.element_type == TUPLE else byte_size(start.shape)
        return HloCollective(
            collective=KINDS[opcode],
            instruction=start.name,
            in_bytes=None if any(size is None for size in in_sizes) else sum(in_sizes),
            out_bytes=out_bytes,
            dtype=_first_type(operands[0].shape),
            group_size=group_size(op),
        )

    def _start(self, instruction):
        """The instruction that starts the collective: itself, or the start its `-done`/`async-update` follows."""
        seen = 0
        while instruction.opcode.endswith("-done") or instruction.opcode == "async-update":
            operands = self.index.operands(instruction)
            if not operands or seen > 8:
                return None
            instruction, seen = operands[0], seen + 1
        return instruction

    def _wrapped(self, start):
        """The collective an `async-start` runs: the root of its called computation."""
        computation = (
            self.index.computations.get(start.called_computation_ids[0]) if start.called_computation_ids else None
        )
        return self.index.by_id.get(computation.root_id) if computation is not None else start


def _first_type(shape):
    while shape.element_type == TUPLE and shape.tuple_shapes:
        shape = shape.tuple_shapes[0]
    return type_name(shape.element_type)


def group_size(instruction: Any) -> int | None:
    """Devices in each replica group of a collective (explicit groups, an iota list or mesh axes), the devices a
    collective-permute's pairs name; None when there are no groups or they differ in size."""
    if instruction.source_target_pairs:
        return len({device for pair in instruction.source_target_pairs for device in (pair.source, pair.target)})
    groups = list(instruction.replica_groups)
    if instruction.HasField("collective_device_list"):
        devices = instruction.collective_device_list
        if devices.HasField("iota_replica_group_list"):
            size = devices.iota_replica_group_list.num_devices_per_group
            return size if size > 0 else None
        groups = groups or list(devices.replica_groups)
    if instruction.HasField("mesh_axes_replica_group_list"):
        return _mesh_group_size(instruction.mesh_axes_replica_group_list)
    sizes = {len(group.replica_ids) for group in groups}
    return sizes.pop() if len(sizes) == 1 and 0 not in sizes else None


def _mesh_group_size(groups):
    """Product of the sizes of the mesh axes (or sub-axes) a mesh-axes replica group list names."""
    axes = groups.mesh.axes
    size = 1
    for ref in groups.axes:
        if ref.HasField("sub_axis_info"):
            size *= ref.sub_axis_info.size
        elif 0 <= ref.mesh_axis_index < len(axes):
            size *= axes[ref.mesh_axis_index].size
        else:
            return None
    return size if size > 0 and groups.axes else None


def collective_shapes(
    hlo_protos: Mapping[int, bytes], pairs: Iterable[tuple[int, str]]
) -> dict[tuple[int, str], HloCollective | None]:
    """{(program id, instruction name): HloCollective or None} for the pairs whose module the trace carries,
    parsing each module once."""
    found: dict[tuple[int, str], HloCollective | None] = {}
    modules: dict[int, CollectiveIndex | None] = {}
    for program_id, name in pairs:
        if program_id not in hlo_protos:
            continue
        if program_id not in modules:
            parsed = parse_module(hlo_protos[program_id])
            modules[program_id] = CollectiveIndex(parsed) if parsed is not None else None
        index = modules[program_id]
        found[(program_id, name)] = index.collective(name) if index is not None else None
    return found
