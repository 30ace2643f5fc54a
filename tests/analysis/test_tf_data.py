from tb_gpu_advisor.analysis.tf_data import tf_data_pipeline

MS = 10**9


def pipeline(names, threads=None, window_ms=100):
    return tf_data_pipeline(dict.fromkeys(names, (1, MS)), threads or {}, window_ms * MS)


def test_no_iterator_events_means_not_in_use():
    found = pipeline(["IteratorGetNextOp::DoCompute", "train"])
    assert not found.in_use and not found.is_tuned and found.paths == ()


def test_stages_prefetch_and_sequential_maps():
    found = pipeline(["Iterator::Root", "Iterator::Root::Map", "Iterator::Root::Map::TFRecord"])
    assert found.paths[0] == "Iterator::Root::Map::TFRecord"
    assert found.stages == {"Root", "Map", "TFRecord"}
    assert not found.has_prefetch and not found.has_cache
    assert found.sequential_maps == ("Iterator::Root::Map",)
    assert found.demanded_reads == ("Iterator::Root::Map::TFRecord",) == found.file_reads


def test_reads_under_interleave_or_prefetch_are_advanced():
    found = pipeline(
        [
            "Iterator::Root::Prefetch::ParallelMapV2::ParallelInterleaveV4::TFRecord",
            "Iterator::Root::Prefetch::Cache::TextLine",
        ]
    )
    assert found.demanded_reads == ()
    assert len(found.file_reads) == 2
    assert found.has_prefetch and found.has_cache and found.is_tuned


def test_map_and_batch_parallelism_comes_from_its_threads():
    names = ["Iterator::Root::Prefetch::MapAndBatch"]
    busy = {"tf_data_private_threadpool": (2, 110 * MS)}
    assert pipeline(names, busy).map_concurrency == 1.1
    assert pipeline(names, busy).sequential_maps == ("Iterator::Root::Prefetch::MapAndBatch",)
    parallel = pipeline(names, {"tf_data_private_threadpool": (2, 190 * MS)})
    assert parallel.sequential_maps == () and parallel.is_tuned
    assert pipeline(names).sequential_maps == ()  # no thread evidence: not judged


def test_map_ops_one_at_a_time_make_a_sequential_map_whatever_the_threads_say():
    """The executor's callbacks outlast the map's ops and overlap (threads 1.2 busy); the ops run one at a time."""
    names = ["Iterator::Root::Prefetch::MapAndBatch"]
    busy = {"tf_data_private_threadpool": (2, 120 * MS)}
    one = tf_data_pipeline(dict.fromkeys(names, (1, MS)), busy, 100 * MS, ops_in_flight=1.0)
    assert one.sequential_maps == ("Iterator::Root::Prefetch::MapAndBatch",) and one.map_concurrency == 1.2
    two = tf_data_pipeline(dict.fromkeys(names, (1, MS)), busy, 100 * MS, ops_in_flight=1.6)
    assert two.sequential_maps == ()


def test_generators():
    assert pipeline(["Iterator::Prefetch", "Iterator::Prefetch::Generator"]).generators == (
        "Iterator::Prefetch::Generator",
    )


def test_a_generator_or_demanded_reads_are_not_tuned():
    assert not pipeline(["Iterator::Prefetch", "Iterator::Prefetch::Generator"]).is_tuned
    assert not pipeline(["Iterator::Root::Prefetch", "Iterator::Root::Prefetch::Map::TextLine"]).is_tuned


def test_tf_distribute_per_device_generator_is_not_from_generator():
    """MultiDeviceIterator feeds each device through a Generator stage that calls the source remotely."""
    distributed = pipeline(
        [
            "Iterator::Prefetch::Generator",
            "MultiDeviceIteratorGetNextFromShard:MultiDeviceIteratorGetNextFromShard",
            "RemoteCall____inference__next_func_441:RemoteCall",
        ]
    )
    assert distributed.generators == () and distributed.per_device_generators == ("Iterator::Prefetch::Generator",)
    assert not distributed.is_tuned  # the source pipeline is not in the trace
    user = pipeline(
        [
            "Iterator::Root::Prefetch::FlatMap::Generator",
            "MultiDeviceIteratorGetNextFromShard:MultiDeviceIteratorGetNextFromShard",
        ]
    )
    assert user.generators == ("Iterator::Root::Prefetch::FlatMap::Generator",)
    local = pipeline(["Iterator::Root::Prefetch::Generator"])
    assert local.generators == ("Iterator::Root::Prefetch::Generator",) and local.per_device_generators == ()
