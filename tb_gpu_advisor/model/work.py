"""EventWork: the FLOPs and logical bytes of a GPU's events where a reader or an analysis costed them event by
event (a PyTorch op's shapes split over the kernels it launched; a command buffer's module split per launch)."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class EventWork:
    """Per event of one GPU: FLOPs and logical bytes (NaN unknown) and the index of its OpCost (hlo.op_cost) in
    `costs` (-1 none: its compute roof, dtype and method); an OpCost may carry no FLOPs and still say the dtype."""

    flops: np.ndarray
    bytes: np.ndarray
    cost_index: np.ndarray
    costs: tuple
