"""One page of a HostReport's kernel table: filtered by name, op or op type, sorted by a column, sliced; with
each row's op type and the table's time rolled up by op type."""

from tb_gpu_advisor.analysis.op_types import OP_TYPES, op_type, op_type_rollup

SORT_KEYS = (
    "name",
    "occurrences",
    "total_us",
    "avg_us",
    "min_us",
    "max_us",
    "occupancy_pct",
    "achieved_occupancy_pct",
    "registers_per_thread",
    "shared_memory_bytes",
    "uses_tensor_cores",
    "op_name",
    "peak_pct",
    "achieved_tflops",
    "flops",
)
DEFAULT_SORT = "total_us"
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_FILTER_CHARS = 200
OP_TYPE_CHOICES = ("",) + OP_TYPES


def _matches(row, needle):
    return needle in row["name"].lower() or needle in (row.get("op_name") or "").lower()


def _sorted(rows, sort, descending):
    """Rows ordered by `sort`; rows without a value (None) come last in either order, ties by name."""
    present = [r for r in rows if r.get(sort) is not None]
    missing = [r for r in rows if r.get(sort) is None]
    if sort in ("name", "op_name"):
        present.sort(key=lambda r: (r[sort].lower(), r["name"]), reverse=descending)
    else:
        present.sort(key=lambda r: r["name"])
        present.sort(key=lambda r: r[sort], reverse=descending)
    return present + sorted(missing, key=lambda r: r["name"])


def kernel_page(
    kernels, offset=0, limit=DEFAULT_LIMIT, sort=DEFAULT_SORT, order="desc", text_filter="", op_type_filter=""
):
    """{total, total_unfiltered, offset, limit, sort, order, filter, op_type, kernel_time_us, op_types, rows}.

    `kernels` is HostReport["kernels"]; arguments must already be validated (sort in SORT_KEYS, order
    "asc"/"desc", 0 <= offset, 1 <= limit <= MAX_LIMIT, op_type_filter "" or one of OP_TYPES). Rows gain
    `op_type`; `kernel_time_us` is the time of every kernel (unfiltered), so a row's share is
    total_us / kernel_time_us; `op_types` is analysis.op_types.op_type_rollup of every kernel.
    """
    needle = text_filter.strip().lower()
    typed = [{**row, "op_type": op_type(row.get("name"), row.get("op_name"))} for row in kernels]
    rows = [row for row in typed if _matches(row, needle)] if needle else typed
    if op_type_filter:
        rows = [row for row in rows if row["op_type"] == op_type_filter]
    rows = _sorted(rows, sort, order == "desc")
    return {
        "total": len(rows),
        "total_unfiltered": len(kernels),
        "offset": offset,
        "limit": limit,
        "sort": sort,
        "order": order,
        "filter": text_filter,
        "op_type": op_type_filter,
        "kernel_time_us": round(sum(float(row.get("total_us") or 0.0) for row in kernels), 3),
        "op_types": op_type_rollup(kernels),
        "rows": rows[offset : offset + limit],
    }
