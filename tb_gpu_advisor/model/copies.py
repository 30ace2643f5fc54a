"""Which copy an event is when its name is not CUPTI's `Memcpy*`: ROCm's spelled-out names, `memcpy_details`."""

from __future__ import annotations

import re

from tb_gpu_advisor.model.details import CopyDetails, parse_copy_details
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection

# ROCm spells copies out: CopyHostToDevice, CopyDeviceToHost, CopyDeviceToDevice (on `Stream #N(MemcpyOther)`).
_SPELLED_COPY = re.compile(r"^Copy(Host|Device|Peer)To(Host|Device|Peer)\b")
_MEMORY_SIDE: dict[str | None, str] = {  # .get(None): the old format records no kind
    "pageable": "host",
    "pinned": "host",
    "device": "device",
    "array": "device",
    "managed": "device",
    "device_static": "device",
    "managed_static": "device",
}
_KIND_WORDS = (
    ("HOSTTODEVICE", CopyDirection.H2D),
    ("HTOD", CopyDirection.H2D),
    ("H2D", CopyDirection.H2D),
    ("DEVICETOHOST", CopyDirection.D2H),
    ("DTOH", CopyDirection.D2H),
    ("D2H", CopyDirection.D2H),
    ("DEVICETODEVICE", CopyDirection.D2D),
    ("DTOD", CopyDirection.D2D),
    ("D2D", CopyDirection.D2D),
    ("PEERTOPEER", CopyDirection.P2P),
    ("PTOP", CopyDirection.P2P),
    ("P2P", CopyDirection.P2P),
)


def spelled_copy_direction(name: str) -> CopyDirection | None:
    """The direction of a copy event named as ROCm names them (`CopyDeviceToDevice`), else None."""
    spelled = _SPELLED_COPY.match(name)
    return _copy_direction(spelled.group(1), spelled.group(2)) if spelled else None


def _copy_direction(src: str, dst: str) -> CopyDirection:
    src, dst = src.lower(), dst.lower()
    if src == "host" and dst == "device":
        return CopyDirection.H2D
    if src == "device" and dst == "host":
        return CopyDirection.D2H
    if src == "device" and dst == "device":
        return CopyDirection.D2D
    if src == "peer" or dst == "peer":
        return CopyDirection.P2P
    return CopyDirection.OTHER


def copy_direction_from_details(details: CopyDetails) -> CopyDirection:
    """The direction of an event classified as a copy only by its `memcpy_details` (XProf's rule): from the
    memory kinds (`kind_src`/`kind_dst`) or a `kind:` field naming it, else OTHER."""
    src, dst = _MEMORY_SIDE.get(details.src_kind), _MEMORY_SIDE.get(details.dst_kind)
    if src and dst:
        return _copy_direction(src, dst)
    return CopyDirection.OTHER


def reclassified_copy(
    kind: ActivityKind, direction: CopyDirection, details_text: object
) -> tuple[ActivityKind, CopyDirection]:
    """(kind, direction) of an event that carries `memcpy_details`: any such event is a copy, as in XProf."""
    if kind != ActivityKind.KERNEL:
        return kind, direction
    text = details_text if isinstance(details_text, str) else ""
    found = copy_direction_from_details(parse_copy_details(text))
    if found == CopyDirection.OTHER:
        found = _kind_field_direction(text)
    return ActivityKind.MEMCPY, found


def _kind_field_direction(text: str) -> CopyDirection:
    for token in text.split():
        key, _, value = token.partition(":")
        if key == "kind":
            compact = value.replace("_", "").upper()
            for words, direction in _KIND_WORDS:
                if words in compact:
                    return direction
    return CopyDirection.OTHER
