"""What the `Iterator::...` host events say about a tf.data pipeline: its stages, prefetch, parallelism, reads."""

from __future__ import annotations

from dataclasses import dataclass

# The map function's threads busy less than this many cores' worth of wall time = one element at a time.
MAP_SEQUENTIAL_CONCURRENCY = 1.2
ITERATOR_PREFIX = "Iterator::"
PREFETCH_STAGES = {"Prefetch", "PrefetchToDevice", "PrefetchDataset"}
SEQUENTIAL_MAP_STAGES = {"Map"}
AMBIGUOUS_MAP_STAGES = {"MapAndBatch"}  # parallel or not depending on num_parallel_calls
PARALLEL_MAP_STAGES = {"ParallelMap", "ParallelMapV2"} | AMBIGUOUS_MAP_STAGES  # maps that can run calls at once
PARALLEL_STAGES = {
    "ParallelMap",
    "ParallelMapV2",
    "ParallelInterleave",
    "ParallelInterleaveV2",
    "ParallelInterleaveV3",
    "ParallelInterleaveV4",
    "LegacyParallelInterleaveV2",
    "ParallelBatch",
    "ParallelFilter",
}
CACHE_STAGES = {
    "Cache",
    "CacheV2",
    "MemoryCache",
    "MemoryReader",
    "MemoryWriter",
    "Snapshot",
    "SaveDataset",
    "LoadDataset",
}
# XProf's file readers; a read is "advanced" when one of ADVANCING_STAGES sits above it, else "demanded".
FILE_READ_STAGES = {"TFRecord", "TextLine", "FixedLengthRecord", "SSTable", "RecordIO", "ArrayRecord"}
ADVANCING_STAGES = {"MemoryReader", "MemoryWriter", "Interleave", "Prefetch", "ParallelMap"} | PARALLEL_STAGES
GENERATOR_STAGES = {"Generator", "FromGenerator"}
# tf.distribute's MultiDeviceIterator feeds each device through a GeneratorDataset that calls the source
# iterator remotely (`RemoteCall ... __inference__next_func`): a Generator stage that is not from_generator,
# which puts its generator under a FlatMap.
_PER_DEVICE_FEED = ("MultiDeviceIterator", "RemoteCall")
MAP_THREADS = "tf_data_private_threadpool"


@dataclass(frozen=True)
class TfDataPipeline:
    """The pipeline as the trace shows it; `in_use` is False when no `Iterator::` event was recorded."""

    in_use: bool
    paths: tuple  # every Iterator::... name, longest (innermost) first
    stages: frozenset  # every stage name that appears
    sequential_maps: tuple  # paths whose map runs one element at a time
    demanded_reads: tuple  # file-read paths with nothing above them reading ahead
    file_reads: tuple
    generators: tuple  # Dataset.from_generator stages (Python generators)
    per_device_generators: tuple  # tf.distribute's per-device Generator stages (not Python generators)
    map_concurrency: float | None  # busy time of tf.data's private threads / wall time
    map_threads: int = 0  # tf.data's private threads seen (those that ran something: at most the pool's size)

    @property
    def has_prefetch(self) -> bool:
        return bool(self.stages & PREFETCH_STAGES)

    @property
    def has_cache(self) -> bool:
        return bool(self.stages & CACHE_STAGES)

    @property
    def is_tuned(self) -> bool:
        """Prefetches, runs no map sequentially, reads ahead and has no Python generator: the local tf.data
        knobs are already used. Behind tf.distribute's per-device feed the source pipeline is not in the trace,
        so it cannot be called tuned."""
        return (
            self.in_use
            and self.has_prefetch
            and not self.sequential_maps
            and not self.demanded_reads
            and not self.generators
            and not self.per_device_generators
        )

    @property
    def root(self):
        """The outermost path under Root (e.g. `Iterator::Root::Prefetch::MapAndBatch::TensorSlice`)."""
        return self.paths[0] if self.paths else None


def stages_of(path: str) -> list[str]:
    return path[len(ITERATOR_PREFIX) :].split("::")


def tf_data_pipeline(
    op_totals,
    thread_busy,
    window_ps,
    ops_in_flight=None,
):
    """TfDataPipeline from HostActivity.op_totals and thread_busy over an analysis window of `window_ps`; a map of
    ambiguous parallelism (MapAndBatch) is sequential when its ops run one at a time (`ops_in_flight`,
    HostActivity.map_ops_in_flight: the executor's callbacks outlast the ops and make threads look busier), else
    when its threads are busy under MAP_SEQUENTIAL_CONCURRENCY cores."""
    paths = sorted(
        (name for name in op_totals if name.startswith(ITERATOR_PREFIX)), key=lambda name: (-name.count("::"), name)
    )
    stages = frozenset(stage for path in paths for stage in stages_of(path))
    busy = thread_busy.get(MAP_THREADS)
    concurrency = busy[1] / window_ps if busy and window_ps > 0 else None
    in_flight = ops_in_flight if ops_in_flight is not None else concurrency
    sequential, reads, demanded, generators, per_device = [], [], [], [], []
    distributed = any(
        name.startswith(_PER_DEVICE_FEED) and ("MultiDeviceIterator" in name or "__next_func" in name)
        for name in op_totals
    )
    # Every stage is judged, also those only seen as a prefix of a deeper stage's name.
    prefixes = sorted(
        {
            ITERATOR_PREFIX + "::".join(stages_of(path)[:depth])
            for path in paths
            for depth in range(1, len(stages_of(path)) + 1)
        }
    )
    for path in prefixes:
        parts = stages_of(path)
        last = parts[-1]
        if last in SEQUENTIAL_MAP_STAGES or (
            last in AMBIGUOUS_MAP_STAGES and in_flight is not None and in_flight < MAP_SEQUENTIAL_CONCURRENCY
        ):
            sequential.append(path)
        if last in FILE_READ_STAGES:
            reads.append(path)
            if not set(parts[:-1]) & ADVANCING_STAGES:
                demanded.append(path)
        if last in GENERATOR_STAGES:
            from_generator = len(parts) > 1 and parts[-2] == "FlatMap"
            (per_device if distributed and not from_generator else generators).append(path)
    return TfDataPipeline(
        in_use=bool(paths),
        paths=tuple(paths),
        stages=stages,
        sequential_maps=tuple(sequential),
        demanded_reads=tuple(demanded),
        file_reads=tuple(reads),
        generators=tuple(generators),
        per_device_generators=tuple(per_device),
        map_concurrency=None if concurrency is None else round(concurrency, 2),
        map_threads=busy[0] if busy else 0,
    )
