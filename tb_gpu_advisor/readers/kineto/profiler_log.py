"""What a Kineto trace says about its own capture: the profiler's log lines, which Kineto writes into the trace
as lists under their level ("INFO", "WARNING", "ERROR"). Its "Record counts" line ends with `CUPTI stopped
early? = 1` when CUPTI stopped collecting before the capture ended (its activity buffers reached their size
limit): device events after that point are missing while host events go on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tb_gpu_advisor.readers.kineto.values import clean_text

LOG_KEYS = ("INFO", "WARNING", "ERROR")
_MAX_LINES = 500  # per level: bounded work on any file
_MAX_LINE = 400
_STOPPED_EARLY = "CUPTI stopped early? = "
# Words of a log line about events the capture lost (the other lines are the profiler's chatter).
_LOSS_WORDS = ("drop", "lost", "overflow", "buffer", "stopped", "exceed", "truncat", "missing")
STOPPED_EARLY_WARNING = (
    "Kineto: CUPTI stopped collecting early (its activity buffers reached their size limit): "
    "device events after that point were dropped"
)


def _lines(value):
    if not isinstance(value, list):
        return []
    return [clean_text(line[:_MAX_LINE]) for line in value[:_MAX_LINES] if isinstance(line, str)]


def capture_warnings(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """Trace warnings from the profiler's log in `metadata` (the trace's top-level keys): STOPPED_EARLY_WARNING
    when the record counts say so, then the WARNING and ERROR lines that tell of lost events."""
    found = []
    for line in _lines(metadata.get("INFO")):
        at = line.find(_STOPPED_EARLY)
        if at >= 0 and line[at + len(_STOPPED_EARLY) :].strip()[:1] not in ("", "0"):
            found.append(STOPPED_EARLY_WARNING)
            break
    for level in ("WARNING", "ERROR"):
        found += [
            f"Kineto {level.lower()}: {line}"
            for line in _lines(metadata.get(level))
            if any(word in line.lower() for word in _LOSS_WORDS)
        ]
    return tuple(found)
