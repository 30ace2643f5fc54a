"""Opens an fsspec filesystem for a URL and turns its failures into one-line ProfileErrors naming the URL."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from tb_gpu_advisor.errors import ProfileError

INSTALL_HINT = "pip install 'tb-gpu-advisor[remote]' (s3://) or 'tb-gpu-advisor[gcs]' (gs://)"
# Backends log each retry with a traceback; without a handler of the application's, Python would print them.
_BACKEND_LOGGERS = ("fsspec", "s3fs", "gcsfs", "aiobotocore", "botocore", "adlfs")
for _name in _BACKEND_LOGGERS:
    logging.getLogger(_name).addHandler(logging.NullHandler())


def open_url(url: str) -> tuple[Any, str]:
    """(filesystem, path without protocol) for `url`; ProfileError when fsspec or the backend is missing."""
    try:
        import fsspec
    except ImportError:
        raise ProfileError(url, f"reading remote logdirs needs fsspec: {INSTALL_HINT}") from None
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as err:
        raise ProfileError(url, f"no filesystem for this URL ({err}); {INSTALL_HINT}") from None
    except (ValueError, TypeError) as err:
        raise ProfileError(url, f"not a usable URL: {err}") from None


@contextlib.contextmanager
def remote_errors(url: str, action: str) -> Iterator[None]:
    """Re-raises any failure of a remote call as ProfileError(url, "cannot <action>: ...")."""
    try:
        yield
    except ProfileError:
        raise
    except FileNotFoundError:
        raise ProfileError(url, "no such file or directory") from None
    except PermissionError as err:
        raise ProfileError(url, f"cannot {action}: access denied ({err})") from None
    except Exception as err:  # network, credentials, backend errors: their types differ per filesystem
        message = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise ProfileError(
            url, f"cannot {action}: {type(err).__name__}" + (f": {message}" if message else "")
        ) from None
