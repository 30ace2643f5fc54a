"""What host events are, by name and thread: tags (checkpoint, compile, GC, CPU ops, batch preparation...),
thread kinds, and which step markers count."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tb_gpu_advisor.model.host_waits import is_allocator_call, is_device_wait

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import StepMarker


# Exact names that mark a step (Keras/TF training loops); any event with `_r` and `step_num` does too.
_MARKER_NAMES = {"train", "test", "TraceContext"}
_KERAS3_MARKER = "Profiled batch"


def _is_input_wait(name):
    return name[:15].lower() == "iteratorgetnext"


# Host events located in time by what they do (HostActivity.tagged): TF op events are named `name:Type`.
_CHECKPOINT_TYPES = {"SaveV2", "Save", "SaveSlices", "MergeV2Checkpoints", "RestoreV2", "Restore", "RestoreSlice"}
_COMPILE = re.compile(r"backend_compile|XlaCompil|_XlaCompile", re.IGNORECASE)
# Python's garbage collector: PyTorch's profiler writes one `Python GC` event per collection
# (record_python_gc_info); JAX registers `_xla_gc_callback` in gc.callbacks, which the Python tracer records at
# the start and at the end of every collection.
_PYTHON_GC = "Python GC"
_JAX_GC_CALLBACK = re.compile(r"^\$\S+\.py:\d+ _xla_gc_callback$")


# TensorFlow op types with GPU kernels that cost real compute: on a host thread without a launch they ran on the
# CPU (findings.rules.placement). oneDNN's `_Mkl*` kernels are CPU-only by name.
COMPUTE_OP_TYPES = frozenset(
    {
        "MatMul",
        "BatchMatMul",
        "BatchMatMulV2",
        "BatchMatMulV3",
        "Conv2D",
        "Conv2DBackpropInput",
        "Conv2DBackpropFilter",
        "Conv3D",
        "Conv3DBackpropInputV2",
        "Conv3DBackpropFilterV2",
        "DepthwiseConv2dNative",
        "_FusedMatMul",
        "_FusedConv2D",
        "FusedBatchNormV3",
        "FusedBatchNormGradV3",
        "Einsum",
        "Sum",
        "Mean",
        "Max",
        "Min",
        "Prod",
        "ArgMax",
        "ArgMin",
        "Softmax",
        "LogSoftmax",
    }
)
# Functions of a training loop's batch preparation as the Python tracer names them (`$<file> <function>`):
# NumPy work, waits, transfers to the device and iterator calls (analysis.batch_prep names them as evidence).
PREP_FUNCTIONS = frozenset(
    {
        "sleep",
        "astype",
        "asarray",
        "array",
        "stack",
        "concatenate",
        "copy",
        "device_put",
        "__next__",
        "next",
        "read",
        "readinto",
        "load",
        "imread",
        "decode",
        "open",
        "permutation",
        "shuffle",
        "take",
        "choice",
        "random",
        "normal",
        "uniform",
        "randint",
        "integers",
        "frombuffer",
        "imdecode",
        "from_numpy",
        "pin_memory",
        "to",
        "cuda",
    }
)
# TensorFlow ops that read files or decode images: run on the step thread (eager, or in a tf.function outside
# tf.data) they are batch preparation; on tf.data's threads they are the pipeline's (never tagged there).
TF_FILE_READ_OPS = frozenset({"ReadFile"})
TF_DECODE_OPS = frozenset(
    {"DecodeJpeg", "DecodePng", "DecodeImage", "DecodeBmp", "DecodeGif", "DecodeAndCropJpeg", "DecodeWebP"}
)
# TensorFlow's own events for turning host values into tensors (the batch's way to the device).
TF_CONVERSIONS = frozenset({"convert_to_tensor", "tf.constant"})
TF_PREP_TAG = "tf_prep:"
# A tf.function call (`EagerLocalExecute: __inference_train_step_41`, or the function's own event): from here on
# TensorFlow runs the step's graph.
TF_FUNCTION_TAG = "tf_function"
_TF_FUNCTION_PREFIXES = ("EagerLocalExecute: __inference_", "__inference_")
# Host calls that block their thread on the device (model.host_waits).
DEVICE_WAIT_TAG = "device_wait"
# CUPTI's "Command Buffer Full" overhead records (Kineto `overhead` events): a launch call blocked on a full queue.
QUEUE_FULL_TAG = "queue_full"
# The device allocator's calls (model.host_waits.is_allocator_call).
ALLOCATOR_TAG = "allocator"
# Threads on which XLA's CPU client executes compiled programs: the "device" of a CPU-only JAX run.
XLA_CPU_EXECUTOR_THREADS = frozenset({"tf_XLAPjRtCpuClient", "tf_XLAEigen", "XLAPjRtCpuClient", "XLAEigen"})
XLA_CPU_TAG = "xla_cpu_execute"
# tf.py_function / tf.numpy_function calls run by a tf.data thread (a map function), apart from those in the step.
PY_FUNCTION_TYPES = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless"})
TF_DATA_PY_FUNCTION_TAG = "py_function_in_tf_data"


def on_tf_data_thread(line_name: str) -> bool:
    return thread_kind(line_name).startswith("tf_data")


def is_py_function_event(name: str) -> bool:
    return name.rpartition(":")[2] in PY_FUNCTION_TYPES


# TensorFlow op events (`name:Type`) run by a tf.data thread: a map function's ops, one span each (not the executor's
# wrappers, `ExecutorState::Process`, `ExecutorDoneCallback`, whose spans outlast the ops they run).
TF_DATA_MAP_OP_TAG = "tf_data_map_op"


def is_tf_op_event(name: str) -> bool:
    return ":" in name and "::" not in name and not name.startswith(("Iterator", "$"))


# PJRT's host part of a transfer from a host buffer to the device (JAX passing a NumPy array): staging and
# relayout of the batch on the host before the copy.
HOST_STAGING_TAG = "host_staging"
# Prefix of the tags of an op's untraced time where its call stalled (readers.kineto.op_stalls), and the tag of
# the stalls during which another thread started a host event.
OP_STALL_PREFIX = "op_stall:"
OP_STALL_NEAR_TAG = "op_stall_near"
_HOST_STAGING_EVENTS = frozenset({"H2D Dispatch"})
# The launch path's host work around a graph launch call: XLA updating a command buffer (the CUDA graph's
# arguments) and executing it, which holds the cuGraphLaunch call. The GPU waits on it as on a launch.
LAUNCH_WORK_TAG = "launch_work"
_LAUNCH_WORK_EVENTS = frozenset({"command_buffer::update", "command_buffer::execute"})
# The dispatch of a compiled program: JAX's (`PjitFunction(train_step)`) and torch.compile's (Dynamo's guard check
# and compiled region, which run the step's graphs): from here on the step runs, it no longer prepares its input.
_DISPATCH_PREFIXES = ("PjitFunction(", "PmapFunction(", "TorchDynamo Cache Lookup", "Torch-Compiled Region")


def event_tag(name: str) -> str | None:
    """The tag of a host event name or None: "checkpoint", "summary", "compile"; "gc" (PyTorch's Python GC event)
    and "gc_callback" (JAX's gc callback); "cpu_op:<name>" for a TensorFlow compute op (COMPUTE_OP_TYPES,
    `_Mkl*`); "py:<name>" for a Python-tracer call of PREP_FUNCTIONS; "dispatch" for the dispatch of a compiled
    program (JAX's, torch.compile's); "tf_function" for a tf.function call; "tf_prep:<name>" for a TensorFlow file
    read or image decode (TF_FILE_READ_OPS, TF_DECODE_OPS) or a conversion to a tensor (TF_CONVERSIONS), kept only
    off tf.data's threads; "device_wait" for a call that blocks its thread on the device, "allocator" for a device
    allocator call (model.host_waits); "host_staging" for PJRT's host part of a host-to-device transfer;
    "launch_work" for XLA's command-buffer update and execution around a graph launch."""
    if name == _PYTHON_GC:
        return "gc"
    if name.endswith("_xla_gc_callback") and _JAX_GC_CALLBACK.match(name):
        return "gc_callback"
    if is_device_wait(name):
        return DEVICE_WAIT_TAG
    if is_allocator_call(name):
        return ALLOCATOR_TAG
    op_name, sep, op_type = name.rpartition(":")
    if op_type in _CHECKPOINT_TYPES or "checkpoint" in name.lower():
        return "checkpoint"
    if "Summary" in op_type or op_type == "ImportEvent":
        return "summary"
    if _COMPILE.search(name):
        return "compile"
    if sep and op_name and " " not in op_type and (op_type in COMPUTE_OP_TYPES or op_type.startswith("_Mkl")):
        return f"cpu_op:{name}"
    if name.startswith("$") and name.rpartition(" ")[2] in PREP_FUNCTIONS:
        return f"py:{name}"
    if name.startswith(_DISPATCH_PREFIXES):
        return "dispatch"
    if name in _HOST_STAGING_EVENTS:
        return HOST_STAGING_TAG
    if name in _LAUNCH_WORK_EVENTS:
        return LAUNCH_WORK_TAG
    if name.startswith(_TF_FUNCTION_PREFIXES):
        return TF_FUNCTION_TAG
    file_op = _eager_op_type(name) or (op_type if sep and op_name else "")
    if file_op in TF_FILE_READ_OPS or file_op in TF_DECODE_OPS:
        return f"{TF_PREP_TAG}{file_op}"
    if name in TF_CONVERSIONS:
        return f"{TF_PREP_TAG}{name}"
    return None


_TF_FUNCTION_RUN = re.compile(r"^(?:EagerLocalExecute: )?__inference_(.+)_\d+$")


def event_tags(meta_names: dict[int, str]) -> dict[int, str]:
    """{metadata id: tag} of a plane's event names (event_tag); also "tf_function" for the Python call of a
    tf.function, the event TensorFlow names after the Python function (`train_step`) that runs
    `__inference_train_step_<N>`: its argument handling is the call's, not the loop's."""
    tags = {key: tag for key, name in meta_names.items() if (tag := event_tag(name))}
    functions = (
        {match[1] for name in meta_names.values() if (match := _TF_FUNCTION_RUN.match(name))}
        - _MARKER_NAMES
        - {_KERAS3_MARKER}
    )  # a tf.function named like the step marker: the marker stays one
    if functions:
        tags.update({key: TF_FUNCTION_TAG for key, name in meta_names.items() if name in functions})
    return tags


def step_thread_only(tag: str) -> bool:
    """Tags whose events mean what they say only off tf.data's threads: file ops, conversions and tf.function
    calls there are the pipeline's own work."""
    return tag == TF_FUNCTION_TAG or tag.startswith(TF_PREP_TAG)


def _eager_op_type(name):
    head, sep, op_type = name.partition(": ")
    return op_type if sep and head == "EagerLocalExecute" else ""


def thread_kind(line_name: str) -> str:
    """A thread's name without its `/<id>` suffix: `tf_data_private_threadpool/123` -> `tf_data_private_threadpool`."""
    head, sep, tail = line_name.rpartition("/")
    return head if sep and tail.lstrip("-").isdigit() else line_name


def outermost_markers(markers: Iterable[StepMarker]) -> tuple[StepMarker, ...]:
    """Drops markers nested inside another marker (a root inside a root belongs to the outer step)."""
    ordered = sorted(markers, key=lambda m: (m.start_ps, -m.end_ps))
    kept: list[StepMarker] = []
    for marker in ordered:
        if kept and marker.start_ps >= kept[-1].start_ps and marker.end_ps <= kept[-1].end_ps:
            continue
        kept.append(marker)
    return tuple(kept)
