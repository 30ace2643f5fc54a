"""Examples per step where the trace records them: the batch size of tf.data's batch stage times the batches a
step reads, the leading dimension of the data inputs of the compiled JAX step program, or the rows PyTorch's loss
operator scores (its input and target `Input Dims`); global or per device."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace

from tb_gpu_advisor.analysis.unused_gpus import replica_count
from tb_gpu_advisor.readers.hlo.signature import entry_signature
from tb_gpu_advisor.vocabulary import listed

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import TraceModel


GLOBAL = "global"
PER_DEVICE = "per_device"
# tf.data stages between the iterator's root and the batch stage that pass whole batches on unchanged in size.
_BATCH_PRESERVING = re.compile(
    r"^(Root|Prefetch|PrefetchToDevice|Map|ParallelMap|ParallelMapV2|Filter|"
    r"ParallelFilter|Shuffle|ShuffleAndRepeat|Repeat|ForeverRepeat|FiniteRepeat|Take|"
    r"FiniteTake|Skip|FiniteSkip|Cache|CacheV2|MemoryCache|"
    r"MemoryReader|Options|Model|MaxIntraOpParallelism|PrivateThreadPool|"
    r"AssertCardinality|AssertNext|Interleave|ParallelInterleave(V[234])?|Snapshot|"
    r"Finalize|Zip|Concatenate|Ignore(Errors)?|TakeWhile)$"
)
_REBATCH = re.compile(r"^Rebatch")
# An iterator's index among its parent's inputs, as in `ForeverRepeat[0]`.
_INPUT_INDEX = re.compile(r"\[\d+\]$")
# A step reads a whole number of batches when the iterator's reads stay within this of that many per step.
_READS_TOLERANCE = 0.1
_MIN_READS_SLACK = 2
# JAX's dispatch of a compiled function `f` (`PjitFunction(f)`) and the module it runs (`jit_f`, `pmap_f`).
_DISPATCH = re.compile(r"^(Pjit|Pmap)Function\((?P<name>[^()]+)\)$")
_MODULE = re.compile(r"^(jit|pjit|pmap|xmap)_(?P<name>.+)$")  # then less any `.<digits>` suffix
# Of several programs that take a batch, the step program holds at least this share of their dispatch time.
MIN_STEP_PROGRAM_SHARE = 0.5
# JAX PRNG keys passed as inputs: uint32 arrays of 2 (threefry) or 4 words; not examples.
_KEY_SHAPES = {("u32", (2,)), ("u32", (4,))}


@dataclass(frozen=True)
class ExamplesPerStep:
    """How many examples a training step processes, where the trace says it; None and the reason otherwise."""

    examples: int | None
    scope: str | None  # GLOBAL (the whole step) or PER_DEVICE (one device's share)
    source: str | None  # where the number comes from, in words
    reason: str | None  # why `examples` is None, or why it is only per device
    devices: int = 1  # the devices the step program spans (its device assignment: SPMD partitions, pmap replicas)

    @property
    def global_batch(self) -> int | None:
        return self.examples if self.scope == GLOBAL else None


def unknown(reason: str) -> ExamplesPerStep:
    return ExamplesPerStep(None, None, None, reason)


def examples_per_step(
    model: TraceModel, strategy: str | None, steps: tuple, active_gpus: tuple[int, ...]
) -> ExamplesPerStep:
    """The ExamplesPerStep of a host's trace; pure. `strategy`: what shows a tf.distribute strategy (or None);
    `steps`: the steps found (with start_ps, end_ps); `active_gpus`: the GPUs that ran the steps."""
    host = model.host_activity
    step_count = len(steps)
    if model.format == "kineto":
        return _from_loss(model, steps, active_gpus)
    if host.batch_stages:
        return _from_tf_data(host, strategy, step_count, active_gpus, model.environment, replica_count(model))
    if model.hlo_protos:
        return _from_step_program(model, step_count, active_gpus)
    return unknown(
        "the trace records no input batch: no tf.data batch stage with a batch size and no compiled XLA program"
    )


def _stage_path(name):
    return [_INPUT_INDEX.sub("", stage) for stage in name.split("::")[1:]]


def _from_tf_data(host, strategy, step_count, active_gpus, environment, replicas):
    sizes = sorted({size for stages in host.batch_stages.values() for size, _ in stages})
    names = sorted(host.batch_stages)
    if len(sizes) > 1:
        return unknown(
            "tf.data batch stages with different batch sizes ("
            + listed(sizes)
            + "): several pipelines or nested batching"
        )
    size = sizes[0]
    rebatched = False
    for name in names:
        above = _stage_path(name)[:-1]
        for stage in above:
            if _REBATCH.match(stage):
                rebatched = True
            elif not _BATCH_PRESERVING.match(stage):
                return unknown(
                    f"the tf.data batch stage {name} (batch size {size}) sits under {stage}, which "
                    "changes how many examples an element holds"
                )
    if not step_count:
        return unknown(f"tf.data batches {size} examples, but the trace marks no steps: batches per step unknown")
    # A rebatched pipeline's iterators are read once per replica; its batch stage runs once per global batch.
    reads = (
        sum(count for stages in host.batch_stages.values() for _, count in stages)
        if rebatched
        else (host.op_totals.get("Iterator::Root") or (0, 0))[0]
    )
    batches = round(reads / step_count)
    if batches < 1 or abs(reads - batches * step_count) > max(
        _MIN_READS_SLACK, _READS_TOLERANCE * batches * step_count
    ):
        counted = "batch stage ran" if rebatched else "iterator was read"
        return unknown(
            f"tf.data batches {size} examples, but its {counted} {reads} times over {step_count} steps: "
            "not a whole number of batches per step"
        )
    examples = size * batches
    per_read = "1 batch per step" if batches == 1 else f"{batches} batches per step"
    source = f"tf.data batch stage {names[0].rpartition('::')[2]}, batch size {size}, {per_read}"
    if rebatched:
        split = _rebatched(host, names, size, batches, step_count, replicas)
        return ExamplesPerStep(examples, GLOBAL, f"{source}; {split}", None)
    world = environment.get("world_size")
    if strategy or len(active_gpus) > 1 or world not in (None, "", 1, "1"):
        what = f"tf.distribute ({strategy})" if strategy else f"{max(len(active_gpus), 1)} GPUs"
        return unknown(
            f"tf.data batches {size} examples ({per_read}), but under {what} the trace does not say "
            "whether that batch is per replica or global"
        )
    return ExamplesPerStep(examples, GLOBAL, source, None)


def _rebatched(host, names, size, batches, step_count, replicas):
    """How tf.distribute splits each batch: across a replica count only where the replica names (`replica_k/`)
    and the reads of the rebatch stage (once per replica and batch) agree on it."""
    parts = names[0].split("::")
    at = next(i for i, part in enumerate(parts) if _REBATCH.match(_INPUT_INDEX.sub("", part)))
    reads = (host.op_totals.get("::".join(parts[: at + 1])) or (0, 0))[0]
    expected = (replicas or 0) * batches * step_count
    if not replicas or abs(reads - expected) > max(_MIN_READS_SLACK, _READS_TOLERANCE * expected):
        seen = ([f"the rebatch stage ran {reads} times over {step_count} steps"] if reads else []) + (
            [f"the host names {replicas} replicas"] if replicas else []
        )
        return "tf.distribute rebatches it across its replicas; the trace does not say how many for sure" + (
            f" ({', '.join(seen)})" if seen else ""
        )
    share = f"{size // replicas}" if size % replicas == 0 else f"{size // replicas} to {size // replicas + 1}"
    return f"rebatched across {replicas} replicas: {share} per replica" + (" of each batch" if batches > 1 else "")


def _dispatch_ps(op_totals):
    """{function name: (dispatch events, total ps)} of JAX's compiled-function dispatches."""
    found = {}
    for name, (count, total) in op_totals.items():
        match = _DISPATCH.match(name)
        if match:
            entry = found.setdefault(match["name"], [0, 0])
            entry[0] += count
            entry[1] += total
    return found


def _split_inputs(signature):
    """(state, data) of a program's parameters: state is returned (matched to the results by element type and
    dimensions: carried from step to step), data is the other arrays, PRNG keys left out."""
    returned = {}
    for result in signature.results:
        returned[result] = returned.get(result, 0) + 1
    state, data = [], []
    for name, dtype, dims in signature.parameters:
        if returned.get((dtype, dims)):
            returned[(dtype, dims)] -= 1
            state.append((name, dtype, dims))
        elif dims and (dtype, dims) not in _KEY_SHAPES:
            data.append((name, dtype, dims))
    return state, data


def _shape_text(dtype, dims):
    return f"{dtype}[{','.join(str(d) for d in dims)}]"


def _step_programs(model, step_count):
    """{function name: [(program id, Signature, data inputs)]} of the compiled programs dispatched every step
    that take data (inputs they do not return): the candidates for the training step."""
    dispatched = _dispatch_ps(model.host_activity.op_totals)
    found = {}
    for program_id, data in sorted(model.hlo_protos.items()):
        signature = entry_signature(data)
        name = _module_function(signature.module) if signature else None
        if not name or dispatched.get(name, (0, 0))[0] < step_count:
            continue
        _, inputs = _split_inputs(signature)
        if inputs:
            found.setdefault(name, []).append((program_id, signature, inputs))
    return found, dispatched


def _module_function(module):
    """The function a JAX module compiles (`jit_f.3` -> `f`), or None."""
    match = _MODULE.match(module)
    if not match:
        return None
    head, dot, tail = match["name"].rpartition(".")
    return head if dot and head and tail.isdecimal() else match["name"]


def _from_step_program(model, step_count, active_gpus):
    if not step_count:
        return unknown("the trace marks no steps: examples per step are not known")
    programs, dispatched = _step_programs(model, step_count)
    if not programs:
        return unknown(
            "no compiled program dispatched every step takes an input it does not return "
            "(JAX PjitFunction dispatches and the programs' HLO inputs)"
        )
    total = sum(dispatched[name][1] for name in programs)
    name = max(programs, key=lambda key: (dispatched[key][1], key))
    if len(programs) > 1 and dispatched[name][1] < MIN_STEP_PROGRAM_SHARE * total:
        return unknown(
            f"none of the {len(programs)} compiled programs that take a batch holds most of the "
            "dispatch time: the step runs op by op or as several programs"
        )
    batches, inputs = set(), []
    for _, signature, data in programs[name]:
        leading = {dims[0] for _, _, dims in data}
        if len(leading) > 1:
            shapes = listed(f"{param} {_shape_text(dtype, dims)}" for param, dtype, dims in data)
            return unknown(
                f"the inputs of the step program {signature.module} differ in their leading dimension "
                f"({shapes}): which is the batch is not known"
            )
        batches |= leading
        inputs = data
    if len(batches) > 1:
        return unknown(
            f"the step program {programs[name][0][1].module} was compiled for different batches ("
            + listed(sorted(batches))
            + ")"
        )
    examples = batches.pop()
    signature = programs[name][0][1]
    module = signature.module
    source = f"input batch of the XLA step program {module} ({_shapes(inputs)})"
    if signature.devices > 1:
        return _partitioned(signature, inputs, examples, source)
    ids = {program_id for program_id, _, _ in programs[name]}
    devices = [
        gpu.ordinal
        for gpu in model.gpus
        if gpu.activity.program_id is not None and _runs_any(gpu.activity.program_id, ids)
    ]
    running = len(devices) or len(active_gpus)
    world = model.environment.get("world_size")
    if running > 1 or world not in (None, "", 1, "1"):
        where = f"{running} GPUs run the step program" if running > 1 else f"{world} processes run the job"
        return ExamplesPerStep(
            examples, PER_DEVICE, source, f"{where}; how the batch is split across them is not in the trace"
        )
    return ExamplesPerStep(examples, GLOBAL, source, None)


def _shapes(inputs):
    return listed(f"{param.removesuffix('.1')} {_shape_text(dtype, dims)}" for param, dtype, dims in inputs)


def _partitioned(signature, inputs, examples, source):
    """Examples per step of a step program that spans several devices (SPMD partitions, pmap replicas): its input
    shapes are one device's; global where the inputs' shardings say how the leading dimension is split."""
    shards_of = dict(zip((param for param, _, _ in signature.parameters), signature.leading_shards))
    shards = {shards_of.get(param) for param, _, _ in inputs}
    devices = f"the step program runs on {signature.devices} devices (its device assignment)"
    if len(shards) == 1 and None not in shards:
        split = shards.pop()
        if split > 1 and examples == 1:
            # pmap's inputs stack one slice per device: [devices, batch, ...], split into [1, batch, ...]
            return replace(
                unknown(
                    f"the inputs of the step program {signature.module} ({_shapes(inputs)}) have a leading "
                    f"dimension split {split} ways into 1 per device: a device axis (pmap) or a batch of "
                    f"{split}; the trace does not say which"
                ),
                devices=signature.devices,
            )
        how = (
            "each device takes the whole batch"
            if split == 1
            else f"its inputs are split {split} ways on their leading dimension: {examples} per device"
        )
        return ExamplesPerStep(examples * split, GLOBAL, f"{source}; {devices}, {how}", None, signature.devices)
    return ExamplesPerStep(
        examples,
        PER_DEVICE,
        source,
        f"{devices}: its input shapes are one device's share, and the program does not record "
        "how the batch is split across them (no sharding on its inputs, as under pmap)",
        signature.devices,
    )


def _runs_any(program_ids, wanted):
    return bool(len(program_ids)) and any(int(value) in wanted for value in set(program_ids.tolist()))


def _outermost(calls):
    """The loss calls not inside another (cross entropy encloses the NLL loss it calls); `calls` by start."""
    kept = []
    for call in calls:
        if kept and call[1] >= kept[-1][1] and call[2] <= kept[-1][2]:
            continue
        kept.append(call)
    return kept


def _dims_text(dims):
    return "[" + ",".join(str(d) for d in dims) + "]"


def _calls_per_step(calls, steps):
    """How many of the calls start in each step."""
    starts = sorted(call[1] for call in calls)
    return [bisect.bisect_left(starts, step.end_ps) - bisect.bisect_left(starts, step.start_ps) for step in steps]


def _from_loss(model, steps, active_gpus):
    calls = _outermost(model.host_activity.loss_calls)
    if not calls:
        return unknown(
            "a PyTorch trace without a loss operator (aten::*_loss, cross entropy): which input is the "
            "batch is not recorded"
        )
    if any(dims is None for _, _, _, dims in calls):
        return unknown("the loss operator's input shapes are not recorded (profile with record_shapes=True)")
    if not steps:
        return unknown("the trace marks no steps: examples per step are not known")
    per_step = _calls_per_step(calls, steps)
    if max(per_step) > 1 or 2 * per_step.count(1) < len(steps):
        return unknown(
            f"the loss runs {sum(per_step)} times over {len(steps)} steps (at most {max(per_step)} in "
            "one): micro-batches, several losses or steps without one, so its rows are not the step's "
            "examples"
        )
    calls = [call for call in calls if any(step.start_ps <= call[1] < step.end_ps for step in steps)]
    rows = set()
    for name, _, _, dims in calls:
        if len(dims) < 2 or not dims[0] or not dims[1] or dims[0][0] != dims[1][0]:
            return unknown(
                f"the input and target of {name} ({', '.join(_dims_text(d) for d in dims[:2])}) do "
                "not share a leading dimension"
            )
        rows.add(dims[0][0])
    if len(rows) > 1:
        return unknown("the loss scores different numbers of rows from step to step (" + listed(sorted(rows)) + ")")
    if "aten::embedding" in model.host_activity.op_totals:
        return unknown(
            f"the loss scores {min(rows)} rows per step, but the model embeds tokens: the rows may be "
            "the tokens of flattened sequences rather than examples"
        )
    name, _, _, dims = calls[-1]
    source = f"rows of the loss's input and target ({name} {_dims_text(dims[0])}, {_dims_text(dims[1])}), once per step"
    examples = rows.pop()
    world = model.environment.get("world_size")
    if world not in (None, "", 1, "1"):
        return ExamplesPerStep(
            examples,
            PER_DEVICE,
            source,
            f"{world} ranks run the job; how the batch is split across them is not in the trace",
        )
    if len(active_gpus) > 1:
        return ExamplesPerStep(
            examples,
            PER_DEVICE,
            source,
            f"{len(active_gpus)} GPUs run the steps; how the batch is split across them is not in the trace",
        )
    return ExamplesPerStep(examples, GLOBAL, source, None)
