"""One step of a JAX training loop on GPU as `jax.profiler.trace` records it with the Python tracer on: the step
marker, the batch prepared on the step thread (or in a loader's worker processes), `jax.device_put`, the jitted step's
dispatch (`PjitFunction`), its XLA kernels launched from PJRT's thread, and reading the loss back.

The loop is `for step in ...: with jax.profiler.StepTraceAnnotation("train", step_num=step): batch = next(it);
state, loss = train_step(state, batch); float(loss)`.
"""

from dataclasses import dataclass

from tb_gpu_advisor.scenarios.common import BETWEEN_STEPS_US, CUDA_VERSIONS, FIRST_STEP, START_US
from tb_gpu_advisor.scenarios.engine import COMPUTE_STREAM, D2H_STREAM, H2D_STREAM, Gpu, HostCosts, launch_ops, memcpy
from tb_gpu_advisor.scenarios.jitter import grid_us, scaled_ops
from tb_gpu_advisor.testing.builder import TraceBuilder

JAX_VERSION = "0.4.35"
PROGRAM_ID = 7
MODULE = "jit_train_step"
DISPATCH = "PjitFunction(train_step)"
DEVICE_PUT = "$api.py:2430 device_put"
PREFILL_US = 20_000.0  # the first batch is sent this long before the first profiled step (prefetch_to_device)
XLA_COSTS = HostCosts(before_launch_us=24.0, launch_us=3.0, after_launch_us=2.0, between_ops_us=1.5)


@dataclass
class JaxRun:
    builder: TraceBuilder
    python: object  # the step thread
    pjrt: object  # PJRT's thread that launches the compiled program's kernels
    gpu: Gpu


def new_jax_run(spec, hostname, hlo_module=None):
    """A JAX trace on one GPU of `spec` with JAX's metadata and, optionally, the serialized HLO of the step."""
    builder = TraceBuilder(hostname=hostname, first_correlation_id=91_377)
    builder.metadata(jax_version=JAX_VERSION, jaxlib_version=JAX_VERSION, **CUDA_VERSIONS)
    if hlo_module is not None:
        builder.hlo_module(PROGRAM_ID, MODULE, hlo_module)
    return JaxRun(
        builder,
        builder.thread("python", thread_id=4_611),
        builder.thread("tf_pjrt_thread_pool/4801", thread_id=4_801),
        Gpu(builder.gpu(0, **spec.plane_kwargs()), spec),
    )


@dataclass(frozen=True)
class Batch:
    """How a batch reaches the device: the Python-tracer calls (name, us) the step thread makes to build it, the
    copies to the device (bytes, us), and whether they are sent one step ahead (flax's `prefetch_to_device`:
    taking a batch from its queue issues the next batch's `device_put`; a loader with worker
    processes, e.g. grain, builds the batches in other processes, which this trace does not show)."""

    calls: tuple
    copies: tuple
    sent_ahead: bool = False


def _send(run, thread, start_us, copies, gpu_factor):
    """`jax.device_put` of each array on `thread`; returns (host end, when the data is on the device)."""
    t, ready = start_us, 0.0
    for size, us in copies:
        begin = t
        host_end, ready = memcpy(
            thread,
            run.gpu,
            "h2d",
            t + 2.0,
            size,
            grid_us(us * gpu_factor),
            src="pinned",
            dst="device",
            is_async=True,
            stream=H2D_STREAM,
        )
        thread.event(DEVICE_PUT, begin, host_end + 1.0 - begin)
        t = host_end + 2.0
    return t, ready


def run_jax_steps(run, steps, batch, ops, *, jitter=None, program_id=None):
    """`steps` steps back to back; returns the end of the last one. `program_id` (PROGRAM_ID) puts the module's
    id on each kernel, as XLA does, so the kernels can be matched to the module's instructions."""
    t = START_US + PREFILL_US
    noise = jitter.steps(steps) if jitter is not None else [None] * steps
    ahead_ready = None
    for index, step_noise in enumerate(noise):
        host = step_noise.host if step_noise else 1.0
        gpu = step_noise.gpu if step_noise else 1.0
        step_ops = scaled_ops(ops, step_noise) if step_noise else ops
        start = t
        t = start + 2.0
        for name, us in batch.calls:
            us = grid_us(us * host)
            run.python.event(name, t, us)
            t += us
        if batch.sent_ahead:
            if ahead_ready is None:  # the first batch went to the device before profiling started
                _, ahead_ready = _send(run, run.python, start - PREFILL_US, batch.copies, gpu)
            # flax's prefetch_to_device: taking a batch from its queue issues the device_put of the next one,
            # which copies while this step computes
            data_ready = ahead_ready
            run.python.event("$queue.py:154 get", t, 6.0)
            t, ahead_ready = _send(run, run.python, t + 8.0, batch.copies, gpu)
        else:
            t, data_ready = _send(run, run.python, t, batch.copies, gpu)
        run.python.event(DISPATCH, t, 45.0)
        end_launch = launch_ops(
            run.pjrt,
            run.gpu,
            step_ops,
            t + 20.0,
            costs=XLA_COSTS,
            not_before_us=data_ready,
            hlo_module=MODULE,
            op_events=False,
            program_id=program_id,
        )
        run.pjrt.event("ExecuteHelper", t + 18.0, end_launch + 1.0 - (t + 18.0))
        t += 50.0
        after = run.gpu.ready(COMPUTE_STREAM)
        _, d2h_end = memcpy(
            run.python,
            run.gpu,
            "d2h",
            t,
            4,
            2.0,
            src="device",
            dst="pinned",
            is_async=True,
            stream=D2H_STREAM,
            not_before_us=after,
        )
        run.python.event("$array.py:300 __float__", t, d2h_end + 2.0 - t)
        end = d2h_end + 6.0
        run.python.step(FIRST_STEP + index, start, end - start)
        t = end + BETWEEN_STEPS_US
    return t
