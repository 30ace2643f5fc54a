"""One page of a HostReport's kernel table: filtered by name or op, sorted by a column, sliced."""

SORT_KEYS = ("name", "occurrences", "total_us", "avg_us", "min_us", "max_us", "occupancy_pct",
             "registers_per_thread", "shared_memory_bytes", "uses_tensor_cores", "op_name", "peak_pct",
             "achieved_tflops", "flops")
DEFAULT_SORT = "total_us"
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_FILTER_CHARS = 200


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


def kernel_page(kernels, offset=0, limit=DEFAULT_LIMIT, sort=DEFAULT_SORT, order="desc", text_filter=""):
    """{total, total_unfiltered, offset, limit, sort, order, filter, rows}.

    `kernels` is HostReport["kernels"]; arguments must already be validated (sort in SORT_KEYS, order
    "asc"/"desc", 0 <= offset, 1 <= limit <= MAX_LIMIT).
    """
    needle = text_filter.strip().lower()
    rows = [row for row in kernels if _matches(row, needle)] if needle else list(kernels)
    rows = _sorted(rows, sort, order == "desc")
    return {
        "total": len(rows),
        "total_unfiltered": len(kernels),
        "offset": offset,
        "limit": limit,
        "sort": sort,
        "order": order,
        "filter": text_filter,
        "rows": rows[offset:offset + limit],
    }
