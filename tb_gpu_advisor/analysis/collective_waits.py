"""Each GPU's collective kernel time split into waiting for the last GPU to arrive and transfer after it.

The GPUs of one profile share a clock. Where every GPU runs the same number of collective kernels, the k-th of
each is the same collective (the ranks' order-matching, analysis/ranks/align.py, within one host): a GPU that
enters it before the last GPU can move no data until that one arrives, so its kernel time up to the last arrival
is a wait, the rest transfer (the split analysis/ranks/waits.py makes across ranks)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CollectiveWaits:
    """Per GPU ordinal: collective kernel time waiting for the last arrival and transferring (ps); the GPU that
    arrived last most often, and the calls matched per GPU (0: counts differ, nothing split)."""

    wait_ps: dict
    transfer_ps: dict
    last_ordinal: int | None
    matched_calls: int

    def waiting_ordinals(self, min_share: float) -> tuple:
        """The GPUs whose wait is at least `min_share` of their collective kernel time, in ordinal order."""
        return tuple(
            o
            for o in sorted(self.wait_ps)
            if self.wait_ps[o] > 0 and self.wait_ps[o] >= min_share * (self.wait_ps[o] + self.transfer_ps[o])
        )


def collective_waits(spans_by_gpu):
    """CollectiveWaits of {ordinal: (start ps array, end ps array)} of each GPU's collective kernels in time
    order; no split (every wait 0, matched_calls 0) with fewer than two GPUs or unequal counts."""
    ordinals = sorted(spans_by_gpu)
    counts = {len(spans_by_gpu[o][0]) for o in ordinals}
    if len(ordinals) < 2 or len(counts) != 1 or 0 in counts:
        durations = {o: int(np.sum(spans_by_gpu[o][1] - spans_by_gpu[o][0])) for o in ordinals}
        return CollectiveWaits(dict.fromkeys(ordinals, 0), durations, None, 0)
    starts = np.stack([np.asarray(spans_by_gpu[o][0], dtype=np.int64) for o in ordinals])
    ends = np.stack([np.asarray(spans_by_gpu[o][1], dtype=np.int64) for o in ordinals])
    last = starts.max(axis=0)
    # A kernel that ends before the last arrival is no instance of the same collective: it waited its whole length.
    wait = np.minimum(np.maximum(last - starts, 0), ends - starts)
    transfer = (ends - starts) - wait
    latest = Counter(ordinals[int(i)] for i in starts.argmax(axis=0))
    return CollectiveWaits(
        {o: int(wait[i].sum()) for i, o in enumerate(ordinals)},
        {o: int(transfer[i].sum()) for i, o in enumerate(ordinals)},
        latest.most_common(1)[0][0],
        int(starts.shape[1]),
    )
