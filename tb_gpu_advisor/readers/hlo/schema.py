"""Our own protobuf schema of the parts of XLA's HloProto (xla/service/hlo.proto, xla/xla_data.proto) that
costing reads, plus the few a module needs to be valid for XLA (layouts, program shapes, parameter numbers,
written by testing.hlo; parameter numbers are also read), the replica groups of collectives and how a program is
split over devices (device assignment, parameter shardings), built at import time with the real field numbers; the parser skips unknown fields."""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_PACKAGE = "tb_gpu_advisor.readers.hlo"
_F = descriptor_pb2.FieldDescriptorProto
_INT32, _INT64, _BOOL = _F.TYPE_INT32, _F.TYPE_INT64, _F.TYPE_BOOL
_STRING, _BYTES, _MESSAGE = _F.TYPE_STRING, _F.TYPE_BYTES, _F.TYPE_MESSAGE
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED


def _message(file_proto, name, fields):
    """Adds a message; `fields` holds (name, number, type, repeated, message type name or None)."""
    msg = file_proto.message_type.add(name=name)
    for fname, number, ftype, repeated, type_name in fields:
        field = msg.field.add(name=fname, number=number, type=ftype, label=_REPEATED if repeated else _OPTIONAL)
        if type_name:
            field.type_name = f".{_PACKAGE}.{type_name}"


def _build_file():
    fp = descriptor_pb2.FileDescriptorProto(name="tb_gpu_advisor_hlo.proto", package=_PACKAGE, syntax="proto3")
    _message(fp, "LayoutProto", [("minor_to_major", 1, _INT64, True, None)])
    _message(
        fp,
        "ShapeProto",
        [
            ("element_type", 2, _INT32, False, None),  # xla.PrimitiveType, an open enum on the wire
            ("dimensions", 3, _INT64, True, None),
            ("tuple_shapes", 4, _MESSAGE, True, "ShapeProto"),
            ("layout", 5, _MESSAGE, False, "LayoutProto"),
        ],
    )
    _message(
        fp,
        "ProgramShapeProto",
        [
            ("parameters", 1, _MESSAGE, True, "ShapeProto"),
            ("result", 2, _MESSAGE, False, "ShapeProto"),
            ("parameter_names", 3, _STRING, True, None),
        ],
    )
    _message(
        fp,
        "DotDimensionNumbers",
        [
            ("lhs_contracting_dimensions", 1, _INT64, True, None),
            ("rhs_contracting_dimensions", 2, _INT64, True, None),
            ("lhs_batch_dimensions", 3, _INT64, True, None),
            ("rhs_batch_dimensions", 4, _INT64, True, None),
        ],
    )
    _message(
        fp,
        "ConvolutionDimensionNumbers",
        [
            ("kernel_input_feature_dimension", 3, _INT64, False, None),
            ("kernel_output_feature_dimension", 4, _INT64, False, None),
            ("kernel_spatial_dimensions", 6, _INT64, True, None),
            ("input_batch_dimension", 7, _INT64, False, None),
            ("input_feature_dimension", 8, _INT64, False, None),
            ("output_batch_dimension", 9, _INT64, False, None),
            ("output_feature_dimension", 10, _INT64, False, None),
            ("input_spatial_dimensions", 11, _INT64, True, None),
            ("output_spatial_dimensions", 12, _INT64, True, None),
        ],
    )
    _message(
        fp,
        "WindowDimension",
        [
            ("size", 1, _INT64, False, None),
            ("stride", 2, _INT64, False, None),
            ("padding_low", 3, _INT64, False, None),
            ("padding_high", 4, _INT64, False, None),
            ("window_dilation", 5, _INT64, False, None),
            ("base_dilation", 6, _INT64, False, None),
            ("window_reversal", 7, _BOOL, False, None),
        ],
    )
    _message(fp, "Window", [("dimensions", 1, _MESSAGE, True, "WindowDimension")])
    _message(fp, "ReplicaGroup", [("replica_ids", 1, _INT64, True, None)])
    _message(fp, "SourceTarget", [("source", 1, _INT64, False, None), ("target", 2, _INT64, False, None)])
    _message(
        fp,
        "IotaReplicaGroupListProto",
        [
            ("num_replica_groups", 1, _INT64, False, None),
            ("num_devices_per_group", 2, _INT64, False, None),
        ],
    )
    _message(
        fp,
        "CollectiveDeviceListProto",
        [
            ("replica_groups", 1, _MESSAGE, True, "ReplicaGroup"),
            ("iota_replica_group_list", 2, _MESSAGE, False, "IotaReplicaGroupListProto"),
        ],
    )
    # xla.MeshProto.MeshAxis and xla.AxisRefProto.SubAxis, declared at the top level (the wire is the same).
    _message(fp, "MeshAxis", [("name", 1, _STRING, False, None), ("size", 2, _INT64, False, None)])
    _message(fp, "MeshProto", [("axes", 1, _MESSAGE, True, "MeshAxis")])
    _message(fp, "SubAxis", [("pre_size", 1, _INT64, False, None), ("size", 2, _INT64, False, None)])
    _message(
        fp,
        "AxisRefProto",
        [
            ("mesh_axis_index", 1, _INT64, False, None),
            ("sub_axis_info", 2, _MESSAGE, False, "SubAxis"),
        ],
    )
    _message(
        fp,
        "MeshAxesReplicaGroupListProto",
        [
            ("mesh", 1, _MESSAGE, False, "MeshProto"),
            ("axes", 2, _MESSAGE, True, "AxisRefProto"),
        ],
    )
    # xla.OpSharding: how an array is split over devices (type REPLICATED 0, MAXIMAL 1, TUPLE 2, OTHER 3 (tiled)).
    _message(
        fp,
        "OpSharding",
        [
            ("type", 1, _INT32, False, None),
            ("tile_assignment_dimensions", 3, _INT64, True, None),
            ("tuple_shardings", 5, _MESSAGE, True, "OpSharding"),
            ("replicate_on_last_tile_dim", 6, _BOOL, False, None),
        ],
    )
    _message(
        fp,
        "DeviceAssignmentProto",
        [
            ("replica_count", 1, _INT32, False, None),
            ("computation_count", 2, _INT32, False, None),
        ],
    )
    # Operand precisions are the enum xla.PrecisionConfig.Precision: DEFAULT 0, HIGH 1, HIGHEST 2.
    _message(fp, "PrecisionConfig", [("operand_precision", 1, _INT64, True, None)])
    _message(
        fp,
        "HloInstructionProto",
        [
            ("name", 1, _STRING, False, None),
            ("opcode", 2, _STRING, False, None),
            ("shape", 3, _MESSAGE, False, "ShapeProto"),
            ("parameter_number", 9, _INT64, False, None),
            ("fusion_kind", 11, _STRING, False, None),
            ("tuple_index", 13, _INT64, False, None),
            ("dimensions", 14, _INT64, True, None),
            ("window", 15, _MESSAGE, False, "Window"),
            ("convolution_dimension_numbers", 16, _MESSAGE, False, "ConvolutionDimensionNumbers"),
            ("custom_call_target", 28, _STRING, False, None),
            ("dot_dimension_numbers", 30, _MESSAGE, False, "DotDimensionNumbers"),
            ("id", 35, _INT64, False, None),
            ("operand_ids", 36, _INT64, True, None),
            ("called_computation_ids", 38, _INT64, True, None),
            ("sharding", 40, _MESSAGE, False, "OpSharding"),
            ("backend_config", 43, _BYTES, False, None),
            ("replica_groups", 49, _MESSAGE, True, "ReplicaGroup"),
            ("feature_group_count", 50, _INT64, False, None),
            ("precision_config", 51, _MESSAGE, False, "PrecisionConfig"),
            ("source_target_pairs", 52, _MESSAGE, True, "SourceTarget"),
            ("batch_group_count", 58, _INT64, False, None),
            ("collective_device_list", 87, _MESSAGE, False, "CollectiveDeviceListProto"),
            ("mesh_axes_replica_group_list", 93, _MESSAGE, False, "MeshAxesReplicaGroupListProto"),
        ],
    )
    _message(
        fp,
        "HloComputationProto",
        [
            ("name", 1, _STRING, False, None),
            ("instructions", 2, _MESSAGE, True, "HloInstructionProto"),
            ("program_shape", 4, _MESSAGE, False, "ProgramShapeProto"),
            ("id", 5, _INT64, False, None),
            ("root_id", 6, _INT64, False, None),
        ],
    )
    _message(
        fp,
        "HloModuleProto",
        [
            ("name", 1, _STRING, False, None),
            ("entry_computation_name", 2, _STRING, False, None),
            ("computations", 3, _MESSAGE, True, "HloComputationProto"),
            ("host_program_shape", 4, _MESSAGE, False, "ProgramShapeProto"),
            ("id", 5, _INT64, False, None),
            ("entry_computation_id", 6, _INT64, False, None),
            ("spmd_parameters_shardings", 14, _MESSAGE, True, "OpSharding"),
            ("device_assignment", 15, _MESSAGE, False, "DeviceAssignmentProto"),
        ],
    )
    _message(fp, "HloProto", [("hlo_module", 1, _MESSAGE, False, "HloModuleProto")])
    return fp


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_build_file())


def _cls(name):
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{_PACKAGE}.{name}"))


LayoutProto = _cls("LayoutProto")
ShapeProto = _cls("ShapeProto")
ProgramShapeProto = _cls("ProgramShapeProto")
DotDimensionNumbers = _cls("DotDimensionNumbers")
ConvolutionDimensionNumbers = _cls("ConvolutionDimensionNumbers")
WindowDimension = _cls("WindowDimension")
Window = _cls("Window")
ReplicaGroup = _cls("ReplicaGroup")
SourceTarget = _cls("SourceTarget")
IotaReplicaGroupListProto = _cls("IotaReplicaGroupListProto")
CollectiveDeviceListProto = _cls("CollectiveDeviceListProto")
MeshAxis = _cls("MeshAxis")
MeshProto = _cls("MeshProto")
SubAxis = _cls("SubAxis")
AxisRefProto = _cls("AxisRefProto")
MeshAxesReplicaGroupListProto = _cls("MeshAxesReplicaGroupListProto")
OpSharding = _cls("OpSharding")
DeviceAssignmentProto = _cls("DeviceAssignmentProto")
PrecisionConfig = _cls("PrecisionConfig")
HloInstructionProto = _cls("HloInstructionProto")
HloComputationProto = _cls("HloComputationProto")
HloModuleProto = _cls("HloModuleProto")
HloProto = _cls("HloProto")
