"""XProf's roofline_model beside ours, on the real MI300X JAX trace and on the generated trace with embedded HLO
(testing.roofline_trace): FLOPs of matrix work agree within 1% wherever XProf has a non-zero number; where it has
none (`__cublas$gemm` custom-calls, hipBLASLt's on ROCm, and cuDNN fused attention) we cost from the HLO shapes;
element-wise ops XProf's GPU cost model weighs by their cost, not as FLOPs (docs/report.md, "Roofline")."""

import json
import os

import pytest

os.environ.setdefault("GLOG_minloglevel", "2")
raw_to_tool_data = pytest.importorskip("xprof.convert.raw_to_tool_data")

from tb_gpu_advisor.analysis.peaks import device_peaks  # noqa: E402
from tb_gpu_advisor.analysis.roofline import kernel_costs  # noqa: E402
from tb_gpu_advisor.readers.hlo.op_cost import MATRIX  # noqa: E402
from tb_gpu_advisor.readers.load import load_model  # noqa: E402
from tb_gpu_advisor.readers.xplane.build import build_model  # noqa: E402
from tb_gpu_advisor.testing.roofline_trace import roofline_builder  # noqa: E402
from tb_gpu_advisor.readers.xplane.reader import parse_space  # noqa: E402
from tests.analysis.test_roofline import AMD_TRACE  # noqa: E402

_GIB = 2**30


def _roofline_model(tmp_path_factory, data):
    copy = tmp_path_factory.mktemp("xprof") / "plugins" / "profile" / "run" / "host.xplane.pb"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(data)
    answer, _ = raw_to_tool_data.xspace_to_tool_data([str(copy)], "roofline_model", {"use_saved_result": False})
    table = json.loads(answer)[0]
    ids = [column["id"] for column in table["cols"]]
    rows = [dict(zip(ids, [cell.get("v") for cell in row["c"]])) for row in table["rows"]]
    return [r for r in rows if r["include_infeed_outfeed"] and r["category"] != "Program"], table["p"]


@pytest.fixture(scope="module")
def xprof_rows(tmp_path_factory):
    return _roofline_model(tmp_path_factory, AMD_TRACE.read_bytes())


def _per_occurrence(rate, avg_us, unit):
    return rate * unit * avg_us * 1e-6


def test_flops_agree_where_xprof_has_them(xprof_rows):
    rows, _ = xprof_rows
    ours = kernel_costs(load_model(str(AMD_TRACE)))
    compared, xprof_zero = 0, set()
    for row in rows:
        cost = ours[(int(row["hlo_module_id"]), row["operation"])]
        theirs = _per_occurrence(row["model_flop_rate"], row["avg_time"], 1e9)  # GFLOP/s x us
        if theirs > 0:
            assert cost.flops == pytest.approx(theirs, rel=0.01)
            compared += 1
        elif cost.flops:
            xprof_zero.add(row["operation"])
        bytes_theirs = _per_occurrence(row["measured_memory_bw"], row["avg_time"], _GIB)  # GiB/s x us
        if bytes_theirs > 0:
            assert cost.bytes == pytest.approx(bytes_theirs, rel=0.01)
    assert compared == 1  # the Triton GEMM fusion: 2*256^3
    assert xprof_zero == {"custom-call.1"}  # the five hipBLASLt GEMMs: XProf's cost analysis skips custom-calls


def test_peaks_match_xprof_except_the_rocm_bandwidth(xprof_rows):
    _, peaks = xprof_rows
    ours = device_peaks(load_model(str(AMD_TRACE)).gpus[0].capabilities)
    assert ours.matrix_tflops == pytest.approx(float(peaks["peak_flop_rate"]) / 1e3, rel=1e-4)
    assert float(peaks["peak_hbm_bw"]) * _GIB / 1e9 == pytest.approx(ours.hbm_gbps / 2, rel=1e-4)


def test_generated_trace_side_by_side(tmp_path_factory):
    builder = roofline_builder()
    rows, _ = _roofline_model(tmp_path_factory, builder.to_bytes())
    ours = kernel_costs(build_model(parse_space(builder.to_bytes(), "generated.xplane.pb")))
    xprof = {
        row["operation"]: (
            _per_occurrence(row["model_flop_rate"], row["avg_time"], 1e9),
            _per_occurrence(row["measured_memory_bw"], row["avg_time"], _GIB),
        )
        for row in rows
    }
    costs = {name: cost for (_, name), cost in ours.items()}
    assert set(xprof) == set(costs) == {"custom-call.1", "dot_fusion", "custom-call.2", "custom-call.3", "add_fusion"}
    for name, (flops, nbytes) in xprof.items():
        if flops > 0 and costs[name].compute == MATRIX:
            assert costs[name].flops == pytest.approx(flops, rel=0.01), name
        if nbytes > 0:
            assert costs[name].bytes == pytest.approx(nbytes, rel=1e-6), name
    assert xprof["custom-call.1"][0] == costs["custom-call.1"].flops  # __cublas$lt$matmul: XProf costs it too
    # The dot fusion's f32 multiply epilogue: 1 FLOP per element for us, 3 in XProf's GPU cost model (0.2%).
    assert round(xprof["dot_fusion"][0]) - costs["dot_fusion"].flops == 2 * 256 * 128
    # cuDNN fused attention: XProf has no FLOPs; ours follow the 4*B*H*S^2*D convention.
    assert xprof["custom-call.2"][0] == xprof["custom-call.3"][0] == 0 and costs["custom-call.2"].flops > 0
    # Element-wise add, multiply, exp: XProf weighs each op by its cost on the GPU (92 per element here); we
    # count arithmetic FLOPs (add and multiply: 2 per element; exp is a transcendental, 0).
    assert costs["add_fusion"].flops == 2 * 2**20 and round(xprof["add_fusion"][0]) == 92 * 2**20
