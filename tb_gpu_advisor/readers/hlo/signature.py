"""What a compiled XLA program takes and returns: its entry computation's parameters and result arrays."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import DecodeError

from tb_gpu_advisor.readers.hlo.schema import HloProto
from tb_gpu_advisor.readers.hlo.shapes import TUPLE, type_name


@dataclass(frozen=True)
class Signature:
    """An HLO module's entry computation: parameters in order and the array leaves of its result."""

    module: str
    parameters: tuple  # ((name, element type name, dims), ...); a tuple parameter's leaves as `name.i`
    results: tuple  # ((element type name, dims), ...)
    devices: int = 1  # the devices one run spans: replicas (pmap) x partitions (SPMD) of its device assignment
    # per parameter leaf: the shards its leading dimension is split into (1: whole on each device, replicated or on
    # one device), None where the program records no sharding
    leading_shards: tuple = ()


# xla.OpSharding.Type values.
_REPLICATED, _MAXIMAL, _TUPLE_SHARDING, _TILED = 0, 1, 2, 3


def _array(shape):
    return type_name(shape.element_type), tuple(int(d) for d in shape.dimensions)


def _leaves(shape):
    if shape.element_type != TUPLE:
        return [shape]
    return [leaf for inner in shape.tuple_shapes for leaf in _leaves(inner)]


def entry_signature(data: bytes) -> Signature | None:
    """The Signature of a serialized HloProto, or None if it does not decode or has no entry computation."""
    try:
        module = HloProto.FromString(data).hlo_module
    except (DecodeError, RuntimeError, ValueError):
        return None
    computations = list(module.computations)
    entry = next(
        (c for c in computations if module.entry_computation_id and c.id == module.entry_computation_id), None
    ) or next(
        (c for c in computations if module.entry_computation_name and c.name == module.entry_computation_name), None
    )
    if entry is None:
        return None
    parameters, root = [], None
    for instruction in entry.instructions:
        if instruction.opcode == "parameter":
            parameters.append(instruction)
        if instruction.id == entry.root_id:
            root = instruction
    if root is None:
        return None
    found, shards = [], []
    module_shardings = list(module.spmd_parameters_shardings)
    for instruction in sorted(parameters, key=lambda i: i.parameter_number):
        leaves = _leaves(instruction.shape)
        sharding = (
            instruction.sharding
            if instruction.HasField("sharding")
            else module_shardings[instruction.parameter_number]
            if instruction.parameter_number < len(module_shardings)
            else None
        )
        split = _leaf_shards(sharding, len(leaves))
        if instruction.shape.element_type == TUPLE:
            found += [(f"{instruction.name}.{i}", *_array(leaf)) for i, leaf in enumerate(leaves)]
        else:
            found.append((instruction.name, *_array(leaves[0])))
        shards += split
    assignment = module.device_assignment
    devices = max(assignment.replica_count, 1) * max(assignment.computation_count, 1)
    return Signature(
        module=module.name,
        parameters=tuple(found),
        results=tuple(_array(leaf) for leaf in _leaves(root.shape)),
        devices=devices,
        leading_shards=tuple(shards),
    )


def _leaf_shards(sharding, leaves):
    """The shards of each leaf's leading dimension under an OpSharding (None: not recorded or not tiled plainly)."""
    if sharding is None:
        return [None] * leaves
    if sharding.type == _TUPLE_SHARDING:
        inner = list(sharding.tuple_shardings)
        return [_one_shards(inner[i]) if i < len(inner) else None for i in range(leaves)]
    return [_one_shards(sharding)] * leaves


def _one_shards(sharding):
    if sharding.type in (_REPLICATED, _MAXIMAL):
        return 1
    if sharding.type == _TILED and sharding.tile_assignment_dimensions:
        return int(sharding.tile_assignment_dimensions[0])
    return None  # manual (shard_map) or unknown: the program's view of the array is not the global one
