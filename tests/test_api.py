"""The Python API: tb_gpu_advisor.analyze and .compare give what the CLI prints, and load on first use."""

import io
import json
import subprocess
import sys

import pytest

import tb_gpu_advisor
from tb_gpu_advisor.cli import main
from tb_gpu_advisor.errors import ProfileError
from tests.data import real_trace


def _cli_json(*argv):
    out, err = io.StringIO(), io.StringIO()
    assert main([*map(str, argv), "--format", "json"], out=out, err=err) == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_analyze_is_the_cli_report():
    path = real_trace("tf221_cpu_keras_input_bound.xplane.pb")
    report = tb_gpu_advisor.analyze(str(path))
    assert report == _cli_json("analyze", path)
    assert report["hosts"][0]["summary"]["bottleneck"] == "input"


def test_compare_is_the_cli_comparison():
    before, after = (real_trace(f"tf221_cpu_keras_input_{kind}.xplane.pb") for kind in ("bound", "fixed"))
    comparison = tb_gpu_advisor.compare(str(before), str(after))
    assert comparison == _cli_json("compare", before, after)
    assert comparison["hosts"][0]["change"] == "faster"


def test_a_side_with_no_readable_host_is_a_profile_error():
    corrupt = str(real_trace("tpu_inference_utf8_mangled.xplane.pb"))
    assert tb_gpu_advisor.analyze(corrupt)["errors"][0]["file"] == corrupt
    with pytest.raises(ProfileError, match="not a valid XSpace protobuf"):
        tb_gpu_advisor.compare(corrupt, str(real_trace("tf221_cpu_keras_input_fixed.xplane.pb")))


def test_importing_the_package_loads_no_analysis_code():
    code = "import sys, tb_gpu_advisor; print(sorted(m for m in sys.modules if m.startswith(('numpy', 'tb_gpu_advisor.'))))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
    with pytest.raises(AttributeError):
        _ = tb_gpu_advisor.no_such_function
