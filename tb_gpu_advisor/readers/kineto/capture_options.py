"""Which of the PyTorch profiler's recording options a Kineto trace was captured with: from the trace's own
top-level flags (`record_shapes`, `with_flops`, `with_stack`, `profile_memory`) or what its events carry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_FLAGS = ("record_shapes", "with_stack", "profile_memory", "with_flops")


class OptionCounter:
    """Counts, while events stream by, the operator events that carry what each option records (kineto.collect
    adds to the counts)."""

    def __init__(self):
        self.ops = 0
        self.shapes = 0
        self.stacks = 0
        self.flops = 0

    def options(self, metadata: Mapping[str, Any], python_calls: int, memory_events: int) -> tuple[str, ...]:
        """The recording options on, in _FLAGS order."""
        seen = {
            "record_shapes": self.shapes > 0,
            "with_stack": self.stacks > 0 or python_calls > 0,
            "profile_memory": memory_events > 0,
            "with_flops": self.flops > 0,
        }
        flagged = {flag: _truthy(metadata.get(flag)) for flag in _FLAGS}
        return tuple(flag for flag in _FLAGS if seen[flag] or flagged[flag])


def _truthy(value):
    return value is True or (isinstance(value, int) and not isinstance(value, bool) and value > 0)
