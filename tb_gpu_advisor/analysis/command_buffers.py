"""FLOPs of the kernels XLA runs inside a command buffer (a CUDA graph): their events name the buffer
(`command_buffer_1`), not an HLO instruction. XLA's own kernels are found by their names (kernel `fusion_161`
runs instruction `fusion.161`); the library kernels (cuBLAS, cuDNN) of one graph launch share the module's
library-call FLOPs in proportion to their time: the total per launch is exact, the split between them is not."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis.kernel_names import is_library_math, uses_tensor_cores
from tb_gpu_advisor.readers.hlo.cost import instruction_cost
from tb_gpu_advisor.readers.hlo.library_calls import custom_call_cost
from tb_gpu_advisor.readers.hlo.op_cost import MATRIX, OpCost
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.model.work import EventWork


SPLIT_METHOD = "the module's library-call FLOPs per command-buffer launch, split over its library kernels by time"
_CONTROL_FLOW = ("while", "conditional", "call")


def instruction_of_kernel(name, index):
    """The HLO instruction an XLA kernel name stands for (`fusion_161` -> `fusion.161`, `loop_convert_fusion`
    itself), or None."""
    found = index.by_name.get(name)
    if found is not None:
        return found
    stem, _, number = name.rpartition("_")
    return index.by_name.get(f"{stem}.{number}") if stem and number.isdigit() else None


def _library_work(index, named):
    """(OpCost summed over the module's GEMM/convolution/attention custom-calls not in `named`, the dtype with
    the most FLOPs) or None when any is not costed exactly or the module has control flow (a loop would repeat
    them an unknown number of times)."""
    flops = nbytes = 0
    by_dtype, precisions = {}, set()
    for instruction in index.by_id.values():
        if instruction.opcode in _CONTROL_FLOW:
            return None
        if instruction.opcode != "custom-call" or instruction.name in named:
            continue
        operands = index.operands(instruction)
        cost = custom_call_cost(instruction, operands) if operands is not None else None
        if cost is None or cost.compute != MATRIX:
            continue
        if cost.flops is None or cost.bytes is None:
            return None
        flops += cost.flops
        nbytes += cost.bytes
        by_dtype[cost.dtype] = by_dtype.get(cost.dtype, 0) + cost.flops
        precisions.add(cost.precision)
    if not flops:
        return None
    dtype = max(by_dtype.items(), key=lambda item: item[1])[0]
    precision = next(iter(precisions)) if len(precisions) == 1 else None
    return OpCost(flops, nbytes, MATRIX, dtype, SPLIT_METHOD, None, precision)


def plausible(cost, seconds, peaks):
    """Whether one execution of `cost` fits in `seconds` on a GPU with DevicePeaks `peaks` (None: unknown, so
    yes): no more FLOP/s than its compute roof, no more logical bytes/s than HBM. A kernel name can match an
    instruction it does not run; a rate above the hardware's is that, never a fact."""
    if peaks is None or seconds <= 0:
        return seconds > 0
    roof = peaks.matrix_roof(cost.dtype) if cost.compute == MATRIX else peaks.vector_roof(cost.dtype)
    if cost.compute == MATRIX and cost.dtype not in (None, "bf16", "f16") and peaks.matrix_tflops:
        roof = max(roof or 0.0, peaks.matrix_tflops)  # the most any matrix unit of this GPU can do
    if cost.flops and roof and cost.flops / seconds > roof * 1e12:
        return False
    return not (cost.bytes and peaks.hbm_gbps and cost.bytes / seconds > peaks.hbm_gbps * 1e9)


def command_buffer_work(activity, indexes, peaks=None):
    """EventWork of the kernels of `activity` whose op is not an instruction of their module (a command buffer),
    with `indexes` {program id: hlo.cost.ModuleIndex}; None when there are none. With the GPU's DevicePeaks, a
    kernel whose name-matched instruction would need a rate above them (mean time per launch) is not costed."""
    if activity.program_id is None or not len(activity):
        return None
    kernels = (activity.kind == ActivityKind.KERNEL) & (activity.program_id >= 0) & (activity.op_id >= 0)
    candidates = [
        i
        for i in np.flatnonzero(kernels).tolist()
        if activity.program_id[i] in indexes
        and activity.op_names[activity.op_id[i]] not in indexes[activity.program_id[i]].by_name
    ]
    if not candidates:
        return None
    flops = np.full(len(activity), np.nan)
    nbytes = np.full(len(activity), np.nan)
    cost_index = np.full(len(activity), -1, dtype=np.int64)
    costs, cached = [], {}
    library = {}  # program id -> [event indexes]
    durations = {}  # (program id, kernel name) -> [summed ps, count]
    for i in candidates:
        entry = durations.setdefault((int(activity.program_id[i]), activity.names[activity.name_id[i]]), [0, 0])
        entry[0] += int(activity.duration_ps[i])
        entry[1] += 1
    for i in candidates:
        program = int(activity.program_id[i])
        name = activity.names[activity.name_id[i]]
        key = (program, name)
        if key not in cached:
            instruction = instruction_of_kernel(name, indexes[program])
            cost = instruction_cost(instruction, indexes[program]) if instruction is not None else None
            summed, count = durations[key]
            if cost is not None and not plausible(cost, summed / count / 1e12, peaks):
                cost = None
            cached[key] = None if cost is None else len(costs)
            if cost is not None:
                costs.append(cost)
        if cached[key] is not None:
            cost = costs[cached[key]]
            cost_index[i] = cached[key]
            flops[i] = np.nan if cost.flops is None else cost.flops
            nbytes[i] = np.nan if cost.bytes is None else cost.bytes
        elif is_library_math(name) or uses_tensor_cores(name):
            library.setdefault(program, []).append(i)
    for program, events in library.items():
        _split_library(activity, indexes[program], events, flops, nbytes, cost_index, costs)
    if (cost_index < 0).all():
        return None
    return EventWork(flops, nbytes, cost_index, tuple(costs))


def _split_library(activity, index, events, flops, nbytes, cost_index, costs):
    """Gives each graph launch (one correlation id) of a program with a single command buffer the module's
    library work, split over its library kernels by their time."""
    buffers = {activity.op_names[activity.op_id[i]] for i in events}
    named = {
        activity.op_names[op]
        for op in set(activity.op_id[activity.program_id == activity.program_id[events[0]]].tolist())
        if op >= 0
    }
    work = _library_work(index, named) if len(buffers) == 1 else None
    if work is None:
        return
    costs.append(work)
    where = np.array(events)
    launches = activity.correlation_id[where]
    duration = activity.duration_ps[where].astype(float)
    for launch in np.unique(launches).tolist():
        mine = where[launches == launch]
        total = duration[launches == launch].sum()
        if launch < 0 or total <= 0:
            continue
        share = activity.duration_ps[mine] / total
        flops[mine] = work.flops * share
        nbytes[mine] = work.bytes * share
        cost_index[mine] = len(costs) - 1
