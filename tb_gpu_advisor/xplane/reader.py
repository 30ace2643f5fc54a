"""Turns a `.xplane.pb` file into a lazily decoded XSpace, with one-line errors for bad input."""

import os
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.xplane import schema


@dataclass(frozen=True)
class LazyPlane:
    """One plane: its id and name decoded, the rest kept as bytes until `decode()`."""

    id: int
    name: str
    raw: bytes

    def decode(self, path="<bytes>"):
        """The full XPlane message; ProfileError if its bytes are corrupt."""
        try:
            return schema.XPlane.FromString(self.raw)
        except (DecodeError, RuntimeError, ValueError):
            raise ProfileError(path, f"plane {self.name!r} is corrupt and cannot be decoded") from None


@dataclass(frozen=True)
class LazySpace:
    """An XSpace whose planes are split but not decoded."""

    path: str
    planes: tuple
    hostnames: tuple
    errors: tuple
    warnings: tuple

    def planes_named(self, predicate):
        return [plane for plane in self.planes if predicate(plane.name)]


def read_space(path, max_bytes=DEFAULT_MAX_FILE_BYTES):
    """Reads `path` into a LazySpace, raising ProfileError with a clear reason for bad input."""
    path = str(path)
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise ProfileError(path, "no such file") from None
    except OSError as err:
        raise ProfileError(path, f"cannot read: {err.strerror or err}") from None
    if os.path.isdir(path):
        raise ProfileError(path, "is a directory, not an .xplane.pb file")
    if size == 0:
        raise ProfileError(path, "file is empty (the profiler wrote nothing)")
    if max_bytes and size > max_bytes:
        raise ProfileError(path, f"file is {size / 1e6:,.0f} MB, above the {max_bytes / 1e6:,.0f} MB limit "
                                 "(raise it with --max-file-mb)")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as err:
        raise ProfileError(path, f"cannot read: {err.strerror or err}") from None
    return parse_space(data, path)


def parse_space(data, path="<bytes>"):
    """Splits serialized XSpace bytes into planes; raises ProfileError when they are not an XSpace."""
    try:
        shell = schema.XSpaceShell.FromString(data)
        planes = []
        for raw in shell.planes:
            header = schema.XPlaneName.FromString(raw)
            planes.append(LazyPlane(id=header.id, name=header.name, raw=raw))
    except (DecodeError, RuntimeError, ValueError) as err:
        raise ProfileError(path, "not a valid XSpace protobuf: the wire format is corrupt or the file is "
                                 "truncated") from None
    if not planes:
        raise ProfileError(path, "not an XSpace profile: it holds no planes")
    return LazySpace(path=path, planes=tuple(planes), hostnames=tuple(shell.hostnames),
                     errors=tuple(shell.errors), warnings=tuple(shell.warnings))

