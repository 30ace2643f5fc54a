"""Human-readable numbers with units for the text and markdown reports (words and units: vocabulary.py)."""

from __future__ import annotations

import math
import re

from tb_gpu_advisor.vocabulary import BYTE_UNITS, KERNEL_PLUMBING, MICRO, SPEEDUP_CAP, TIMES


def duration_us(value: float) -> str:
    """Microseconds as `850 ns`, `12.3 µs`, `4.56 ms` or `1.23 s`."""
    if value is None:
        return "-"
    if value < 1:
        return f"{value * 1000:.0f} ns"
    if value < 1000:
        return f"{value:.1f} {MICRO}"
    if value < 1_000_000:
        return f"{value / 1000:.2f} ms"
    return f"{value / 1e6:.2f} s"


def duration_axis_ms(scale_max_ms, step_ms):
    """One unit for every tick of a time axis (`0 ms`, `5 ms` ... not `0 ns` beside `250.00 ms`), with the decimals
    the step needs."""
    if scale_max_ms >= 1000:
        unit, scale = "s", 1000.0
    elif scale_max_ms >= 1:
        unit, scale = "ms", 1.0
    else:
        unit, scale = MICRO, 0.001
    step = step_ms / scale
    decimals = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    return lambda value: f"{value / scale:.{decimals}f} {unit}"


def duration_ms(value: float) -> str:
    return "-" if value is None else duration_us(value * 1000)


_DURATION = re.compile(r"^(-?[\d.]+) (ns|" + MICRO + r"|ms|s)$")
_DURATION_SCALE_MS = {"ns": 1e-6, MICRO: 1e-3, "ms": 1.0, "s": 1000.0}


def parse_duration_ms(text):
    """The ms of a duration as duration_ms writes it (`71.3 µs` -> 0.0713); None for anything else (`-`)."""
    found = _DURATION.match(text or "")
    return float(found.group(1)) * _DURATION_SCALE_MS[found.group(2)] if found else None


def durations_ms(*values):
    """Durations in ms written in one unit, the one duration_ms gives the largest (`mean 972.1 µs, stdev 697.4 µs`,
    not `0.70 ms` beside `972.1 µs`); a value that would print as zero gets more decimals. None is `-`."""
    known = [v for v in values if v is not None]
    if not known:
        return tuple("-" for _ in values)
    largest = max(known)
    unit, scale, decimals = (
        ("s", 1000.0, 2)
        if largest >= 1000
        else ("ms", 1.0, 2)
        if largest >= 1
        else (MICRO, 0.001, 1)
        if largest >= 0.001
        else ("ns", 1e-6, 0)
    )
    texts = []
    for value in values:
        if value is None:
            texts.append("-")
            continue
        scaled, places = value / scale, decimals
        while 0 < abs(scaled) < 0.5 * 10**-places and places < 4:  # would print as zero
            places += 1
        texts.append(f"{scaled:.{places}f} {unit}")
    return tuple(texts)


def size_bytes(value: float) -> str:
    """Bytes in binary units, as the tab writes them: `512 B`, `24.0 KiB`, `320.00 MiB`, `39.41 GiB`."""
    if value is None:
        return "-"
    for unit, scale in zip(reversed(BYTE_UNITS[1:]), (2**40, 2**30, 2**20, 2**10)):
        if value >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{value} B"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def rate_gbps(value: float | None) -> str:
    """`12.34 GB/s`; a rate that rounds to 0.00 but is not 0 reads `<0.01 GB/s`, never a bandwidth of 0."""
    if value is None:
        return "-"
    return "<0.01 GB/s" if 0 < value < 0.005 else f"{value:.2f} GB/s"


def rate(value: float) -> str:
    """A rate without its unit, 3 significant digits below 1000 and whole above: `0.0017`, `6.71`, `2237`."""
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value:.0f}"
    return f"{value:.3g}" if value >= 0.001 or value == 0 else "<0.001"


def count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


_ANONYMOUS = "(anonymous namespace)"


def kernel_name(name: str, width: int) -> str:
    """A kernel's display name: no `void`, no parameter list, template arguments collapsed to `<...>`, the
    qualified name kept (`tensorflow::(anonymous namespace)::GenerateNormalizedProb<...>`); then `shorten`."""
    text = name[5:] if name.startswith("void ") else name
    out, depth, index = [], 0, 0
    while index < len(text):
        char = text[index]
        if depth == 0 and text.startswith(_ANONYMOUS, index):
            out.append(_ANONYMOUS)
            index += len(_ANONYMOUS)
            continue
        if char == "<":
            if depth == 0:
                out.append("<...>")
            depth += 1
        elif char == ">" and depth:
            depth -= 1
        elif char == "(" and depth == 0 and out:
            break
        elif depth == 0:
            out.append(char)
        index += 1
    return shorten("".join(out).strip() or name, width)


def split_qualifiers(text: str, separator: str = "::") -> list[str]:
    """`text` split at `separator` outside <...> and (...): the qualifiers of a C++ name, then its function."""
    parts, depth, start, index = [], 0, 0, 0
    while index < len(text):
        char = text[index]
        if char in "<(":
            depth += 1
        elif char in ">)" and depth:
            depth -= 1
        elif depth == 0 and text.startswith(separator, index):
            parts.append(text[start:index])
            index += len(separator)
            start = index
            continue
        index += 1
    parts.append(text[start:])
    return parts


def kernel_label(name: str, width: int, detail: str = "", bracket: str = "") -> str:
    """A kernel's label in at most `width` characters that keeps its function name: kernel_name's form, with
    `detail` (the template arguments that tell it apart) inside its `<...>` and `bracket` (launch shape, op)
    after it. Namespace qualifiers go first (`EigenMetaKernel<TensorConversionOp>`, not `Eigen.....>`); then a
    bracket beside a detail (the caller numbers rows still alike), while a bracket alone keeps up to half the
    width; then the middle of the function's name, and last of the detail."""
    text = kernel_name(name, 10_000)
    if detail and text.endswith("<...>"):
        text = f"{text[:-5]}<{detail}>"
    elif detail:
        bracket, detail = ", ".join(part for part in (detail, bracket) if part), ""
    parts = split_qualifiers(text)
    suffix = f" [{bracket}]" if bracket else ""
    for start in range(len(parts)):
        if len("::".join(parts[start:]) + suffix) <= width:
            return "::".join(parts[start:]) + suffix
    if bracket and not detail:
        inner = shorten(bracket, max(4, min(len(bracket), width // 2 - 3)))
        return f"{kernel_label(name, width - len(inner) - 3)} [{inner}]"
    for start in range(len(parts)):
        if len("::".join(parts[start:])) <= width:
            return "::".join(parts[start:])
    function = parts[-1]
    open_at = function.find("<")
    if open_at <= 0 or not function.endswith(">"):
        return shorten(function, width)
    head, inner = function[:open_at], function[open_at + 1 : -1]
    room = width - len(inner) - 2
    if room >= min(len(head), 8):
        return f"{shorten(head, room)}<{inner}>"
    head = shorten(head, min(len(head), 8))
    return f"{head}<{shorten(inner, max(3, width - len(head) - 2))}>"


def launch_dims(grid: list[int] | None, block: list[int] | None) -> str:
    """`32x37 / 256`: grid and block without trailing 1s; `?` for a value no GPU allows (null); `-` where the
    trace records no launch configuration (both null)."""
    if grid is None and block is None:
        return "-"

    def dims(values: list[int] | None) -> str:
        if values is None:
            return "?"
        values = list(values)
        while len(values) > 1 and values[-1] == 1:
            values.pop()
        return "x".join(str(v) for v in values)

    return f"{dims(grid)} / {dims(block)}"


def shorten(name: str, width: int) -> str:
    """Keeps the start and end of a long (C++ template) name."""
    if len(name) <= width:
        return name
    head = (width - 3) * 2 // 3
    tail = width - 3 - head
    return f"{name[:head]}...{name[-tail:]}"


def speed_change(ratio):
    """A measured step-time ratio (baseline / candidate) in words: `2.17× faster`, `3.45× slower`, `same speed`."""
    if ratio is None or ratio <= 0:
        return "-"
    if round(ratio, 2) == 1.0:
        return "same speed"
    return f"{ratio:.2f}{TIMES} faster" if ratio > 1 else f"{1 / ratio:.2f}{TIMES} slower"


def speedup_phrase(value: float, kind: str) -> str | None:
    """A finding's estimated speedup as people say it: a model `about 1.32×`, a bound `up to 3.48×`; None at 1.0."""
    if not isinstance(value, (int, float)) or value <= 1.005:
        return None
    if value >= SPEEDUP_CAP:  # capped: the what-if may say more, the number shown is not its value
        return f"over {SPEEDUP_CAP:.0f}{TIMES}" if kind == "model" else f"up to {SPEEDUP_CAP:.0f}{TIMES} or more"
    number = f"{value:.2f}" if value < 10 else f"{value:.1f}"
    return f"about {number}{TIMES}" if kind == "model" else f"up to {number}{TIMES}"


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def kernel_detail(name: str, count: int = 3) -> str:
    """What tells apart kernels whose short names are alike: the first distinctive identifiers of the template
    arguments (`TensorConversionOp · scalar_right`); "" when there are none. The tab's `kernelDetail` does the
    same with the same words."""
    text = name[5:] if name.startswith("void ") else name
    open_at = text.find("<")
    if open_at < 0 or "(" in text[:open_at].replace("(anonymous namespace)", ""):
        return ""
    depth, end = 0, len(text)
    for index in range(open_at, len(text)):
        if text[index] == "<":
            depth += 1
        elif text[index] == ">":
            depth -= 1
        elif text[index] == "(" and depth == 0:
            end = index
            break
    seen = []
    for word in _IDENTIFIER.findall(text[open_at:end]):
        if word in KERNEL_PLUMBING or len(word) < 3 or word in seen:
            continue
        seen.append(word)
        if len(seen) == count:
            break
    return " \u00b7 ".join(seen)
