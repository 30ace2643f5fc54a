"""The collective an HLO instruction runs, with its bytes and group size: written modules and real XLA ones."""

from tb_gpu_advisor.readers.hlo import schema
from tb_gpu_advisor.readers.hlo.collectives import HloCollective, collective_shapes
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, replica_groups, shape, tuple_shape
from tests.data import REAL


def _one(module, name):
    return collective_shapes({1: module.to_bytes()}, [(1, name)])[(1, name)]


def test_combined_all_reduce_sums_its_operands():
    module = HloModuleBuilder()
    a, b = module.entry.parameter("a", shape("bf16", 1024)), module.entry.parameter("b", shape("f32", 256, 4))
    module.entry.add(
        "all-reduce.1",
        "all-reduce",
        tuple_shape(shape("bf16", 1024), shape("f32", 256, 4)),
        (a, b),
        replica_groups=replica_groups((0, 1), (2, 3)),
    )
    assert _one(module, "all-reduce.1") == HloCollective(
        "allreduce", "all-reduce.1", 2048 + 4096, 2048 + 4096, "bf16", 2
    )


def test_reduce_scatter_and_done_resolving_to_its_start():
    module = HloModuleBuilder()
    x = module.entry.parameter("x", shape("f32", 8, 1024))
    module.entry.add(
        "reduce-scatter.1",
        "reduce-scatter",
        shape("f32", 1, 1024),
        (x,),
        dimensions=[0],
        collective_device_list=schema.CollectiveDeviceListProto(
            iota_replica_group_list=schema.IotaReplicaGroupListProto(num_replica_groups=1, num_devices_per_group=8)
        ),
    )
    y = module.entry.parameter("y", shape("f32", 4096))
    start = module.entry.add("all-reduce-start", "all-reduce-start", shape("f32", 4096), (y,))
    module.entry.add("all-reduce-done", "all-reduce-done", shape("f32", 4096), (start,))
    assert _one(module, "reduce-scatter.1") == HloCollective("reducescatter", "reduce-scatter.1", 32768, 4096, "f32", 8)
    # no replica groups: every device takes part, and the module does not say how many
    assert _one(module, "all-reduce-done") == HloCollective("allreduce", "all-reduce-start", 16384, 16384, "f32", None)


def test_collective_permute_counts_the_devices_of_its_pairs():
    module = HloModuleBuilder()
    x = module.entry.parameter("x", shape("s32", 100))
    pairs = [schema.SourceTarget(source=s, target=t) for s, t in ((0, 1), (1, 2), (2, 3), (3, 0))]
    start = module.entry.add(
        "collective-permute-start.1",
        "collective-permute-start",
        tuple_shape(shape("s32", 100), shape("s32", 100)),
        (x,),
        source_target_pairs=pairs,
    )
    module.entry.add("collective-permute-done.1", "collective-permute-done", shape("s32", 100), (start,))
    assert _one(module, "collective-permute-start.1") == HloCollective(
        "sendrecv", "collective-permute-start.1", 400, 400, "s32", 4
    )


def test_mesh_axes_and_uneven_groups():
    module = HloModuleBuilder()
    x = module.entry.parameter("x", shape("f32", 16))
    mesh = schema.MeshProto(axes=[schema.MeshAxis(name="data", size=4), schema.MeshAxis(name="model", size=2)])
    module.entry.add(
        "all-reduce.1",
        "all-reduce",
        shape("f32", 16),
        (x,),
        mesh_axes_replica_group_list=schema.MeshAxesReplicaGroupListProto(
            mesh=mesh, axes=[schema.AxisRefProto(mesh_axis_index=0)]
        ),
    )
    module.entry.add(
        "all-reduce.2",
        "all-reduce",
        shape("f32", 16),
        (x,),
        mesh_axes_replica_group_list=schema.MeshAxesReplicaGroupListProto(
            mesh=mesh,
            axes=[
                schema.AxisRefProto(mesh_axis_index=0),
                schema.AxisRefProto(mesh_axis_index=1, sub_axis_info=schema.SubAxis(pre_size=1, size=2)),
            ],
        ),
    )
    module.entry.add(
        "all-reduce.3", "all-reduce", shape("f32", 16), (x,), replica_groups=replica_groups((0, 1, 2), (3,))
    )
    assert _one(module, "all-reduce.1").group_size == 4
    assert _one(module, "all-reduce.2").group_size == 8
    assert _one(module, "all-reduce.3").group_size is None


def test_not_a_collective_or_not_in_the_module():
    module = HloModuleBuilder()
    x = module.entry.parameter("x", shape("f32", 16))
    module.entry.add("add.1", "add", shape("f32", 16), (x, x))
    found = collective_shapes({1: module.to_bytes(), 2: b"\xff\xff"}, [(1, "add.1"), (1, "gone"), (2, "x"), (3, "x")])
    assert found == {(1, "add.1"): None, (1, "gone"): None, (2, "x"): None}


def _real(name):
    """A module XLA compiled (tests/data/real/hlo_collectives/README.md) as a profile stores it (an HloProto)."""
    module = schema.HloModuleProto.FromString((REAL / "hlo_collectives" / name).read_bytes())
    return schema.HloProto(hlo_module=module).SerializeToString()


def test_real_xla_modules():
    """Modules JAX 0.10.2 compiled for 4 devices: pmap psum and all_gather (explicit replica groups) and a jit
    reduction over a sharded axis (mesh-axes replica groups)."""
    protos = {
        1: _real("pmap_psum.hlo_module.pb"),
        2: _real("pmap_all_gather.hlo_module.pb"),
        3: _real("jit_mesh_reduce.hlo_module.pb"),
    }
    found = collective_shapes(protos, [(1, "psum.7"), (2, "all_gather.3"), (3, "all-reduce")])
    assert found[(1, "psum.7")] == HloCollective("allreduce", "psum.7", 256 * 128 * 4, 256 * 128 * 4, "f32", 4)
    assert found[(2, "all_gather.3")] == HloCollective(
        "allgather", "all_gather.3", 64 * 32 * 4, 4 * 64 * 32 * 4, "f32", 4
    )
    assert found[(3, "all-reduce")] == HloCollective("allreduce", "all-reduce", 1024 * 4, 1024 * 4, "f32", 4)
