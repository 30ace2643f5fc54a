"""One Kineto event as the collector reads it: the few top-level values and args it uses. msgspec (compiled)
decodes them straight from the JSON text when it is installed, skipping everything else, with no dict per
event; the standard library's dicts are turned into the same records otherwise (and for what msgspec refuses).

Absent values read as they did from a dict: None (`dur`: 0), and UNSET for the args whose presence counts.
Long list values (shapes, types, the call stack) stay undecoded (`msgspec.Raw`) until a rule needs them, and so
do a batch's times (BatchEvent), read for the whole batch at once.
"""

import json
from decimal import Decimal
from typing import Any

try:
    import msgspec
except ImportError:  # the standard library path alone: same records, built from dicts
    msgspec = None  # type: ignore[assignment]

# attribute -> (the JSON key in `args`, kept undecoded until needed, read only for its presence)
ARG_FIELDS = {
    "device": ("device", False, False),
    "stream": ("stream", False, False),
    "correlation": ("correlation", False, False),
    "registers": ("registers per thread", False, False),
    "shared": ("shared memory", False, False),
    "occupancy": ("est. achieved occupancy %", False, False),
    "grid": ("grid", True, False),
    "block": ("block", True, False),
    "bytes": ("bytes", False, False),
    "dims": ("Input Dims", True, True),
    "types": ("Input type", True, False),
    "stack": ("Call stack", True, True),
    "flops": ("flops", False, True),
    "concrete": ("Concrete Inputs", True, False),
    "dtype": ("dtype", False, False),
    "in_nelems": ("In msg nelems", False, False),
    "out_nelems": ("Out msg nelems", False, False),
    "collective": ("Collective name", False, False),
    "group": ("Group size", False, False),
    "device_type": ("Device Type", False, False),
    "device_id": ("Device Id", False, False),
    "allocated": ("Total Allocated", False, False),
}
_KEYS = {attribute: key for attribute, (key, _, _) in ARG_FIELDS.items()}
_DECODER = json.JSONDecoder(parse_float=Decimal)

if msgspec is not None:
    from typing import Any

    UNSET = msgspec.UNSET
    Raw = msgspec.Raw

    def _field(attribute):
        key, raw, presence = ARG_FIELDS[attribute]
        return (attribute, msgspec.Raw if raw else Any, msgspec.field(default=UNSET if presence else None, name=key))

    Args = msgspec.defstruct("Args", [_field(attribute) for attribute in ARG_FIELDS], gc=False)

    class Event(msgspec.Struct, gc=False):
        ph: Any = None
        cat: Any = None
        name: Any = None
        pid: Any = None
        tid: Any = None
        ts: Any = None
        dur: Any = 0
        args: Args | None = None  # type: ignore[valid-type]

    class BatchEvent(msgspec.Struct, gc=False):
        """An Event whose ts and dur stay JSON text, read for a whole batch at once (kineto.times)."""

        ph: Any = None
        cat: Any = None
        name: Any = None
        pid: Any = None
        tid: Any = None
        ts: msgspec.Raw = msgspec.Raw(b"null")
        dur: msgspec.Raw = msgspec.Raw(b"0")
        args: Args | None = None  # type: ignore[valid-type]

    # A batch of traceEvents items, every one an object; anything else (a NaN, a lone surrogate, a non-object
    # item, a non-object args) makes msgspec refuse the batch, and the standard library reads it instead.
    BATCH_DECODER = msgspec.json.Decoder(list[BatchEvent], float_hook=Decimal)
    BATCH_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError)
else:

    class _Unset:
        __slots__ = ()

        def __repr__(self):
            return "UNSET"

    UNSET = _Unset()

    class Raw:  # type: ignore[no-redef]  # never built: every value is decoded on this path
        __slots__ = ()

    class Args:  # type: ignore[no-redef]
        __slots__ = tuple(ARG_FIELDS)

        def __init__(self, **values):
            for attribute, (_, _, presence) in ARG_FIELDS.items():
                setattr(self, attribute, values.get(attribute, UNSET if presence else None))

    class Event:  # type: ignore[no-redef]
        __slots__ = ("ph", "cat", "name", "pid", "tid", "ts", "dur", "args")

        def __init__(self, ph=None, cat=None, name=None, pid=None, tid=None, ts=None, dur=0, args=None):
            self.ph, self.cat, self.name, self.pid, self.tid, self.ts, self.dur, self.args = (
                ph,
                cat,
                name,
                pid,
                tid,
                ts,
                dur,
                args,
            )

    BATCH_DECODER = None
    BATCH_ERRORS = ()

EMPTY_ARGS = Args()


def record(value: object) -> Any:
    """The Event of one decoded traceEvents item, or None for an item that is not an object."""
    if not isinstance(value, dict):
        return None
    args = value.get("args")
    if isinstance(args, dict):
        args = Args(**{attribute: args[key] for attribute, key in _KEYS.items() if key in args})
    else:
        args = None
    return Event(
        ph=value.get("ph"),
        cat=value.get("cat"),
        name=value.get("name"),
        pid=value.get("pid"),
        tid=value.get("tid"),
        ts=value.get("ts"),
        dur=value.get("dur", 0),
        args=args,
    )


def decoded(value: Any) -> Any:
    """`value`, decoded first when msgspec left it as raw JSON text."""
    if type(value) is Raw:
        return _DECODER.decode(bytes(value).decode("utf-8"))
    return value


UNCACHED = object()


def raw_key(value: object) -> object:
    """A hashable key that stands for `value` (raw JSON text: its bytes), or UNCACHED."""
    if type(value) is Raw:
        return bytes(value)
    if type(value) is Decimal:
        return "decimal", value  # not equal to the int of the same value: the rules treat them apart
    return value if value is None or type(value) is int else UNCACHED


def args_dict(args: Any) -> dict[str, Any]:
    """The args of a record as the dict the standard library would have decoded (only the keys read)."""
    if args is None:
        return {}
    found: dict[str, Any] = {}
    for attribute, key in _KEYS.items():
        value = getattr(args, attribute)
        if value is not UNSET and (value is not None or ARG_FIELDS[attribute][2]):
            found[key] = decoded(value)
    return found
