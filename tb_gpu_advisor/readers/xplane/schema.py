"""Our own protobuf schema of XPlane (tsl/profiler/protobuf/xplane.proto), built at import time.

Two families of message classes share the field numbers of the real schema:
- the full messages (`XSpace`, `XPlane`, `XLine`, `XEvent`, `XStat`, ...) used to write traces;
- lazy "shell" messages that declare nested messages as raw `bytes`, so a reader can split a file into
  planes (and a plane into lines) without decoding what no analysis asks for.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_PACKAGE = "tb_gpu_advisor.readers.xplane"
_F = descriptor_pb2.FieldDescriptorProto

_INT64, _UINT64, _DOUBLE = _F.TYPE_INT64, _F.TYPE_UINT64, _F.TYPE_DOUBLE
_STRING, _BYTES, _MESSAGE = _F.TYPE_STRING, _F.TYPE_BYTES, _F.TYPE_MESSAGE
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED


def _message(file_proto, name, fields, oneofs=()):
    """Adds a message; `fields` holds (name, number, type, label, type_name or None, oneof index or None)."""
    msg = file_proto.message_type.add(name=name)
    for oneof in oneofs:
        msg.oneof_decl.add(name=oneof)
    for fname, number, ftype, label, type_name, oneof_index in fields:
        field = msg.field.add(name=fname, number=number, type=ftype, label=label)
        if type_name:
            field.type_name = f".{_PACKAGE}.{type_name}"
        if oneof_index is not None:
            field.oneof_index = oneof_index
    return msg


def _map_entry(parent, entry_name, value_type):
    entry = parent.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=_INT64, label=_OPTIONAL)
    entry.field.add(name="value", number=2, type=_MESSAGE, label=_OPTIONAL, type_name=f".{_PACKAGE}.{value_type}")
    return f"{parent.name}.{entry_name}"


def _build_file():
    fp = descriptor_pb2.FileDescriptorProto(name="tb_gpu_advisor_xplane.proto", package=_PACKAGE, syntax="proto3")
    R, O = _REPEATED, _OPTIONAL  # noqa: E741 (one letter keeps the field tables below readable)
    _message(
        fp,
        "XStat",
        [
            ("metadata_id", 1, _INT64, O, None, None),
            ("double_value", 2, _DOUBLE, O, None, 0),
            ("uint64_value", 3, _UINT64, O, None, 0),
            ("int64_value", 4, _INT64, O, None, 0),
            ("str_value", 5, _STRING, O, None, 0),
            ("bytes_value", 6, _BYTES, O, None, 0),
            ("ref_value", 7, _UINT64, O, None, 0),
        ],
        oneofs=("value",),
    )
    _message(
        fp,
        "XEvent",
        [
            ("metadata_id", 1, _INT64, O, None, None),
            ("offset_ps", 2, _INT64, O, None, 0),
            ("num_occurrences", 5, _INT64, O, None, 0),
            ("duration_ps", 3, _INT64, O, None, None),
            ("stats", 4, _MESSAGE, R, "XStat", None),
        ],
        oneofs=("data",),
    )
    _message(
        fp,
        "XLine",
        [
            ("id", 1, _INT64, O, None, None),
            ("display_id", 10, _INT64, O, None, None),
            ("name", 2, _STRING, O, None, None),
            ("display_name", 11, _STRING, O, None, None),
            ("timestamp_ns", 3, _INT64, O, None, None),
            ("duration_ps", 9, _INT64, O, None, None),
            ("events", 4, _MESSAGE, R, "XEvent", None),
        ],
    )
    _message(
        fp,
        "XEventMetadata",
        [
            ("id", 1, _INT64, O, None, None),
            ("name", 2, _STRING, O, None, None),
            ("display_name", 4, _STRING, O, None, None),
            ("metadata", 3, _BYTES, O, None, None),
            ("stats", 5, _MESSAGE, R, "XStat", None),
            ("child_id", 6, _INT64, R, None, None),
        ],
    )
    _message(
        fp,
        "XStatMetadata",
        [
            ("id", 1, _INT64, O, None, None),
            ("name", 2, _STRING, O, None, None),
            ("description", 3, _STRING, O, None, None),
        ],
    )
    plane = _message(
        fp,
        "XPlane",
        [
            ("id", 1, _INT64, O, None, None),
            ("name", 2, _STRING, O, None, None),
            ("lines", 3, _MESSAGE, R, "XLine", None),
            ("stats", 6, _MESSAGE, R, "XStat", None),
        ],
    )
    for number, entry, value in (
        (4, "EventMetadataEntry", "XEventMetadata"),
        (5, "StatMetadataEntry", "XStatMetadata"),
    ):
        type_name = _map_entry(plane, entry, value)
        field_name = "event_metadata" if number == 4 else "stat_metadata"
        plane.field.add(name=field_name, number=number, type=_MESSAGE, label=R, type_name=f".{_PACKAGE}.{type_name}")
    _message(
        fp,
        "XSpace",
        [
            ("planes", 1, _MESSAGE, R, "XPlane", None),
            ("errors", 2, _STRING, R, None, None),
            ("warnings", 3, _STRING, R, None, None),
            ("hostnames", 4, _STRING, R, None, None),
        ],
    )
    # Lazy shells: the same field numbers, nested messages kept as undecoded bytes.
    _message(
        fp,
        "XSpaceShell",
        [
            ("planes", 1, _BYTES, R, None, None),
            ("errors", 2, _STRING, R, None, None),
            ("warnings", 3, _STRING, R, None, None),
            ("hostnames", 4, _STRING, R, None, None),
        ],
    )
    _message(
        fp,
        "XPlaneName",
        [
            ("id", 1, _INT64, O, None, None),
            ("name", 2, _STRING, O, None, None),
        ],
    )
    plane_shell = _message(
        fp,
        "XPlaneShell",
        [
            ("id", 1, _INT64, O, None, None),
            ("name", 2, _STRING, O, None, None),
            ("lines", 3, _BYTES, R, None, None),
            ("stats", 6, _MESSAGE, R, "XStat", None),
        ],
    )
    for number, entry, value in (
        (4, "EventMetadataEntry", "XEventMetadata"),
        (5, "StatMetadataEntry", "XStatMetadata"),
    ):
        type_name = _map_entry(plane_shell, entry, value)
        field_name = "event_metadata" if number == 4 else "stat_metadata"
        plane_shell.field.add(
            name=field_name, number=number, type=_MESSAGE, label=R, type_name=f".{_PACKAGE}.{type_name}"
        )
    _message(
        fp,
        "XLineHeader",
        [
            ("id", 1, _INT64, O, None, None),
            ("display_id", 10, _INT64, O, None, None),
            ("name", 2, _STRING, O, None, None),
            ("display_name", 11, _STRING, O, None, None),
            ("timestamp_ns", 3, _INT64, O, None, None),
            ("duration_ps", 9, _INT64, O, None, None),
        ],
    )
    return fp


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_build_file())


def _cls(name):
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{_PACKAGE}.{name}"))


XStat = _cls("XStat")
XEvent = _cls("XEvent")
XLine = _cls("XLine")
XEventMetadata = _cls("XEventMetadata")
XStatMetadata = _cls("XStatMetadata")
XPlane = _cls("XPlane")
XSpace = _cls("XSpace")
XSpaceShell = _cls("XSpaceShell")
XPlaneName = _cls("XPlaneName")
XPlaneShell = _cls("XPlaneShell")
XLineHeader = _cls("XLineHeader")
