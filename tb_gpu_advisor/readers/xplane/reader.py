"""Turns a `.xplane.pb` file into a lazily decoded XSpace, with one-line errors for bad input.

`read_space` streams: it keeps only each plane's place in the file, so memory holds one plane at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from os import PathLike
from typing import Any, BinaryIO

from google.protobuf.message import DecodeError

from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES, MAX_PLANES
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.file_size import too_big
from tb_gpu_advisor.files.regular import FileChanged, Identity, check_unchanged, open_regular
from tb_gpu_advisor.readers.xplane import schema
from tb_gpu_advisor.readers.xplane.wire_scan import (
    WIRE_LEN,
    WIRE_VARINT,
    Unusual,
    as_int64,
    field_extent,
    read_varint,
    utf8,
)

_HEAD_BYTES = 32  # enough for a top-level tag and length
# The profiler's errors and warnings kept (each kind); the rest are counted in one more line.
MAX_MESSAGES = 100


def decode_plane(raw: bytes, name: str, path: str) -> Any:
    """The full XPlane message of a plane's bytes; ProfileError if they are corrupt."""
    try:
        return schema.XPlane.FromString(raw)
    except (DecodeError, RuntimeError, ValueError):
        raise ProfileError(path, f"plane {name!r} is corrupt and cannot be decoded") from None


@dataclass(frozen=True)
class LazyPlane:
    """One plane: its id and name decoded, the rest kept as bytes until `decode()`."""

    id: int
    name: str
    raw: bytes

    @property
    def size(self) -> int:
        return len(self.raw)

    def read_bytes(self) -> bytes:
        """The plane's serialized bytes (kept in memory)."""
        return self.raw

    def decode(self, path: str = "<bytes>") -> Any:
        """The full XPlane message; ProfileError if its bytes are corrupt."""
        return decode_plane(self.raw, self.name, path)


@dataclass(frozen=True)
class FilePlane:
    """One plane of a file: its id and name decoded, its bytes read from the file by `read_bytes()` (from the
    same version of the file, by its identity, or FileChanged)."""

    id: int
    name: str
    path: str
    offset: int
    size: int
    identity: Identity | None = None

    def read_bytes(self) -> bytes:
        """The plane's serialized bytes, read from the file now (each call reads the disk)."""
        handle, identity = open_regular(self.path)
        with handle:
            if self.identity is not None and identity != self.identity:
                raise FileChanged(self.path)
            try:
                handle.seek(self.offset)
                data = handle.read(self.size)
            except OSError as err:
                raise ProfileError(self.path, f"cannot read: {err.strerror or err}") from None
            if len(data) != self.size:
                raise FileChanged(self.path)
            if self.identity is not None:
                check_unchanged(self.path, handle, self.identity)
        return data

    def decode(self, path: str = "<bytes>") -> Any:
        return decode_plane(self.read_bytes(), self.name, path)


@dataclass(frozen=True)
class LazySpace:
    """An XSpace whose planes are split but not decoded."""

    path: str
    planes: tuple
    hostnames: tuple
    errors: tuple
    warnings: tuple


def read_space(path: str | PathLike[str], max_bytes: int | None = DEFAULT_MAX_FILE_BYTES) -> LazySpace:
    """Reads `path` into a LazySpace, raising ProfileError with a clear reason for bad input (FileChanged when
    the file changes while it is read). Only a regular file is opened."""
    path = str(path)
    handle, identity = open_regular(path)
    with handle:
        size = identity.size
        if size == 0:
            raise ProfileError(path, "file is empty (the profiler wrote nothing)")
        if max_bytes and size > max_bytes:
            raise ProfileError(path, too_big(size, max_bytes))
        try:
            space = _stream_space(path, handle, identity)
        except Unusual:
            space = None  # not a layout the streaming scan vouches for: let upb judge the whole file
        except OSError as err:
            raise ProfileError(path, f"cannot read: {err.strerror or err}") from None
        if space is None:
            try:
                handle.seek(0)
                data = handle.read()
            except OSError as err:
                raise ProfileError(path, f"cannot read: {err.strerror or err}") from None
        check_unchanged(path, handle, identity)
    return space if space is not None else parse_space(data, path)


def _stream_space(path, handle, identity):
    """LazySpace of FilePlanes; checks each plane's top-level fields as parse_space does, reading only their
    heads (and the plane name), so the file is not read twice."""
    planes, strings = [], {2: [], 3: [], 4: []}
    for field, wire, start, end in _fields(handle, 0, identity.size):
        if wire != WIRE_LEN:
            continue
        if field == 1:
            _check_plane_count(path, len(planes) + 1)
            plane_id, name = _plane_header(handle, start, end)
            planes.append(
                FilePlane(id=plane_id, name=name, path=path, offset=start, size=end - start, identity=identity)
            )
        elif field in strings:
            kept = strings[field]
            kept.append(_text(handle, start, end) if field == 4 or len(kept) < MAX_MESSAGES else None)
    if not planes:
        raise ProfileError(path, "not an XSpace profile: it holds no planes")
    return LazySpace(
        path=path,
        planes=tuple(planes),
        hostnames=tuple(strings[4]),
        errors=capped(strings[2], "errors"),
        warnings=capped(strings[3], "warnings"),
    )


def _fields(handle: BinaryIO, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field, wire type, payload start, field end) of each field in the file range [pos, end), by seeking."""
    while pos < end:
        handle.seek(pos)
        field, wire, payload, length = field_extent(handle.read(min(_HEAD_BYTES, end - pos)))
        if pos + length > end:
            raise Unusual("field runs past its message")
        yield field, wire, pos + payload, pos + length
        pos += length


def capped(messages: Iterable[str | None], what: str) -> tuple[str | None, ...]:
    """The first MAX_MESSAGES of `messages` (None where one was not read), then one line counting the rest."""
    messages = list(messages)
    if len(messages) <= MAX_MESSAGES:
        return tuple(messages)
    return (*messages[:MAX_MESSAGES], f"{len(messages) - MAX_MESSAGES:,} more {what} of the profiler not shown")


def _text(handle: BinaryIO, start: int, end: int) -> str:
    handle.seek(start)
    data = handle.read(end - start)
    return utf8(data, (0, len(data)))


def _plane_header(handle: BinaryIO, start: int, end: int) -> tuple[int, str]:
    """(id, name) of the XPlane at [start, end), checking its top-level fields as XPlaneName.FromString does."""
    plane_id, name = 0, ""
    for field, wire, payload, field_end in _fields(handle, start, end):
        if field == 1 and wire == WIRE_VARINT:
            handle.seek(payload)
            plane_id = as_int64(read_varint(handle.read(field_end - payload), 0, field_end - payload)[0])
        elif field == 2 and wire == WIRE_LEN:
            name = _text(handle, payload, field_end)
    return plane_id, name


def _check_plane_count(path: str, count: int) -> None:
    if count > MAX_PLANES:
        raise ProfileError(
            path,
            f"holds more than {MAX_PLANES:,} planes, more than any profiled machine has: "
            "the file is corrupt or not a profile",
        )


def parse_space(data: bytes, path: str = "<bytes>") -> LazySpace:
    """Splits serialized XSpace bytes into planes; raises ProfileError when they are not an XSpace."""
    try:
        shell = schema.XSpaceShell.FromString(data)
        _check_plane_count(path, len(shell.planes))
        planes = []
        for raw in shell.planes:
            header = schema.XPlaneName.FromString(raw)
            planes.append(LazyPlane(id=header.id, name=header.name, raw=raw))
    except (DecodeError, RuntimeError, ValueError):
        raise ProfileError(
            path, "not a valid XSpace protobuf: the wire format is corrupt or the file is truncated"
        ) from None
    if not planes:
        raise ProfileError(path, "not an XSpace profile: it holds no planes")
    return LazySpace(
        path=path,
        planes=tuple(planes),
        hostnames=tuple(shell.hostnames),
        errors=capped(shell.errors, "errors"),
        warnings=capped(shell.warnings, "warnings"),
    )
