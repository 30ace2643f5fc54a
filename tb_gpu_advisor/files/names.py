"""Names of profile files: which files are Kineto traces, and the host (or Kineto worker) a file is of."""

from __future__ import annotations

import os
import re
from os import PathLike

from tb_gpu_advisor.constants import XPLANE_SUFFIX
from tb_gpu_advisor.files.regular import kind_problem

KINETO_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")
# tensorboard_trace_handler writes `<worker>.<span>.pt.trace.json[.gz]`, span being a millisecond timestamp.
_SPAN = re.compile(r"^(?P<worker>.+)\.(?P<span>\d+)$")


def is_kineto_file(name: str | PathLike[str]) -> bool:
    """True for `*.pt.trace.json` and `*.pt.trace.json.gz` names."""
    return str(name).endswith(KINETO_SUFFIXES)


def strip_suffix(name: str | PathLike[str]) -> str:
    """The file name without `.pt.trace.json[.gz]`."""
    base = os.path.basename(str(name))
    for suffix in KINETO_SUFFIXES[::-1]:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def worker_and_span(name: str | PathLike[str]) -> tuple[str, str | None]:
    """(worker, span or None) of a trace file name: `host_123.1700000000000.pt.trace.json` -> (`host_123`, ...)."""
    stem = strip_suffix(name)
    match = _SPAN.match(stem)
    return (match.group("worker"), match.group("span")) if match else (stem, None)


def is_kineto_trace(path: str | PathLike[str]) -> bool:
    """A Kineto name, or (for a file not named `.xplane.pb`, e.g. a cached remote copy) gzip or JSON content."""
    path_str = str(path)
    if is_kineto_file(path_str):
        return True
    if path_str.endswith(XPLANE_SUFFIX) or kind_problem(path_str):
        return False  # not opened: the XPlane reader says what it is (files/regular.py)
    try:
        with open(path_str, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head[:2] == b"\x1f\x8b" or head.lstrip()[:1] == b"{"


def host_name(path: str | PathLike[str]) -> str:
    """The host a profile file is of: its file name without `.xplane.pb`, or a Kineto file's worker."""
    base = os.path.basename(str(path))
    if is_kineto_file(base):
        return worker_and_span(base)[0]
    return base[: -len(XPLANE_SUFFIX)] if base.endswith(XPLANE_SUFFIX) else base
