"""TensorFlow's host threads and the TraceMe events they write: eager calls, FunctionRun, executor, tf.data.

Thread lines are named as TensorFlow names them (`python`, `tf_Compute/<id>`, `tf_data_iterator_get_next/<id>`,
`tf_data_private_threadpool/<id>`, ...), with the producer/consumer stats (`_p`/`_pt` on `FunctionRun`, `_c`/`_ct`
on `ExecutorState::Process`) XProf uses to group a step's ops, and so its kernels, under the step marker.
"""

import random

TF_EXECUTOR_CONTEXT = 2  # tsl ContextType::kTfExecutor
# The ops of an image map function and the share of the element's time each takes.
IMAGE_MAP_OPS = (
    ("ParseSingleExample/ParseExample/ParseExampleV2:ParseExampleV2", 0.02),
    ("DecodeJpeg:DecodeJpeg", 0.7),
    ("random_crop/RandomCrop:ResizeBilinear", 0.2),
)
TEXT_MAP_OPS = (
    ("ParseSingleExample/ParseExample/ParseExampleV2:ParseExampleV2", 0.2),
    ("StringSplit/StringSplitV2:StringSplitV2", 0.4),
    ("StringToHashBucketFast:StringToHashBucketFast", 0.3),
)


def map_function(thread, process, start_us, duration_us, map_ops, run_event="InstantiatedCapturedFunction::Run"):
    """One call of the map function: its captured-function event and the ops inside, back to back."""
    thread.event(run_event, start_us, duration_us, id=process.new_id())
    t = start_us + 1.0
    for tf_op, share in map_ops:
        length = round(duration_us * share * 2) / 2
        thread.event(tf_op, t, length)
        t += length + 0.5


class TfProcess:
    """The host side of one TensorFlow training process: its threads and a seeded source of ids."""

    def __init__(self, builder, seed):
        self.builder = builder
        self._rng = random.Random(seed)
        self.python = builder.thread("python", thread_id=self._rng.getrandbits(62))

    def new_id(self):
        """A 64-bit id such as TensorFlow's step ids and element ids (signed, as they appear in traces)."""
        return self._rng.getrandbits(64) - 2**63

    def pool_thread(self, pool):
        """A new thread of the named pool, e.g. `tf_Compute` or `tf_data_private_threadpool`."""
        line_id = self._rng.getrandbits(63) - 2**62
        return self.builder.thread(f"{pool}/{line_id}", thread_id=line_id)

    def new_link(self):
        """(step id, producer id) tying a FunctionRun to the ExecutorState::Process events that run it."""
        return self.new_id(), self._rng.getrandbits(62)

    def call_function(self, function_name, start_us, end_us, link):
        """Python calling a tf.function eagerly: EagerExecute ... KernelAndDeviceFunc::Run, FunctionRun."""
        python = self.python
        python.event("EagerExecute", start_us, end_us - start_us, eager_op=function_name, is_func=1)
        python.event(f"EagerLocalExecute: {function_name}", start_us + 1.0, end_us - start_us - 1.5)
        python.event("EagerKernelExecute", start_us + 3.0, end_us - start_us - 4.0)
        python.event("KernelAndDeviceFunc::Run", start_us + 4.0, end_us - start_us - 5.5)
        python.event("FunctionRun", start_us + 6.0, 18.0, id=link[0], _r=1, _pt=TF_EXECUTOR_CONTEXT, _p=link[1])

    def eager_op(self, op_type, start_us, duration_us):
        """Python running one op eagerly; returns where the op's kernel work can start on this thread."""
        python = self.python
        python.event("EagerExecute", start_us, duration_us, eager_op=op_type, is_func=0)
        python.event(f"EagerLocalExecute: {op_type}", start_us + 1.0, duration_us - 1.5)
        python.event("EagerKernelExecute", start_us + 2.5, duration_us - 3.0)
        return start_us + 3.0

    @staticmethod
    def executor(thread, link, start_us, end_us):
        """`ExecutorState::Process`: an inter-op thread running ops of the function `link` belongs to."""
        step_id, producer = link
        thread.event(
            "ExecutorState::Process",
            start_us,
            end_us - start_us,
            id=step_id,
            iter_num=0,
            _ct=TF_EXECUTOR_CONTEXT,
            _c=producer,
        )


class SequentialPipeline:
    """tf.data `TFRecordDataset(files).map(parse_and_augment).shuffle(n).batch(b)`: no parallelism, no prefetch.

    `IteratorGetNext` builds the whole batch on the calling thread, element after element.
    """

    def __init__(self, process, batch_size, element_us, element_bytes, map_ops=IMAGE_MAP_OPS):
        self.process = process
        self.map_ops = map_ops
        self.thread = process.pool_thread("tf_data_iterator_get_next")
        self.batch_size = batch_size
        self.element_us = element_us
        self.element_bytes = element_bytes
        self.root_id, self.batch_id = process.new_id(), process.new_id()
        self.shuffle_id, self.map_id, self.read_id = process.new_id(), process.new_id(), process.new_id()

    @property
    def wait_us(self):
        return 6.0 + self.batch_size * self.element_us

    def get_next(self, link, start_us):
        """One IteratorGetNext; returns its end."""
        thread, end = self.thread, start_us + self.wait_us
        thread.event(
            "IteratorGetNextOp::DoCompute",
            start_us,
            end - start_us,
            id=link[0],
            iter_num=0,
            element_size=self.batch_size * self.element_bytes,
        )
        thread.event(
            "Iterator::Root",
            start_us + 1.0,
            end - start_us - 2.0,
            id=self.root_id,
            name="BatchDatasetV2:3",
            autotune="false",
        )
        thread.event(
            "Iterator::Root::BatchV2",
            start_us + 2.0,
            end - start_us - 4.0,
            id=self.batch_id,
            parent_id=self.root_id,
            batch_size=self.batch_size,
            drop_remainder="true",
        )
        t = start_us + 3.0
        for _ in range(self.batch_size):
            self._element(t)
            t += self.element_us
        return end

    def _element(self, t):
        thread, cost = self.thread, self.element_us
        thread.event(
            "Iterator::Root::BatchV2::Shuffle", t, cost, id=self.shuffle_id, parent_id=self.batch_id, buffer_size=1024
        )
        thread.event(
            "Iterator::Root::BatchV2::Shuffle::Map",
            t + 0.5,
            cost - 1.0,
            id=self.map_id,
            parent_id=self.shuffle_id,
            parallelism=1,
            autotune="false",
        )
        thread.event(
            "Iterator::Root::BatchV2::Shuffle::Map::TFRecord",
            t + 1.0,
            18.0,
            id=self.read_id,
            parent_id=self.map_id,
            name="TFRecordDataset:0",
        )
        map_function(thread, self.process, t + 20.0, cost - 21.0, self.map_ops)


class PrefetchedPipeline:
    """The same pipeline with `map(..., num_parallel_calls=AUTOTUNE)` and `.prefetch(AUTOTUNE)`.

    Batches are built ahead on tf.data's own threads; `IteratorGetNext` only takes a ready batch.
    """

    GET_NEXT_US = 24.0

    def __init__(self, process, batch_size, element_us, element_bytes, workers=8, map_ops=IMAGE_MAP_OPS):
        self.process = process
        self.map_ops = map_ops
        self.thread = process.pool_thread("tf_data_iterator_get_next")
        self.producer = process.pool_thread("tf_data_iterator_resource")
        self.workers = [process.pool_thread("tf_data_private_threadpool") for _ in range(workers)]
        self.batch_size = batch_size
        self.element_us = element_us
        self.element_bytes = element_bytes
        self.ids = [process.new_id() for _ in range(5)]

    @property
    def batch_build_us(self):
        """Wall time to build one batch with every worker busy."""
        rounds = -(-self.batch_size // len(self.workers))
        return 8.0 + rounds * self.element_us

    def get_next(self, link, start_us, element_id):
        """One IteratorGetNext that finds a batch in the prefetch buffer; returns its end."""
        thread, end = self.thread, start_us + self.GET_NEXT_US
        root, prefetch = self.ids[0], self.ids[1]
        thread.event(
            "IteratorGetNextOp::DoCompute",
            start_us,
            self.GET_NEXT_US,
            id=link[0],
            iter_num=0,
            element_size=self.batch_size * self.element_bytes,
        )
        thread.event(
            "Iterator::Root", start_us + 1.0, self.GET_NEXT_US - 2.0, id=root, name="PrefetchDataset:4", autotune="true"
        )
        thread.event(
            "Iterator::Root::Prefetch",
            start_us + 2.0,
            self.GET_NEXT_US - 4.0,
            id=prefetch,
            parent_id=root,
            buffer_limit=2,
            autotune="true",
        )
        thread.event("PrefetchConsume", start_us + 16.0, 3.0, element_id=element_id)
        return end

    def build_batch(self, start_us, element_id):
        """Builds the next batch in the background starting at `start_us`; returns when it is buffered."""
        prefetch, batch, shuffle, parallel_map = self.ids[1], self.ids[2], self.ids[3], self.ids[4]
        end = start_us + self.batch_build_us
        self.producer.event("PrefetchProduce", start_us, end - start_us, element_id=element_id)
        self.producer.event(
            "Iterator::Root::Prefetch::BatchV2",
            start_us + 1.0,
            end - start_us - 2.0,
            id=batch,
            parent_id=prefetch,
            batch_size=self.batch_size,
            drop_remainder="true",
        )
        for index in range(self.batch_size):
            worker = self.workers[index % len(self.workers)]
            t = start_us + 4.0 + (index // len(self.workers)) * self.element_us
            worker.event("ParallelMapProduce", t, self.element_us - 0.5, element_id=element_id + index + 1)
            worker.event(
                "Iterator::Root::Prefetch::BatchV2::Shuffle::ParallelMapV2::TFRecord",
                t + 0.5,
                18.0,
                parent_id=parallel_map,
                name="TFRecordDataset:0",
            )
            map_function(
                worker,
                self.process,
                t + 19.5,
                self.element_us - 21.0,
                self.map_ops,
                "InstantiatedCapturedFunction::RunAsync",
            )
        self.producer.event(
            "Iterator::Root::Prefetch::BatchV2::Shuffle", end - 6.0, 4.0, id=shuffle, parent_id=batch, buffer_size=1024
        )
        self.producer.event(
            "Iterator::Root::Prefetch::BatchV2::Shuffle::ParallelMapV2",
            end - 5.5,
            3.0,
            id=parallel_map,
            parent_id=shuffle,
            parallelism=len(self.workers),
            autotune="true",
        )
        return end
