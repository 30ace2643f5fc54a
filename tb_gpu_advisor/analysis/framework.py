"""Which framework ran the profiled program (TensorFlow, JAX, PyTorch), from what its runtime left in the trace."""

from __future__ import annotations

import re
from dataclasses import dataclass

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import TraceModel


FRAMEWORKS = ("tensorflow", "jax", "pytorch", "unknown")
EVIDENCE_LISTED = 4

# Host events only TensorFlow's runtime writes: its executor, eager dispatch, tf.function calls, tf.data
# iterators (also used by JAX programs that read with tf.data, so they are input evidence, not model evidence).
_TF_RUNTIME = re.compile(
    r"^(ExecutorState::|EagerLocalExecute|EagerKernelExecute|TFE_Py|KernelAndDeviceFunc|"
    r"__inference_|StatefulPartitionedCall|FunctionRun$|RemoteCall)"
)
_TF_THREADS = ("tf_Compute", "tf_gpu_private", "collective_ops")
_TF_INPUT = re.compile(r"^(Iterator::|IteratorGetNext)")
# JAX: its dispatch (`PjitFunction(f)`), compiled modules named `jit_<f>`, and its Python tracer frames.
_JAX_EVENT = re.compile(r"^(PjitFunction\(|jit_\w+(:XLA|\(|$)|\$(pjit|dispatch|jax\S*)\.py)")
_JAX_MODULE = re.compile(r"^jit_\w+")
# PyTorch (Kineto traces): ATen operators and the profiler's step annotations.
_TORCH_EVENT = re.compile(r"^(aten::|ProfilerStep#|autograd::|torch/|c10d::|nccl:all_reduce)")
_KERAS_MARKER = "Profiled batch"
# tf.distribute at work: its collective threads, its per-device iterators, its collective ops (`name:Type`).
_STRATEGY_THREADS = ("collective_ops", "tf_data_multi_device_iterator")
_STRATEGY_EVENT = re.compile(
    r"MultiDeviceIterator|:(CollectiveReduceV\d|CollectiveGatherV\d|CollectiveBcast\w*|"
    r"CollectiveAllToAllV\d|NcclAllReduce)$"
)


@dataclass(frozen=True)
class Framework:
    """The framework that ran the model, the trace facts that say so, and side facts the advice needs."""

    name: str  # one of FRAMEWORKS
    evidence: tuple  # short sentences naming what was seen
    keras: bool = False  # Keras's `Profiled batch` step markers (Keras 3, any backend)
    tf_data: bool = False  # tf.data iterators feed the program (possible under JAX too)
    strategy: str | None = None  # what shows a tf.distribute strategy at work, e.g. "collective_ops threads"

    @property
    def is_tensorflow(self) -> bool:
        return self.name == "tensorflow"

    @property
    def is_jax(self) -> bool:
        return self.name == "jax"


def detect_framework(model: TraceModel) -> Framework:
    """Framework of a TraceModel; a JAX program that reads input with tf.data is JAX (with tf_data=True)."""
    names = model.host_activity.op_totals
    threads = model.host_activity.thread_busy
    jax, tf, torch = [], [], []
    if "jax_version" in model.environment or "jaxlib_version" in model.environment:
        jax.append(f"/host:metadata records jax_version {model.environment.get('jax_version', '?')}")
    jax_events = sorted(name for name in names if _JAX_EVENT.match(name))
    if jax_events:
        jax.append(f"JAX dispatch/compiled-module events ({_some(jax_events)})")
    modules = sorted({op for gpu in model.gpus for op in _module_names(gpu)})
    if modules:
        jax.append(f"GPU kernels of jit-compiled modules ({_some(modules)})")
    tf_events = sorted(name for name in names if _TF_RUNTIME.match(name))
    if tf_events:
        tf.append(f"TensorFlow runtime events ({_some(tf_events)})")
    tf_threads = sorted(kind for kind in threads if kind.startswith(_TF_THREADS))
    if tf_threads:
        tf.append(f"TensorFlow runtime threads ({_some(tf_threads)})")
    tf_kernels = any(
        name.startswith(("void tensorflow::", "tensorflow::")) or "Eigen::GpuDevice" in name
        for gpu in model.gpus
        for name in gpu.activity.names
    )
    if tf_kernels:
        tf.append("TensorFlow GPU kernels (tensorflow::functor, Eigen::GpuDevice)")
    torch_events = sorted(name for name in names if _TORCH_EVENT.match(name))
    if torch_events or getattr(model, "format", "") == "kineto":
        torch.append(f"PyTorch profiler events ({_some(torch_events) or 'Kineto trace'})")
    tf_data = any(_TF_INPUT.match(name) for name in names)
    keras = _KERAS_MARKER in names
    if tf_data:
        (jax if jax else tf).append("tf.data iterator events (Iterator::, IteratorGetNext)")
    if keras:
        (jax if jax else tf).append(f"Keras step markers ('{_KERAS_MARKER}')")
    strategy = distribution_strategy(model)
    # The model's framework wins over the input library's: JAX with tf.data input is a JAX program.
    for name, evidence in (("jax", jax), ("pytorch", torch), ("tensorflow", tf)):
        if evidence:
            return Framework(name, tuple(evidence), keras=keras, tf_data=tf_data, strategy=strategy)
    return Framework(
        "unknown",
        ("no framework-specific events, threads or metadata in the trace",),
        keras=keras,
        tf_data=tf_data,
        strategy=strategy,
    )


def distribution_strategy(model: TraceModel) -> str | None:
    """What shows a tf.distribute strategy at work in a trace with GPUs (threads, ops), or None."""
    return strategy_signals(model) if model.gpus else None


def strategy_signals(model: TraceModel) -> str | None:
    """What shows a tf.distribute strategy at work (threads, ops), GPUs or not, or None."""
    found = [
        f"{kind} threads" for kind in sorted(model.host_activity.thread_busy) if kind.startswith(_STRATEGY_THREADS)
    ]
    events = sorted(name for name in model.host_activity.op_totals if _STRATEGY_EVENT.search(name))
    if events:
        found.append(f"{events[0].rpartition(':')[2]} ops")
    return ", ".join(found[:2]) or None


def _module_names(gpu):
    return (name.partition(":")[0] for name in gpu.activity.op_names if _JAX_MODULE.match(name))


def _some(names):
    names = sorted(names, key=lambda name: (name.startswith("$"), name))  # dispatch events before Python frames
    shown = ", ".join(name if len(name) <= 60 else name[:57] + "..." for name in names[:EVIDENCE_LISTED])
    return shown + (f", +{len(names) - EVIDENCE_LISTED} more" if len(names) > EVIDENCE_LISTED else "")
