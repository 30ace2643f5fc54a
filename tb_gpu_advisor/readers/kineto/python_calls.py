"""PyTorch profiler Python-stack events (`python_function`) named the way the XPlane Python tracer names calls."""

from __future__ import annotations

import re

# `numpy/_core/shape_base.py(378): stack`, `<built-in function open>`,
# `<built-in method read of _io.BufferedReader object at 0x7f..>`, `<method 'decode' of 'bytes' objects>`.
_SOURCE = re.compile(r"^(?P<file>[^<>()]+\.py)\(\d+\): (?P<function>[\w.<>]+)$")
_BUILTIN_FUNCTION = re.compile(r"^<built-in function (?P<function>\w+)>$")
_BUILTIN_METHOD = re.compile(
    r"^<built-in method (?P<function>\w+) of (?P<owner>[\w.]+) (object|type object) at "
    r"0x[0-9a-fA-F]+>$"
)
_METHOD = re.compile(r"^<method '(?P<function>\w+)' of '(?P<owner>[\w.]+)' objects>$")


def python_call_name(name: str) -> str | None:
    """`$<where> <function>` for a Kineto Python-stack event name (the XPlane Python tracer's form, object
    addresses dropped so one function is one name), or None for a name of another form."""
    match = _SOURCE.match(name)
    if match:
        return f"${match['file']} {match['function']}"
    match = _BUILTIN_FUNCTION.match(name)
    if match:
        return f"$builtins {match['function']}"
    match = _BUILTIN_METHOD.match(name) or _METHOD.match(name)
    if match:
        return f"${match['owner']} {match['function']}"
    return None
