"""Opening profile files safely: only regular files are opened, never a FIFO or a device (which can block
forever or act on being opened); anything else gets a one-line description of what it is. A file's identity
(device, inode, size, mtime) tells whether it changed while it was read."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from typing import BinaryIO

from tb_gpu_advisor.errors import ProfileError

_KINDS = (
    (stat.S_ISDIR, "is a directory, not {a_file}"),
    (stat.S_ISFIFO, "is a named pipe (FIFO), not a file: not opened"),
    (stat.S_ISCHR, "is a character device, not a file: not opened"),
    (stat.S_ISBLK, "is a block device, not a file: not opened"),
    (stat.S_ISSOCK, "is a socket, not a file: not opened"),
)


class FileChanged(ProfileError):
    """The file was replaced or modified while it was being read."""

    def __init__(self, path: str) -> None:
        super().__init__(
            path,
            "the file changed while it was being read (it is being written or replaced); try again once it is complete",
        )


@dataclass(frozen=True)
class Identity:
    """What tells two versions of a file apart."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, status: os.stat_result) -> Identity:
        return cls(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def kind_problem(path: str) -> str | None:
    """None for a regular file (through symlinks); else one line saying what `path` is instead."""
    try:
        status = os.stat(path)
    except OSError as err:
        return _stat_problem(path, err)
    return _mode_problem(status.st_mode, path)


def _mode_problem(mode: int, path: str) -> str | None:
    for test, problem in _KINDS:
        if test(mode):
            return _via_link(path, problem.format(a_file=_a_file(path)))
    return None if stat.S_ISREG(mode) else _via_link(path, "is not a regular file: not opened")


def _a_file(path: str) -> str:
    return "a .pt.trace.json file" if ".pt.trace.json" in os.path.basename(str(path)) else "an .xplane.pb file"


def _via_link(path: str, problem: str) -> str:
    return f"is a symbolic link to {problem[3:]}" if os.path.islink(path) else problem


def _stat_problem(path: str, err: OSError) -> str:
    if err.errno == errno.ELOOP:
        return "is a symbolic link loop (it points back to itself)"
    if err.errno in (errno.ENOENT, errno.ENOTDIR) and os.path.lexists(path):
        return f"is a dangling symbolic link (its target {os.readlink(path)!r} does not exist)"
    if err.errno == errno.ENOENT:
        return "no such file"
    return f"cannot read: {err.strerror or err}"


def open_regular(path: str) -> tuple[BinaryIO, Identity]:
    """(binary file object, Identity) of a regular file; ProfileError saying what `path` is otherwise. The
    kind is checked before opening and again on the opened descriptor (the path may change in between)."""
    problem = kind_problem(path)
    if problem:
        raise ProfileError(path, problem)
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as err:
        raise ProfileError(path, _stat_problem(path, err)) from None
    status = os.fstat(descriptor)
    problem = _mode_problem(status.st_mode, path)
    if problem:
        os.close(descriptor)
        raise ProfileError(path, problem)
    return os.fdopen(descriptor, "rb"), Identity.of(status)


def check_unchanged(path: str, handle: BinaryIO, identity: Identity) -> None:
    """Raises FileChanged when the open file or the path no longer has `identity`."""
    try:
        now = Identity.of(os.fstat(handle.fileno()))
        at_path = Identity.of(os.stat(path))
    except OSError:
        raise FileChanged(path) from None
    if now != identity or at_path != identity:
        raise FileChanged(path)
