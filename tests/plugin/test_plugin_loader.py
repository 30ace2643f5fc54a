"""The TBLoader: flags in their own group, validation, guarded import, and the entry point."""

import argparse
import sys
from importlib import metadata

import pytest
from tensorboard.plugins import base_plugin

from tb_gpu_advisor.plugin.loader import GpuAdvisorLoader
from tb_gpu_advisor.plugin.plugin import GpuAdvisorPlugin


def _parser():
    parser = argparse.ArgumentParser()
    GpuAdvisorLoader().define_flags(parser)
    return parser


def test_flags_live_in_their_own_group_and_have_defaults():
    parser = _parser()
    assert "GPU Advisor plugin" in [group.title for group in parser._action_groups]
    flags = parser.parse_args([])
    assert flags.gpu_advisor_max_file_mb == 4096 and flags.gpu_advisor_cache_entries == 32
    assert parser.parse_args(["--gpu_advisor_max_file_mb", "12.5"]).gpu_advisor_max_file_mb == 12.5


@pytest.mark.parametrize(
    "argv",
    [
        ["--gpu_advisor_max_file_mb", "0"],
        ["--gpu_advisor_cache_entries", "0"],
        ["--gpu_advisor_cache_mb", "0"],
        ["--gpu_advisor_time_budget_s", "nan"],
        ["--gpu_advisor_memory_budget_mb", "-1"],
        ["--gpu_advisor_time_budget_s", "inf"],
    ],
)
def test_bad_flag_values_are_flag_errors(argv):
    with pytest.raises(base_plugin.FlagsError):
        GpuAdvisorLoader().fix_flags(_parser().parse_args(argv))


def test_load_builds_the_plugin_with_the_flags(tmp_path):
    flags = _parser().parse_args(
        [
            "--gpu_advisor_max_file_mb",
            "1",
            "--gpu_advisor_cache_entries",
            "2",
            "--gpu_advisor_cache_mb",
            "3",
            "--gpu_advisor_time_budget_s",
            "4",
            "--gpu_advisor_memory_budget_mb",
            "5",
        ]
    )
    plugin = GpuAdvisorLoader().load(base_plugin.TBContext(logdir=str(tmp_path), flags=flags))
    assert isinstance(plugin, GpuAdvisorPlugin)
    assert plugin.service._max_bytes == 2**20 and plugin.service._max_entries == 2
    assert plugin.service._cache_bytes == 3 * 2**20
    assert (plugin.service._pool.budgets.time_s, plugin.service._pool.budgets.memory_bytes) == (4, 5 * 2**20)
    plugin.service.shutdown()


def test_an_import_failure_skips_the_tab(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "tb_gpu_advisor.plugin.plugin", None)
    assert GpuAdvisorLoader().load(base_plugin.TBContext(logdir=str(tmp_path))) is None


def test_the_entry_point_names_the_loader():
    points = [p for p in metadata.entry_points(group="tensorboard_plugins") if p.name == "gpu_advisor"]
    assert len(points) == 1, "reinstall the package (pip install -e .) to register the entry point"
    assert points[0].load() is GpuAdvisorLoader
