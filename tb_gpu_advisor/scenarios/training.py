"""One step of a TensorFlow custom training loop on GPU: the step marker, the tf.function call, its input, the
kernel launches on an executor thread, and fetching the loss, laid out in time as TensorFlow runs them.

The loop is `for step in ...: with tf.profiler.experimental.Trace("train", step_num=step, _r=1): loss =
train_step(...); loss.numpy()` - the `.numpy()` makes every step wait for its GPU work, as Keras' progress
logging does.
"""

from tb_gpu_advisor.scenarios.engine import COMPUTE_STREAM, D2H_STREAM, GRAPH_COSTS, H2D_STREAM, memcpy, launch_ops

FUNCTION = "__inference_train_step_5834"


class PipelineFeed:
    """The batch comes from a tf.data iterator inside the function and is copied to the GPU by the executor.

    `copies` holds (bytes, us) per tensor of the batch; `src` is the host memory kind they are copied from.
    """

    def __init__(self, pipeline, copies, src="pinned", is_async=True):
        self.pipeline = pipeline
        self.copies = copies
        self.src = src
        self.is_async = is_async

    def before_call(self, process, gpu, start_us):
        return start_us, 0.0

    def in_function(self, process, gpu, executor, link, start_us):
        """IteratorGetNext, then the host-to-device copies; returns (host time, when the data is on the GPU)."""
        pipeline = self.pipeline
        if hasattr(pipeline, "build_batch"):
            element_id = process.new_id()
            wait_end = pipeline.get_next(link, start_us + 2.0, element_id)
            pipeline.build_batch(wait_end + 6.0, element_id)
        else:
            wait_end = pipeline.get_next(link, start_us + 2.0)
        executor.event("IteratorGetNext:IteratorGetNext", start_us, wait_end + 2.0 - start_us)
        t = copy_start = wait_end + 3.5
        ready = 0.0
        for size, duration in self.copies:
            host_end, ready = memcpy(
                executor,
                gpu,
                "h2d",
                t + 1.0,
                size,
                duration,
                src=self.src,
                dst="device",
                is_async=self.is_async,
                stream=H2D_STREAM,
            )
            t = host_end + 1.0
        executor.event("_Recv:_Recv", copy_start, t - copy_start)
        return t + 1.5, ready


class NumpyFeed:
    """The batch is a NumPy array passed to the function: Python copies it to the GPU before the call, from
    pageable memory and synchronously (`EagerCopyToDevice`)."""

    def __init__(self, copies):
        self.copies = copies

    def before_call(self, process, gpu, start_us):
        t, ready = start_us, 0.0
        for size, duration in self.copies:
            begin = t
            host_end, ready = memcpy(
                process.python,
                gpu,
                "h2d",
                t + 3.0,
                size,
                duration,
                src="pageable",
                dst="device",
                is_async=False,
                stream=H2D_STREAM,
            )
            process.python.event("EagerCopyToDevice", begin, host_end + 2.0 - begin)
            t = host_end + 4.0
        return t, ready

    def in_function(self, process, gpu, executor, link, start_us):
        return start_us, 0.0


def train_step(
    process,
    gpu,
    executor,
    step,
    start_us,
    feed,
    ops,
    *,
    costs=GRAPH_COSTS,
    loss_bytes=4,
    function=FUNCTION,
    launch=launch_ops,
):
    """Writes one step starting at `start_us`; returns when the step marker ends. `launch` runs the ops
    (engine.launch_ops, or a scenario's own sequence with the same arguments)."""
    call_start, data_ready = feed.before_call(process, gpu, start_us + 4.0)
    link = process.new_link()
    exec_start = call_start + 30.0
    t, in_ready = feed.in_function(process, gpu, executor, link, exec_start + 1.0)
    t = launch(executor, gpu, ops, t, costs=costs, not_before_us=max(data_ready, in_ready))
    process.executor(executor, link, exec_start, t + 1.0)
    call_end = t + 5.0
    process.call_function(function, call_start, call_end, link)
    return fetch_loss(process, gpu, call_end + 6.0, loss_bytes, step, start_us)


def fetch_loss(process, gpu, start_us, loss_bytes, step, step_start_us, gpus=None):
    """`loss.numpy()`: an async device-to-host copy after the last kernel, then Python waits for it.

    Closes the step marker and returns its end. With `gpus`, waits for the compute streams of all of them.
    """
    python = process.python
    after = max(g.ready(COMPUTE_STREAM) for g in (gpus or [gpu]))
    _, d2h_end = memcpy(
        python,
        gpu,
        "d2h",
        start_us + 2.0,
        loss_bytes,
        2.0,
        src="device",
        dst="pinned",
        is_async=True,
        stream=D2H_STREAM,
        not_before_us=after,
    )
    python.event("TFE_TensorHandleResolve", start_us, d2h_end + 2.0 - start_us)
    end = d2h_end + 6.0
    python.step(step, step_start_us, end - step_start_us)
    return end
