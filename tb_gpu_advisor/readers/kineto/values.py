"""What one Kineto event may hold: times a profiler can record, integers that fit int64, launch values that fit
32 bits, copy sizes a machine can move, names without lone surrogates. A value outside these is never built
into the model: the event (or the value) is left out and counted, and the model says so in a warning."""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, overload

from tb_gpu_advisor.model.details import MAX_COPY_BYTES, CopyDetails, KernelConfig
from tb_gpu_advisor.model.limits import MAX_TIME_PS

PS_PER_US = 1_000_000
# Kineto keeps times as int64 nanoseconds: a microsecond time or duration beyond this no profiler recorded.
MAX_US = Decimal(2**63) / 1000
# An event further than this from the trace's first event (either way) is left out: half of model.limits'
# bound, so once times count from the earliest event every start and end stays within it.
WINDOW_PS = MAX_TIME_PS // 2
_INT64 = (-(2**63), 2**63 - 1)
_U32_MAX = 2**32 - 1
_SURROGATES = re.compile("[\ud800-\udfff]")
_COPY_KINDS = {"pageable": "pageable", "pinned": "pinned", "device": "device", "array": "array", "managed": "managed"}


def is_number(value: object) -> bool:
    return isinstance(value, (int, Decimal)) and not isinstance(value, bool)


def plausible_us(value: int | Decimal) -> int | Decimal | None:
    """A finite microsecond number a profiler can record (|value| < 2**63 ns), else None."""
    if isinstance(value, Decimal) and not value.is_finite():
        return None
    return value if -MAX_US < value < MAX_US else None


@overload
def integer(value: object, default: int = ..., low: float = ..., high: float = ...) -> int: ...
@overload
def integer(value: object, default: None, low: float = ..., high: float = ...) -> int | None: ...
def integer(value: object, default: int | None = -1, low: float = _INT64[0], high: float = _INT64[1]) -> int | None:
    """`value` when it is an int (not a bool) within [low, high], else `default`."""
    return value if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high else default


def clean_text(text: str) -> str:
    """`text` with lone surrogates (from `\\ud800` escapes: not Unicode text) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", text)
    return text


def _dim3(value):
    if isinstance(value, list) and len(value) == 3 and all(integer(v, -1, 0, _U32_MAX) >= 0 for v in value):
        return tuple(value)
    return (1, 1, 1)


def kernel_config(args: Mapping[str, Any]) -> KernelConfig:
    """KernelConfig from a kernel's args. Kineto records one shared-memory total (static + dynamic), kept as
    static; its `est. achieved occupancy %` is an estimate of achieved occupancy, not CUPTI's theoretical
    occupancy, so it is kept apart (achieved_occupancy_pct), occupancy stays None and the analyses compute the
    theoretical figure themselves. Values that do not fit 32 bits keep their defaults, as in the XPlane reader."""
    return KernelConfig(
        registers_per_thread=integer(args.get("registers per thread"), 0, 0, _U32_MAX),
        static_shared_bytes=integer(args.get("shared memory"), 0, 0, _U32_MAX),
        dynamic_shared_bytes=0,
        grid=_dim3(args.get("grid")),
        block=_dim3(args.get("block")),
        occupancy_pct=None,
        achieved_occupancy_pct=_percent(args.get("est. achieved occupancy %")),
    )


def _percent(value):
    """A number in (0, 100] as float, else None: Kineto writes 0 both when its estimate failed (large-tile
    kernels) and when it rounds below 1%, so 0 is unknown, as with CUPTI's occupancy."""
    if not is_number(value) or (isinstance(value, Decimal) and not value.is_finite()):
        return None
    return float(value) if 0 < value <= 100 else None


def copy_details(name: str, args: Mapping[str, Any]) -> tuple[CopyDetails, bool]:
    """(CopyDetails, implausible) from `Memcpy HtoD (Pageable -> Device)` and the `bytes` arg; kinds None when
    not named; a size above MAX_COPY_BYTES is recorded as 0 (unknown) and `implausible` is True."""
    src = dst = None
    inside = name[name.find("(") + 1 : name.rfind(")")] if "(" in name else ""
    if "->" in inside:
        left, _, right = inside.partition("->")
        src, dst = _COPY_KINDS.get(left.strip().lower()), _COPY_KINDS.get(right.strip().lower())
    size = integer(args.get("bytes"), 0, 0, float("inf"))
    implausible = size > MAX_COPY_BYTES
    return CopyDetails(size_bytes=0 if implausible else size, src_kind=src, dst_kind=dst, is_async=None), implausible


def input_dims(value: object) -> tuple[tuple[int, ...], ...] | None:
    """An operator's `Input Dims` as a tuple of tuples of ints, or None when not recorded or malformed."""
    if not isinstance(value, list):
        return None
    found: list[tuple[int, ...]] = []
    for dims in value:
        if not isinstance(dims, list) or not all(integer(d, None) is not None for d in dims):
            return None
        found.append(tuple(dims))
    return tuple(found)


def _events(count, one="event", many=None):
    return f"{count:,} {one if count == 1 else many or one + 's'}"


def _were(count):
    return "was" if count == 1 else "were"


def _short(value):
    text = str(value)
    return text if len(text) <= 24 else text[:20] + "..."


class LeftOut:
    """The complete events (and values) left out, by reason, with the first example of each."""

    def __init__(self):
        self.unusable = 0  # ts or dur not a number
        self.no_device = 0  # device work without a usable device id
        self.copy_sizes = 0  # copies whose size was dropped (MAX_COPY_BYTES)
        self.implausible_count, self.implausible_example = 0, None
        self.far_count, self.first_far_us = 0, None

    def implausible(self, ts: object, dur: object) -> None:
        if self.implausible_example is None:
            self.implausible_example = f"ts={_short(ts)} dur={_short(dur)}"
        self.implausible_count += 1

    def far(self, ts_us: int | Decimal) -> None:
        if self.first_far_us is None:
            self.first_far_us = ts_us
        self.far_count += 1

    def warnings(self) -> list[str]:
        """One line per reason, for TraceModel.trace_warnings."""
        found = []
        if self.unusable:
            found.append(f"{_events(self.unusable)} without a usable ts/dur {_were(self.unusable)} left out")
        if self.implausible_count:
            found.append(
                f"{_events(self.implausible_count)} with a time no profiler records (beyond 2^63 ns, "
                f"not finite, or a negative duration; first: {self.implausible_example}) "
                f"{_were(self.implausible_count)} left out"
            )
        if self.far_count:
            found.append(
                f"{_events(self.far_count)} more than {WINDOW_PS / 1e12 / 86400:.0f} days from the "
                f"trace's other events (first: ts={_short(self.first_far_us)}) "
                f"{_were(self.far_count)} left out"
            )
        if self.no_device:
            found.append(
                f"{_events(self.no_device, 'GPU event')} without a usable device id {_were(self.no_device)} left out"
            )
        if self.copy_sizes:
            found.append(
                f"{_events(self.copy_sizes, 'copy', 'copies')} with a size above "
                f"{MAX_COPY_BYTES // 2**40} TiB, more than any GPU holds: the size is left out (unknown)"
            )
        return found
