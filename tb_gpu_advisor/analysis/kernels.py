"""The kernel table: kernels aggregated by XProf's key (name, grid, block, registers, shared memory, op), with
the FLOPs and logical bytes of the HLO instruction each kernel runs where the trace carries its module."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.command_buffers import SPLIT_METHOD
from tb_gpu_advisor.analysis.kernel_names import is_tensor_core_eligible, uses_matrix_units
from tb_gpu_advisor.analysis.op_split import OP_SPLIT_METHOD, matrix_work, runs_on_tensor_cores
from tb_gpu_advisor.analysis.plausibility import implausible_values, recorded_occupancy
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.roofline import KernelCosts
    from tb_gpu_advisor.model.trace import DeviceActivity


@dataclass(frozen=True)
class KernelRow:
    """One row of the kernel table; a launch value no GPU allows is None, and listed in `implausible`."""

    name: str
    occurrences: int
    total_ps: int
    min_ps: int
    max_ps: int
    occupancy_pct: float | None
    registers_per_thread: int | None
    shared_memory_bytes: int | None
    grid: tuple
    block: tuple | None
    uses_tensor_cores: bool
    tensor_core_eligible: bool
    op_name: str
    implausible: tuple = ()  # analysis.plausibility.Implausible
    flops: float | None = None  # summed over occurrences; None unless every occurrence was costed
    bytes: float | None = None  # logical bytes, summed like flops
    compute: str | None = None  # "matrix" or "vector": the compute roof of the op (hlo.cost)
    dtype: str | None = None
    matrix_dims: tuple | None = None  # (batch, M, N, K) of its GEMM or first dot
    matrix_precision: str | None = None  # its matrix op's operand precision (HLO precision_config): "HIGHEST"...
    achieved_occupancy_pct: float | None = None  # the trace's estimate of achieved occupancy (Kineto), if any
    # Its FLOPs and bytes are its share of the module's library calls, split by time over a command buffer's
    # library kernels (analysis.command_buffers): its rates are the module's average, not its own.
    cost_shared: bool = False
    # "module" (above) or "op": a PyTorch op's FLOPs split by time over kernels of several names, none known to
    # be its matrix kernel (analysis.op_split); None when not shared.
    cost_shared_by: str | None = None


_SHARED_BY = {SPLIT_METHOD: "module", OP_SPLIT_METHOD: "op"}


def launch_recorded(row: KernelRow) -> bool:
    """False where the trace gave no launch configuration: the readers fill a missing one with a 1 x 1 x 1 grid
    and block, no registers and no shared memory (Kineto on ROCm), which no real kernel launches with."""
    blank = tuple(row.grid or ()) == (1, 1, 1) and row.block in ((1, 1, 1), None)
    return not (blank and not row.registers_per_thread and not row.shared_memory_bytes)


def kernel_table(gpus: tuple, costs: KernelCosts | None = None) -> tuple[KernelRow, ...]:
    """KernelRows over all GPUs, most total time first; only kernels with launch details, like XProf.

    `costs` ({(program id, op name): OpCost or None}, analysis.roofline.kernel_costs) fills the FLOPs and bytes.
    """
    rows = []
    for gpu in gpus:
        activity = gpu.activity
        selected = (activity.kind == ActivityKind.KERNEL) & (activity.config_id >= 0)
        if not selected.any():
            continue
        keys = np.stack([activity.name_id[selected], activity.config_id[selected], activity.op_id[selected]], axis=1)
        durations = activity.duration_ps[selected]
        unique, inverse = _unique_rows(keys)
        totals = np.bincount(inverse, weights=durations, minlength=len(unique))
        counts = np.bincount(inverse, minlength=len(unique))
        mins = np.full(len(unique), np.iinfo(np.int64).max, dtype=np.int64)
        maxs = np.zeros(len(unique), dtype=np.int64)
        np.minimum.at(mins, inverse, durations)
        np.maximum.at(maxs, inverse, durations)
        exact_totals = np.zeros(len(unique), dtype=np.int64)
        np.add.at(exact_totals, inverse, durations)
        del totals
        work = _row_work(activity, selected, inverse, len(unique), costs or {})
        for index, (name_id, config_id, op_id) in enumerate(unique):
            rows.append(
                (
                    activity.names[name_id],
                    activity.configs[config_id],
                    activity.op_names[op_id] if op_id >= 0 else "",
                    int(counts[index]),
                    int(exact_totals[index]),
                    int(mins[index]),
                    int(maxs[index]),
                    gpu.capabilities,
                    work[index],
                )
            )
    return _merge_and_sort(rows)


def event_costs(activity, costs):
    """Per event: (FLOPs, logical bytes) as float arrays, NaN where unknown, the index of its OpCost in the
    returned list (0: none) and that list (`[None, OpCost, ...]`). An HLO cost wins over a TF signature's.

    An HLO op that lowers to several kernels is counted once per execution, split over its kernels by their
    time (execution_shares)."""
    count = len(activity)
    index = np.zeros(count, dtype=np.int64)
    share = np.ones(count)
    found = [None]
    if costs and activity.program_id is not None:
        if activity.tf_signature_id is not None and activity.tf_signatures:
            table = np.array(
                [_add(found, costs.get(("tf",) + tuple(signature))) for signature in activity.tf_signatures],
                dtype=np.int64,
            )
            signed = np.flatnonzero(activity.tf_signature_id >= 0)
            index[signed] = table[activity.tf_signature_id[signed]]
        keyed = np.flatnonzero((activity.program_id >= 0) & (activity.op_id >= 0))
        if len(keyed):
            pairs = np.stack([activity.program_id[keyed], activity.op_id[keyed]], axis=1)
            unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
            table = np.array(
                [
                    _add(found, costs.get((program_id, activity.op_names[op_id])))
                    for program_id, op_id in unique.tolist()
                ],
                dtype=np.int64,
            )
            group = np.asarray(inverse).reshape(-1)
            chosen = table[group]
            index[keyed[chosen > 0]] = chosen[chosen > 0]
            share[keyed] = execution_shares(activity, keyed, group, len(unique))
    flops = np.array([np.nan] + [np.nan if c.flops is None else float(c.flops) for c in found[1:]])[index] * share
    nbytes = np.array([np.nan] + [np.nan if c.bytes is None else float(c.bytes) for c in found[1:]])[index] * share
    # Events costed one by one: by the reader (PyTorch op shapes), then by a command buffer's module.
    for work in (matrix_work(activity), getattr(costs, "events", {}).get(activity) if costs else None):
        if work is not None:
            costed = work.cost_index >= 0
            index[costed] = work.cost_index[costed] + len(found)
            found.extend(work.costs)
            flops[costed] = work.flops[costed]
            nbytes[costed] = work.bytes[costed]
    return flops, nbytes, index, found


def execution_shares(activity: DeviceActivity, events: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    """Per event of `events` (indices into `activity`, each in one of `groups` HLO ops by `group`): the share of
    one execution of its op's work it did. An op whose kernels all have one name runs one kernel per execution
    (share 1); one that lowers to kernels of several names ran as many times as its most frequent kernel, and
    each kernel gets that many executions' work times its share of the op's kernel time."""
    shares = np.ones(len(events))
    kernels = np.flatnonzero(activity.kind[events] == int(ActivityKind.KERNEL))
    if not len(kernels):
        return shares
    op = group[kernels]
    named, per_name = np.unique(np.stack([op, activity.name_id[events[kernels]]], axis=1), axis=0, return_counts=True)
    names = np.bincount(named[:, 0], minlength=groups)
    executions = np.zeros(groups)
    np.maximum.at(executions, named[:, 0], per_name)
    duration = activity.duration_ps[events[kernels]].astype(float)
    total = np.bincount(op, weights=duration, minlength=groups)
    occurrences = np.bincount(op, minlength=groups)
    fraction = np.where(total[op] > 0, duration / np.maximum(total[op], 1.0), 1.0 / occurrences[op])
    split = names[op] > 1
    shares[kernels[split]] = (executions[op] * fraction)[split]
    return shares


def _add(found, cost):
    """Appends a cost to the list and returns its index; 0 for None."""
    if cost is None:
        return 0
    found.append(cost)
    return len(found) - 1


def _row_work(activity, selected, inverse, count, costs):
    """(FLOPs, bytes, OpCost of the row's first event) per row; a total is None if an occurrence is unknown."""
    if not costs and activity.work is None:
        return [(None, None, None)] * count
    flops, nbytes, index, found = event_costs(activity, costs)
    sums = []
    for values in (flops[selected], nbytes[selected]):
        known = np.bincount(inverse, weights=np.nan_to_num(values), minlength=count)
        unknown = np.bincount(inverse, weights=np.isnan(values), minlength=count)
        sums.append([None if missing else float(total) for total, missing in zip(known, unknown)])
    first = np.full(count, -1, dtype=np.int64)
    first[inverse[::-1]] = np.arange(len(inverse))[::-1]
    chosen = index[selected]
    return [(sums[0][row], sums[1][row], found[chosen[first[row]]]) for row in range(count)]


def _unique_rows(keys):
    """np.unique(keys, axis=0, return_inverse=True) for rows of non-negative ids (op id may be -1), via one
    int64 key per row: the same rows in the same order, without the slow row-wise sort."""
    shifted = keys.astype(np.int64) + np.array([0, 0, 1])
    bases = shifted.max(axis=0) + 1
    if float(bases[0]) * float(bases[1]) * float(bases[2]) >= 2.0**62 or (shifted < 0).any():
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
        return unique, inverse.reshape(-1)
    combined = (shifted[:, 0] * bases[1] + shifted[:, 1]) * bases[2] + shifted[:, 2]
    unique, inverse = np.unique(combined, return_inverse=True)
    rows = np.stack([unique // (bases[1] * bases[2]), unique // bases[2] % bases[1], unique % bases[2] - 1], axis=1)
    return rows.astype(keys.dtype), inverse.reshape(-1)


def _merge_and_sort(rows):
    """Merges rows with equal keys across GPUs and sorts by total time."""
    merged = {}
    for name, config, op_name, count, total, low, high, capabilities, (flops, nbytes, cost) in rows:
        key = (
            name,
            config.grid,
            config.block,
            config.registers_per_thread,
            config.static_shared_bytes,
            config.dynamic_shared_bytes,
            op_name,
        )
        found = merged.get(key)
        if found is None:
            merged[key] = [config, count, total, low, high, capabilities, flops, nbytes, cost]
        else:
            found[1] += count
            found[2] += total
            found[3] = min(found[3], low)
            found[4] = max(found[4], high)
            found[6] = None if found[6] is None or flops is None else found[6] + flops
            found[7] = None if found[7] is None or nbytes is None else found[7] + nbytes
            found[8] = found[8] or cost
    table = []
    for (name, grid, block, regs, _, _, op_name), (
        config,
        count,
        total,
        low,
        high,
        capabilities,
        flops,
        nbytes,
        cost,
    ) in merged.items():
        tensor_cores = uses_matrix_units(name, capabilities.vendor) or runs_on_tensor_cores(
            name, cost, flops, total, capabilities
        )
        implausible = implausible_values(config, capabilities)
        bad = {item.field for item in implausible}
        table.append(
            KernelRow(
                name=name,
                occurrences=count,
                total_ps=total,
                min_ps=low,
                max_ps=high,
                occupancy_pct=recorded_occupancy(config, implausible),
                achieved_occupancy_pct=config.achieved_occupancy_pct,
                registers_per_thread=None if "registers_per_thread" in bad else regs,
                shared_memory_bytes=None if "shared_memory_bytes" in bad else config.shared_memory_bytes,
                grid=grid,
                block=None if "block" in bad else block,
                implausible=implausible,
                uses_tensor_cores=tensor_cores,
                tensor_core_eligible=tensor_cores or is_tensor_core_eligible(op_name, name),
                op_name=op_name,
                flops=flops,
                bytes=nbytes,
                compute=cost.compute if cost else None,
                dtype=cost.dtype if cost else None,
                matrix_dims=cost.matrix_dims if cost else None,
                matrix_precision=cost.precision if cost else None,
                cost_shared=cost is not None and cost.method in (SPLIT_METHOD, OP_SPLIT_METHOD),
                cost_shared_by=None if cost is None else _SHARED_BY.get(cost.method),
            )
        )
    table.sort(
        key=lambda r: (-r.total_ps, -r.occurrences, -(r.registers_per_thread or 0), r.name, r.grid, r.block or ())
    )
    return tuple(table)


def op_dtypes_by_name(kernels: tuple[KernelRow, ...]) -> dict[str, str]:
    """{kernel name: its op's element type} for the kernel rows with one type per name: what a row of the same
    kernel without an op of its own computes in."""
    found: dict[str, set] = {}
    for row in kernels:
        if row.dtype is not None:
            found.setdefault(row.name, set()).add(row.dtype)
    return {name: next(iter(types)) for name, types in found.items() if len(types) == 1}
