"""The file size limit (--max-file-mb, --gpu_advisor_max_file_mb): MB to exact bytes, and sizes in messages."""

import math


def limit_bytes(megabytes):
    """The limit in bytes of a positive number of MB (2**20 bytes): never 0, which would mean no limit."""
    return max(1, math.floor(megabytes * 2**20))


def readable_size(size):
    """A byte count in the unit of the limit: `5,000 MB`, `1.5 MB`, or bytes below one MB."""
    value = size / 2**20
    if value >= 10:
        return f"{value:,.0f} MB"
    if value >= 1:
        return f"{value:.1f} MB"
    return "1 byte" if size == 1 else f"{size:,} bytes"


def too_big(size, max_bytes, at_least=False):
    """The one-line problem of a file of `size` bytes (`at_least`: more than that) above `max_bytes`."""
    return (
        f"file is {'more than ' if at_least else ''}{readable_size(size)}, above the {readable_size(max_bytes)} "
        "limit (raise it with --max-file-mb)"
    )


def inflates_too_big(max_bytes):
    """The one-line problem of a compressed file whose content passes `max_bytes`."""
    return (
        f"inflates to more than the {readable_size(max_bytes)} limit (the limit applies to the decompressed "
        "size; raise it with --max-file-mb)"
    )
