"""The words of a host's collectives table, shared by the CLI, the HTML report and the tab (vocabulary.exported())."""

# The columns of a host's collectives table (report `collectives[]`), as the text report heads them.
COLLECTIVE_HEADERS = (
    "recorded on",
    "collective",
    "calls",
    "per step",
    "time",
    "bytes in",
    "dtype",
    "group",
    "sizes from",
    "issued by",
)
# collectives[].source: where a call was recorded.
COLLECTIVE_SOURCE_LABELS = {"kernel": "NCCL/RCCL kernels on the GPU", "host": "PyTorch's record_param_comms ops"}
# collectives[].size_source: where the sizes come from, in words.
COLLECTIVE_SIZE_SOURCES = {
    "profiler": "profiler args",
    "hlo": "HLO shapes",
    "tf_op": "TF op shapes",
    "host_op": "host op inputs",
}


def collective_bandwidth_gap(row, group_sizes=()):
    """The key of COLLECTIVE_BANDWIDTH_GAPS that says why a `collective_bandwidth.collectives[]` row has no bus
    bandwidth, or None when it has one; `group_sizes`: the kind's kernel row's `group_sizes` in `collectives[]`."""
    if row.get("busbw_gbps") is not None:
        return None
    if not row.get("sized_calls"):
        return "no_sizes"
    if not row.get("large_calls"):
        return "no_large_calls"
    if row.get("group_size") is None:
        return "mixed_groups" if len(group_sizes) > 1 else "no_group"
    return "no_bus_factor"
