"""Remote logdirs (gs://, s3://, any fsspec URL): listed in place, host files fetched into a bounded cache.

This package's `__init__` imports nothing heavy: `is_remote_url` is safe to call everywhere.
"""

from __future__ import annotations

import re
from os import PathLike

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def is_remote_url(path: str | PathLike[str]) -> bool:
    """True for `scheme://...` paths (s3://, gs://, gcs://, az://, http://, memory://, file://...)."""
    return bool(_URL.match(str(path)))
