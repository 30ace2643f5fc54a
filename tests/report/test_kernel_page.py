"""kernel_page: filtering, sorting (None last either way) and slicing of the kernel table."""

from tb_gpu_advisor.report.kernel_page import kernel_page

ROWS = [
    {"name": "b_gemm", "op_name": "model/MatMul", "total_us": 5.0, "occupancy_pct": None},
    {"name": "a_relu", "op_name": "", "total_us": 9.0, "occupancy_pct": 50.0},
    {"name": "C_conv", "op_name": "model/Conv2D", "total_us": 1.0, "occupancy_pct": 25.0},
    {"name": "d_copy", "op_name": None, "total_us": 5.0, "occupancy_pct": 75.0},
]


def names(page):
    return [row["name"] for row in page["rows"]]


def test_default_is_total_time_descending_ties_by_name():
    assert names(kernel_page(ROWS)) == ["a_relu", "b_gemm", "d_copy", "C_conv"]


def test_missing_values_come_last_in_both_orders():
    assert names(kernel_page(ROWS, sort="occupancy_pct", order="desc")) == ["d_copy", "a_relu", "C_conv", "b_gemm"]
    assert names(kernel_page(ROWS, sort="occupancy_pct", order="asc")) == ["C_conv", "a_relu", "d_copy", "b_gemm"]


def test_names_sort_case_insensitively():
    assert names(kernel_page(ROWS, sort="name", order="asc")) == ["a_relu", "b_gemm", "C_conv", "d_copy"]


def test_filter_matches_kernel_or_op_name_case_insensitively():
    page = kernel_page(ROWS, text_filter="  MATMUL ")
    assert names(page) == ["b_gemm"] and page["total"] == 1 and page["total_unfiltered"] == 4
    assert names(kernel_page(ROWS, text_filter="c")) == ["d_copy", "C_conv"]


def test_slicing():
    page = kernel_page(ROWS, offset=1, limit=2)
    assert names(page) == ["b_gemm", "d_copy"] and (page["offset"], page["limit"], page["total"]) == (1, 2, 4)
    assert kernel_page(ROWS, offset=10)["rows"] == []


def test_the_input_is_not_modified():
    rows = [dict(r) for r in ROWS]
    kernel_page(rows, sort="name", order="asc")
    assert rows == ROWS


def test_op_types_of_rows_their_rollup_and_filter():
    page = kernel_page(ROWS)
    assert {row["name"]: row["op_type"] for row in page["rows"]} == {
        "a_relu": "elementwise",
        "b_gemm": "matmul_conv",
        "d_copy": "copy",
        "C_conv": "matmul_conv",
    }
    assert page["kernel_time_us"] == 20.0
    assert page["op_types"] == [
        {"op_type": "elementwise", "total_us": 9.0, "kernels": 1, "occurrences": 0, "share_pct": 45.0},
        {"op_type": "matmul_conv", "total_us": 6.0, "kernels": 2, "occurrences": 0, "share_pct": 30.0},
        {"op_type": "copy", "total_us": 5.0, "kernels": 1, "occurrences": 0, "share_pct": 25.0},
    ]
    filtered = kernel_page(ROWS, op_type_filter="matmul_conv")
    assert names(filtered) == ["b_gemm", "C_conv"] and filtered["total"] == 2 and filtered["total_unfiltered"] == 4
    assert filtered["op_types"] == page["op_types"]  # the rollup is of the whole table
