"""What a compiled XLA program takes and returns: its entry computation's parameters and result arrays."""

from dataclasses import dataclass

from google.protobuf.message import DecodeError

from tb_gpu_advisor.hlo.schema import HloProto
from tb_gpu_advisor.hlo.shapes import TUPLE, type_name


@dataclass(frozen=True)
class Signature:
    """An HLO module's entry computation: parameters in order and the array leaves of its result."""

    module: str
    parameters: tuple  # ((name, element type name, dims), ...); a tuple parameter's leaves as `name.i`
    results: tuple  # ((element type name, dims), ...)


def _array(shape):
    return type_name(shape.element_type), tuple(int(d) for d in shape.dimensions)


def _leaves(shape):
    if shape.element_type != TUPLE:
        return [shape]
    return [leaf for inner in shape.tuple_shapes for leaf in _leaves(inner)]


def entry_signature(data):
    """The Signature of a serialized HloProto, or None if it does not decode or has no entry computation."""
    try:
        module = HloProto.FromString(data).hlo_module
    except (DecodeError, RuntimeError, ValueError):
        return None
    computations = list(module.computations)
    entry = (next((c for c in computations if module.entry_computation_id and c.id == module.entry_computation_id),
                  None)
             or next((c for c in computations if module.entry_computation_name
                      and c.name == module.entry_computation_name), None))
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
    found = []
    for instruction in sorted(parameters, key=lambda i: i.parameter_number):
        leaves = _leaves(instruction.shape)
        if instruction.shape.element_type == TUPLE:
            found += [(f"{instruction.name}.{i}", *_array(leaf)) for i, leaf in enumerate(leaves)]
        else:
            found.append((instruction.name, *_array(leaves[0])))
    return Signature(module=module.name, parameters=tuple(found),
                     results=tuple(_array(leaf) for leaf in _leaves(root.shape)))
