from tb_gpu_advisor.readers.xplane import schema
from tb_gpu_advisor.readers.xplane.stats import is_derived_line, plane_stats, stat_value


def test_ref_value_resolves_to_the_interned_name():
    plane = schema.XPlane()
    plane.stat_metadata[1].name = "kernel_details"
    plane.stat_metadata[2].name = "regs:32 grid:1,1,1"
    stat = schema.XStat(metadata_id=1, ref_value=2)
    assert stat_value(stat, {1: "kernel_details", 2: "regs:32 grid:1,1,1"}) == "regs:32 grid:1,1,1"


def test_every_numeric_oneof_is_read():
    names = {}
    assert stat_value(schema.XStat(int64_value=-5), names) == -5
    assert stat_value(schema.XStat(uint64_value=2**64 - 1), names) == 2**64 - 1
    assert stat_value(schema.XStat(double_value=1.5), names) == 1.5
    assert stat_value(schema.XStat(str_value="s"), names) == "s"
    assert stat_value(schema.XStat(), names) is None


def test_plane_stats_by_name():
    plane = schema.XPlane()
    plane.stat_metadata[7].name = "core_count"
    plane.stats.add(metadata_id=7, int64_value=80)
    assert plane_stats(plane) == {"core_count": 80}


def test_derived_line_ids_match_xprof_range():
    assert is_derived_line(-559038737)  # Steps
    assert is_derived_line(-559038734)  # TensorFlow Ops
    assert is_derived_line(-559038737 + 389)
    assert not is_derived_line(-559038737 + 390)
    assert not is_derived_line(142)
    # ids are compared as int32, like XProf: the uint32 spelling of the Steps id is derived too
    assert is_derived_line(0xDEADBEEF)
