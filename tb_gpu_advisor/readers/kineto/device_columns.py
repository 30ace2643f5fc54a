"""Growing columns of one GPU's events, and the interning and array helpers the collector keeps its columns with."""

from __future__ import annotations

from typing import Any

from array import array
import numpy as np
import numpy.typing as npt
from tb_gpu_advisor.readers.kineto.records import UNCACHED, decoded, raw_key
from tb_gpu_advisor.readers.kineto.values import (
    kernel_config,
)


# Per-name results are kept for at most this many distinct names (a file of all-different names costs no memory).
CACHED_NAMES = 1 << 16


class DeviceColumns:
    """Growing columns of one GPU's events."""

    def __init__(self):
        self.start, self.duration = array("q"), array("q")
        self.kind, self.stream, self.correlation = array("b"), array("q"), array("q")
        self.name_id, self.config_id, self.copy_id, self.direction = (array("i"), array("i"), array("i"), array("b"))
        self.names, self.configs, self.copies = {}, {}, {}
        self.config_ids = {}  # the raw launch values of a kernel -> its config id

    def config_id_of(self, args: Any) -> int:
        """The id of a kernel's KernelConfig (kineto.values.kernel_config), worked out once per distinct values."""
        key = (
            raw_key(args.registers),
            raw_key(args.shared),
            raw_key(args.grid),
            raw_key(args.block),
            raw_key(args.occupancy),
        )
        found = self.config_ids.get(key) if UNCACHED not in key else None
        if found is None:
            config = kernel_config(
                {
                    "registers per thread": decoded(args.registers),
                    "shared memory": decoded(args.shared),
                    "grid": decoded(args.grid),
                    "block": decoded(args.block),
                    "est. achieved occupancy %": args.occupancy,
                }
            )
            found = intern(self.configs, config)
            if UNCACHED not in key and len(self.config_ids) < CACHED_NAMES:
                self.config_ids[key] = found
        return found


def intern(table: dict[Any, int], value: object) -> int:
    found = table.get(value)
    if found is None:
        found = table[value] = len(table)
    return found


def column(values: array, dtype: npt.DTypeLike) -> np.ndarray:
    return np.frombuffer(values, dtype=dtype).copy() if len(values) else np.zeros(0, dtype)
