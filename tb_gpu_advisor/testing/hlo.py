"""HloModuleBuilder: small XLA HLO modules (serialized HloProto) for traces with embedded HLO."""

import itertools
import json

from tb_gpu_advisor.readers.hlo import schema

# xla.PrimitiveType numbers of the element types tests use.
ELEMENT_TYPES = {"pred": 1, "s8": 2, "s32": 4, "u8": 6, "u32": 8, "f16": 10, "f32": 11, "bf16": 16, "f8e4m3fn": 20}
_TUPLE = 13


def shape(dtype, *dims):
    """A ShapeProto of an array with the default (row-major) layout: shape("bf16", 4, 4); a scalar is shape("f32")."""
    return schema.ShapeProto(
        element_type=ELEMENT_TYPES[dtype],
        dimensions=list(dims),
        layout=schema.LayoutProto(minor_to_major=list(range(len(dims) - 1, -1, -1))),
    )


def tuple_shape(*leaves):
    return schema.ShapeProto(element_type=_TUPLE, tuple_shapes=list(leaves))


class Computation:
    """One computation being built; instructions return their HloInstructionProto."""

    def __init__(self, module, name, computation_id):
        self._module = module
        self.proto = module.proto.computations.add(name=name, id=computation_id)
        self.parameters = []

    def add(self, name, opcode, result_shape, operands=(), **fields):
        instruction = self.proto.instructions.add(
            name=name, opcode=opcode, id=self._module.next_id(), operand_ids=[o.id for o in operands]
        )
        instruction.shape.CopyFrom(result_shape)
        for key, value in fields.items():
            if key == "called":
                instruction.called_computation_ids.extend(c.proto.id for c in value)
            elif key == "backend_config":
                instruction.backend_config = json.dumps(value).encode()
            elif key in (
                "dot_dimension_numbers",
                "convolution_dimension_numbers",
                "window",
                "collective_device_list",
                "mesh_axes_replica_group_list",
            ):
                getattr(instruction, key).CopyFrom(value)
            elif isinstance(value, (list, tuple)):
                getattr(instruction, key).extend(value)
            else:
                setattr(instruction, key, value)
        self.proto.root_id = instruction.id
        return instruction

    def parameter(self, name, result_shape):
        instruction = self.add(name, "parameter", result_shape, parameter_number=len(self.parameters))
        self.parameters.append(instruction)
        return instruction

    def seal(self):
        """Fills the program shape (parameters in order, root result) XLA requires of a computation."""
        program = self.proto.program_shape
        del program.parameters[:]
        del program.parameter_names[:]
        program.parameters.extend(p.shape for p in self.parameters)
        program.parameter_names.extend(p.name for p in self.parameters)
        root = next(i for i in self.proto.instructions if i.id == self.proto.root_id)
        program.result.CopyFrom(root.shape)
        return program


class HloModuleBuilder:
    """An HloModuleProto with an entry computation `main`; `to_bytes()` is the HloProto a profile stores."""

    def __init__(self, name="jit_train_step", module_id=1):
        self.proto = schema.HloModuleProto(name=name, id=module_id, entry_computation_name="main")
        self._ids = itertools.count(1)
        self._computations = itertools.count(1)
        self._all = []
        self.entry = self.computation("main")
        self.proto.entry_computation_id = self.entry.proto.id

    def next_id(self):
        return next(self._ids)

    def computation(self, name):
        computation = Computation(self, name, next(self._computations))
        self._all.append(computation)
        return computation

    def to_bytes(self):
        for computation in self._all:
            computation.seal()
        self.proto.host_program_shape.CopyFrom(self.entry.proto.program_shape)
        module = schema.HloModuleProto()
        module.CopyFrom(self.proto)
        # XLA reads computations callees first: the entry computation goes last.
        ordered = [c for c in module.computations if c.id != module.entry_computation_id]
        ordered += [c for c in module.computations if c.id == module.entry_computation_id]
        copies = [schema.HloComputationProto.FromString(c.SerializeToString()) for c in ordered]
        del module.computations[:]
        module.computations.extend(copies)
        return schema.HloProto(hlo_module=module).SerializeToString(deterministic=True)


def replica_groups(*groups):
    """The `replica_groups` of a collective: replica_groups((0, 1, 2, 3)) is one group of four devices."""
    return [schema.ReplicaGroup(replica_ids=list(group)) for group in groups]


def dot_numbers(lhs_contracting, rhs_contracting, lhs_batch=(), rhs_batch=()):
    return schema.DotDimensionNumbers(
        lhs_contracting_dimensions=list(lhs_contracting),
        rhs_contracting_dimensions=list(rhs_contracting),
        lhs_batch_dimensions=list(lhs_batch),
        rhs_batch_dimensions=list(rhs_batch),
    )


def dot_numbers_json(lhs_contracting, rhs_contracting, lhs_batch=(), rhs_batch=()):
    """Dot dimension numbers as XLA writes them in a backend config (decimal strings)."""
    return {
        "lhs_contracting_dimensions": [str(d) for d in lhs_contracting],
        "rhs_contracting_dimensions": [str(d) for d in rhs_contracting],
        "lhs_batch_dimensions": [str(d) for d in lhs_batch],
        "rhs_batch_dimensions": [str(d) for d in rhs_batch],
    }


def gemm_config(lhs_contracting, rhs_contracting, lhs_batch=(), rhs_batch=()):
    """The backend config of a `__cublas$gemm` / `__cublas$lt$matmul` custom-call."""
    return {
        "operation_queue_id": "0",
        "gemm_backend_config": {
            "alpha_real": 1,
            "beta": 0,
            "epilogue": "DEFAULT",
            "dot_dimension_numbers": dot_numbers_json(lhs_contracting, rhs_contracting, lhs_batch, rhs_batch),
        },
    }


def fmha_config(batch, heads, seq_q, seq_kv, mask_type="NO_MASK", layout_bthd=True):
    """The backend config of a `__cudnn$fmha*` custom-call as JAX writes it (BTNH or BNTH layout)."""
    if layout_bthd:
        bmm1, bmm2 = dot_numbers_json((3,), (3,), (0, 2), (0, 2)), dot_numbers_json((3,), (1,), (0, 1), (0, 2))
    else:
        bmm1, bmm2 = dot_numbers_json((3,), (3,), (0, 1), (0, 1)), dot_numbers_json((3,), (2,), (0, 1), (0, 1))
    return {
        "operation_queue_id": "0",
        "cudnn_fmha_backend_config": {
            "fmha_scale": 0.125,
            "dropout_rate": 0,
            "is_flash_attention": True,
            "mask_type": mask_type,
            "intermediate_tensor_shape": {
                "element_type": "BF16",
                "dimensions": [str(batch), str(heads), str(seq_q), str(seq_kv)],
            },
            "bmm1_dot_dimension_numbers": bmm1,
            "bmm2_dot_dimension_numbers": bmm2,
        },
    }


def single_op_module(module_name, thunk_name, opcode, operands=2):
    """The module JAX compiles for one jnp op called outside jit (`jit_add`): its entry runs one fusion, named
    `thunk_name` as XLA's CPU runtime names that fusion's thunk, around `opcode` on f32[32,64] operands; `dot`
    multiplies f32[32,16] by f32[16,64]."""
    module = HloModuleBuilder(module_name)
    body = module.computation(f"{thunk_name}_computation")
    if opcode == "dot":
        inputs = [shape("f32", 32, 16), shape("f32", 16, 64)]
        fields = {"dot_dimension_numbers": dot_numbers([1], [0])}
    else:
        inputs, fields = [shape("f32", 32, 64)] * operands, {}
    params = [body.parameter(f"p{i}", s) for i, s in enumerate(inputs)]
    body.add(opcode, opcode, shape("f32", 32, 64), params, **fields)
    args = [module.entry.parameter(f"arg{i}", s) for i, s in enumerate(inputs)]
    module.entry.add(
        thunk_name,
        "fusion",
        shape("f32", 32, 64),
        args,
        called=[body],
        fusion_kind="kCustom" if opcode == "dot" else "kLoop",
    )
    return module
