"""Examples per step from tf.data's batch stage and from the compiled JAX step program's inputs."""

import pytest

from tb_gpu_advisor.analysis.examples_per_step import GLOBAL, PER_DEVICE
from tb_gpu_advisor.readers.hlo import schema
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.markdown import render_markdown
from tb_gpu_advisor.report.text import render_text
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape, tuple_shape
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tests.conftest import model_of
from tests.data import real_trace
from tests.findings.scenarios import kernels, step_starts

STEPS = 6


def _examples(builder):
    return host_report(model_of(builder))["configuration"]["examples_per_step"]


def tf_job(batch_size=32, reads_per_step=1, stage="Iterator::Root::Prefetch::MapAndBatch", gpus=1, extra_stage=None):
    """A tf.data pipeline whose batch stage records `batch_size`, read `reads_per_step` times per step."""
    builder = TraceBuilder()
    python = builder.thread("python")
    pool = builder.thread("tf_data_private_threadpool/1")
    for start in step_starts(python, STEPS):
        for read in range(reads_per_step):
            at = start + 10 + 40 * read
            python.event("Iterator::Root", at, 30, name="PrefetchDataset:3", shapes="[?,64] [?]")
            pool.event(
                stage,
                at,
                20,
                name="fused(MapDataset:1,BatchDatasetV2:2)",
                batch_size=batch_size,
                drop_remainder="false",
            )
            if extra_stage:
                pool.event(extra_stage[0], at, 20, name="BatchDatasetV2:5", batch_size=extra_stage[1])
        for ordinal in range(gpus):
            kernels(builder.gpu(ordinal), start + 500, 5_000, launch_thread=python)
    return builder


def test_tf_data_batch_stage_is_the_global_batch_on_one_device():
    found = _examples(tf_job())
    assert found == {
        "value": 32,
        "scope": GLOBAL,
        "reason": None,
        "source": "tf.data batch stage MapAndBatch, batch size 32, 1 batch per step",
    }
    assert host_report(model_of(tf_job()))["configuration"]["global_batch"] == 32


def test_two_batches_read_per_step_double_the_examples():
    found = _examples(tf_job(batch_size=16, reads_per_step=2))
    assert (found["value"], found["scope"]) == (32, GLOBAL)
    assert found["source"].endswith("batch size 16, 2 batches per step")


REBATCHED = "Iterator::Root::Prefetch::Rebatch::BatchV2"


def rebatched_job(batch_size=64, replica_names=2, rebatch_reads=2):
    """A rebatched tf.data pipeline on 2 GPUs: the host names `replica_names` replicas (`replica_k/` ops), the
    rebatch stage is read `rebatch_reads` times per step."""
    builder = tf_job(batch_size=batch_size, stage=REBATCHED, gpus=2)
    python = builder.thread("python")
    for start in step_starts(python, STEPS):
        for k in range(1, replica_names):
            python.event(f"replica_{k}/dense/MatMul:MatMul", start + 300, 10)
        for read in range(rebatch_reads):
            python.event("Iterator::Root::Prefetch::Rebatch", start + 200 + 20 * read, 10)
    return builder


def test_a_rebatched_pipeline_holds_the_global_batch():
    found = _examples(rebatched_job())
    assert (found["value"], found["scope"]) == (64, GLOBAL)
    assert found["source"] == (
        "tf.data batch stage BatchV2, batch size 64, 1 batch per step; rebatched across 2 replicas: 32 per replica"
    )
    assert _examples(rebatched_job(batch_size=63, replica_names=4, rebatch_reads=4))["source"].endswith(
        "rebatched across 4 replicas: 15 to 16 per replica"
    )


def test_a_rebatched_pipeline_without_a_sure_replica_count_says_so():
    # the replica names and the rebatch stage's reads disagree, or the names are missing: no count
    for job in (
        rebatched_job(replica_names=4, rebatch_reads=2),
        rebatched_job(replica_names=0),
        tf_job(batch_size=64, stage=REBATCHED, gpus=2),
    ):
        found = _examples(job)
        assert (found["value"], found["scope"]) == (64, GLOBAL)
        assert "; tf.distribute rebatches it across its replicas; the trace does not say how many" in found["source"]
        assert "replicas:" not in found["source"]


def test_several_gpus_without_a_rebatch_leave_the_batch_unknown():
    config = host_report(model_of(tf_job(gpus=2)))["configuration"]
    assert config["global_batch"] is None and config["examples_per_step"]["value"] is None
    assert "per replica or global" in config["examples_per_step"]["reason"]


def test_ambiguous_pipelines_give_no_number_and_say_why():
    different = _examples(tf_job(extra_stage=("Iterator::Root::Prefetch::BatchV2", 8)))
    assert different["value"] is None and "different batch sizes (8, 32)" in different["reason"]
    unbatched = _examples(tf_job(stage="Iterator::Root::Prefetch::Unbatch::BatchV2"))
    assert unbatched["value"] is None and "under Unbatch" in unbatched["reason"]


def _step_module(data_shapes, state=(("w", ("f32", 64, 64)),), name="jit_train_step", devices=None, data_sharding=None):
    """`devices`: (replicas, partitions) of the device assignment; `data_sharding`: the data inputs' OpSharding."""
    module = HloModuleBuilder(name=name)
    if devices:
        module.proto.device_assignment.replica_count, module.proto.device_assignment.computation_count = devices
    entry = module.entry
    returned = [entry.parameter(param, shape(*dims)) for param, dims in state]
    for param, dims in data_shapes:
        instruction = entry.parameter(param, shape(*dims))
        if data_sharding is not None:
            instruction.sharding.CopyFrom(data_sharding)
    loss = entry.add("loss", "constant", shape("f32"))
    leaves = [p.shape for p in returned] + [loss.shape]
    entry.add("tuple", "tuple", tuple_shape(*leaves), operands=returned + [loss])
    return module.to_bytes()


def jax_job(data_shapes, gpus=1, dispatch="PjitFunction(train_step)", **module):
    builder = TraceBuilder()
    builder.metadata(jax_version="0.4.30")
    builder.hlo_module(7, "jit_train_step", _step_module(data_shapes, **module))
    python = builder.thread("python")
    for start in step_starts(python, STEPS):
        python.event(dispatch, start + 10, 200)
        for ordinal in range(gpus):
            builder.gpu(ordinal).kernel(
                "loop_add_fusion",
                start + 500,
                5_000,
                hlo_op="add.1",
                hlo_module="jit_train_step",
                program_id=7,
                launch=(python, start + 20, 5),
            )
    return builder


def test_jax_step_program_inputs_give_the_batch():
    found = _examples(jax_job([("images", ("u8", 16, 32, 32, 3)), ("labels", ("s32", 16)), ("rng", ("u32", 2))]))
    assert found == {
        "value": 16,
        "scope": GLOBAL,
        "reason": None,
        "source": "input batch of the XLA step program jit_train_step (images u8[16,32,32,3], labels s32[16])",
    }


def test_state_of_the_batch_shape_is_told_from_data_by_what_the_program_returns():
    found = _examples(jax_job([("x", ("f32", 64, 64))], state=(("w", ("f32", 64, 64)), ("b", ("f32", 64)))))
    assert (found["value"], found["scope"]) == (64, GLOBAL)


def test_jax_on_several_gpus_is_per_device():
    config = host_report(model_of(jax_job([("x", ("f32", 8, 128))], gpus=2)))["configuration"]
    assert config["global_batch"] is None
    found = config["examples_per_step"]
    assert (found["value"], found["scope"]) == (8, PER_DEVICE)
    assert found["reason"].startswith("2 GPUs run the step program")


TILED_4 = schema.OpSharding(type=3, tile_assignment_dimensions=[4, 1])


def test_a_partitioned_step_program_whose_inputs_are_tiled_gives_the_global_batch():
    found = _examples(jax_job([("x", ("f32", 8, 128))], devices=(1, 4), data_sharding=TILED_4))
    assert found == {
        "value": 32,
        "scope": GLOBAL,
        "reason": None,
        "source": "input batch of the XLA step program jit_train_step (x f32[8,128]); the step program "
        "runs on 4 devices (its device assignment), its inputs are split 4 ways on their "
        "leading dimension: 8 per device",
    }
    replicated = _examples(jax_job([("x", ("f32", 8, 128))], devices=(1, 4), data_sharding=schema.OpSharding(type=0)))
    assert (replicated["value"], replicated["scope"]) == (8, GLOBAL)
    assert replicated["source"].endswith("each device takes the whole batch")


def test_a_step_program_over_several_devices_without_input_shardings_is_per_device():
    # pmap before JAX 0.10: 4 replicas, each given its own slice; the program records no sharding
    found = _examples(jax_job([("x", ("f32", 8, 128))], devices=(4, 1)))
    assert (found["value"], found["scope"]) == (8, PER_DEVICE)
    assert found["reason"].startswith(
        "the step program runs on 4 devices (its device assignment): its input shapes are one device's share"
    )
    # a leading dimension split into 1 per device: pmap's device axis or a batch of 4
    axis = _examples(jax_job([("x", ("f32", 1, 8, 128))], devices=(1, 4), data_sharding=TILED_4))
    assert axis["value"] is None and "a device axis (pmap) or a batch of 4" in axis["reason"]


@pytest.mark.parametrize(
    "data_shapes, dispatch, reason",
    [
        ([("x", ("f32", 8, 128)), ("mask", ("f32", 128))], "PjitFunction(train_step)", "differ in their leading"),
        ([], "PjitFunction(train_step)", "takes an input it does not return"),
        ([("x", ("f32", 8, 128))], "PjitFunction(other)", "takes an input it does not return"),
    ],
)
def test_jax_programs_that_do_not_say_give_no_number(data_shapes, dispatch, reason):
    found = _examples(jax_job(data_shapes, dispatch=dispatch))
    assert found["value"] is None and reason in found["reason"]


def test_a_trace_without_input_tensors_says_so():
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python, 3):
        kernels(builder.gpu(0), start + 100, 5_000, launch_thread=python)
    found = _examples(builder)
    assert found["value"] is None and found["reason"].startswith("the trace records no input batch")


def torch_job(
    tmp_path,
    loss_dims=((64, 10), (64,)),
    losses_per_step=1,
    world_size=None,
    embedding=False,
    shapes=True,
    name="aten::cross_entropy_loss",
):
    """A PyTorch training loop: per step a cross-entropy loss (enclosing the NLL loss it calls) on the batch."""
    events = []
    for n in range(STEPS):
        base = n * 1_000
        events += [
            x_event("user_annotation", f"ProfilerStep#{n}", base, 1_000),
            launch(base + 5, 4, n),
            kernel("ampere_sgemm_128x64_tn", base + 10, 900, n),
        ]
        if embedding:
            events.append(x_event("cpu_op", "aten::embedding", base + 20, 5))
        for index in range(losses_per_step if name else 0):
            at = base + 100 + 100 * index
            args = {"Input Dims": [list(d) for d in loss_dims] + [[], []]} if shapes else {}
            events += [
                x_event("cpu_op", name, at, 50, **args),
                x_event(
                    "cpu_op",
                    "aten::nll_loss_nd",
                    at + 10,
                    30,
                    **({"Input Dims": [[7, 10], [7], [], [], []]} if shapes else {}),
                ),
            ]
    top = {"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": world_size}} if world_size else {}
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, **top))
    return host_report(load_model(path))["configuration"]["examples_per_step"]


def test_pytorch_loss_rows_give_the_examples_per_step(tmp_path):
    assert torch_job(tmp_path) == {
        "value": 64,
        "scope": GLOBAL,
        "reason": None,
        "source": "rows of the loss's input and target (aten::cross_entropy_loss [64,10], [64]), once per step",
    }


def test_pytorch_ranks_make_the_loss_rows_per_device(tmp_path):
    found = torch_job(tmp_path, world_size=4)
    assert (found["value"], found["scope"]) == (64, PER_DEVICE) and found["reason"].startswith("4 ranks run")


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"losses_per_step": 2}, "the loss runs 12 times over 6 steps (at most 2 in one)"),
        ({"embedding": True}, "the rows may be the tokens of flattened sequences"),
        ({"shapes": False}, "input shapes are not recorded (profile with record_shapes=True)"),
        ({"loss_dims": ((64, 10), (32,))}, "do not share a leading dimension"),
        ({"name": None}, "a PyTorch trace without a loss operator"),
    ],
)
def test_pytorch_losses_that_do_not_say_give_no_number(tmp_path, kwargs, reason):
    found = torch_job(tmp_path, **kwargs)
    assert found["value"] is None and reason in found["reason"]


# What each committed real trace gives: (examples per step, scope) or (None, the start of the reason).
REAL = {
    "tf221_cpu_keras_input_bound.xplane.pb": (32, GLOBAL),
    "tf221_cpu_keras_input_fixed.xplane.pb": (32, GLOBAL),
    "cpu_pairs/tf_map_sequential.xplane.pb": (32, GLOBAL),
    "cpu_pairs/tf_map_parallel.xplane.pb": (32, GLOBAL),
    "cpu_pairs/tf_prefetch_no_prefetch.xplane.pb": (32, GLOBAL),
    "cpu_pairs/tf_prefetch_prefetch.xplane.pb": (32, GLOBAL),
    "cpu_pairs/tf_eager_eager.xplane.pb": (32, GLOBAL),
    "cpu_pairs/tf_eager_function.xplane.pb": (32, GLOBAL),
    "cpu_pairs/jax_loader_inline.xplane.pb": (4, GLOBAL),
    "cpu_pairs/jax_loader_background.xplane.pb": (4, GLOBAL),
    "cpu_pairs/jax_jit_jit.xplane.pb": (32, GLOBAL),
    "cpu_pairs/jax_jit_op_by_op.xplane.pb": (None, "none of the 10 compiled programs"),
    "jax0102_cpu_steps.xplane.pb": (256, GLOBAL),
    # 4 host devices, the batch of 32 tiled over them: the program's inputs are f32[8,64], its sharding says 4 ways
    "jax_sharded_cpu/jax0102_cpu4_named_sharding.xplane.pb": (32, GLOBAL),
    # pmap over (4, 8, 64): the inputs f32[1,8,64], their leading (device) axis split 4 ways
    "jax_sharded_cpu/jax0102_cpu4_pmap.xplane.pb": (None, "the inputs of the step program jit__fun"),
    # experimental_distribute_dataset: batch(48) rebatched into 3 replicas' 16 (`...::Rebatch::ForeverRepeat[0]::
    # BatchV2`), its iterators read once per replica, its batch stage once per step.
    "tf_mirrored/tf221_cpu_mirrored_3replicas.xplane.pb": (48, GLOBAL),
    "gpu_multi_worker_v100x8.xplane.pb": (None, "the trace records no input batch"),
    "amd_mi300x_jax08_gemm.xplane.pb": (None, "the trace marks no steps"),
    "kineto/a100_8rank_control.pt.trace.json.gz": (None, "the loss runs 12 times over 6 steps (at most 2 in one)"),
    "kineto/mi250_minitoy_train.pt.trace.json.gz": (5, GLOBAL),
    "kineto/a100_2rank_nccl.pt.trace.json.gz": (None, "the loss operator's input shapes are not recorded"),
    "kineto/v100_2rank_test.pt.trace.json.gz": (None, "a PyTorch trace without a loss operator"),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_traces(name):
    found = host_report(load_model(real_trace(name)))["configuration"]["examples_per_step"]
    value, scope_or_reason = REAL[name]
    if value is None:
        assert found["value"] is None and found["reason"].startswith(scope_or_reason)
    else:
        assert (found["value"], found["scope"], found["reason"]) == (value, scope_or_reason, None)


def test_the_configuration_section_shows_the_batch_and_where_it_comes_from():
    report = {"hosts": [host_report(model_of(tf_job()))], "errors": []}
    row = "32 (tf.data batch stage MapAndBatch, batch size 32, 1 batch per step)"
    assert "global batch " + row in " ".join(render_text(report).split())
    assert row in render_markdown(report) and row in render_html(report)
    report = {"hosts": [host_report(model_of(jax_job([("x", ("f32", 8, 128))], gpus=2)))], "errors": []}
    assert (
        "not in the trace; 8 examples per step per device (input batch of the XLA step program jit_train_step "
        "(x f32[8,128]); 2 GPUs run the step program"
    ) in " ".join(render_text(report).split())


@pytest.mark.parametrize(
    "name", ["jax_sharded_cpu/jax0102_cpu4_named_sharding.xplane.pb", "jax_sharded_cpu/jax0102_cpu4_pmap.xplane.pb"]
)
def test_a_step_program_sharded_over_forced_cpu_devices_is_the_distribution_not_the_cores(name):
    """4 XLA CPU devices forced on a 2-core machine: the step program spans them (jit with shardings / pmap), and
    XLA's CPU pools follow the device count, not the cores: no core count from them."""
    config = host_report(load_model(real_trace(name)))["configuration"]
    assert config["distribution"].startswith("4 XLA CPU devices (the step program is sharded over them")
    assert config["host_cores"] is None and config["host_cores_seen"] is None
