"""Brings one remote host file into the local cache (reading the bucket only), checking its size first."""

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.remote.cache import default_cache, object_version
from tb_gpu_advisor.remote.filesystem import open_url, remote_errors


def remote_version(url):
    """discovery.version of a URL: the object's current size, ETag (or generation) and modification time."""
    return object_version(_current_info(url)[2])


def _current_info(url):
    """(filesystem, path, info) of the object as it is now, not as a listing remembers it."""
    fs, path = open_url(url)
    with remote_errors(url, "read"):
        fs.invalidate_cache(path)
        info = fs.info(path)
    return fs, path, info


def fetch_remote_file(url, max_bytes=None, cache=None):
    """Local path of a cached copy of `url`; downloads it only when the cache lacks this version of it.

    Raises ProfileError naming the URL when it is missing, empty, above `max_bytes` or cannot be read.
    """
    cache = cache or default_cache()
    fs, path, info = _current_info(url)
    if info.get("type") not in (None, "file"):
        raise ProfileError(url, "is a directory, not an .xplane.pb file")
    size = info.get("size")
    if size == 0:
        raise ProfileError(url, "file is empty (the profiler wrote nothing)")
    if max_bytes and size and size > max_bytes:
        raise ProfileError(url, f"file is {size / 1e6:,.0f} MB, above the {max_bytes / 1e6:,.0f} MB limit "
                                "(raise it with --max-file-mb)")
    def download(destination):
        with remote_errors(url, "download"):
            fs.get_file(path, destination)

    try:
        return cache.fetch(url, object_version(info), download)
    except OSError as err:  # download errors are ProfileErrors already: this is the local cache directory
        raise ProfileError(url, f"cannot keep a local copy in {cache.root}: {err.strerror or err}") from None
