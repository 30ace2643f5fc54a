"""The file-system layer's entry points, for local paths and fsspec URLs alike: find runs, resolve what a path
names, and tell which version of a host file is there."""

import os

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.local_listing import local_runs, local_target
from tb_gpu_advisor.profile_files import resolve
from tb_gpu_advisor.remote import is_remote_url


def discover_runs(logdir, follow_symlinks=True, confined=False, memo=None):
    """Every ProfileRun under `logdir`, newest first (profile run names are timestamps), like the Profile tab.

    follow_symlinks=False refuses local host files and run directories that are symbolic links to places
    outside the logdir: their hosts are listed with HostFile.problem set (the server's default). confined=True
    (the assistant server) also leaves run directories linked from outside unlisted: nothing outside is read.
    `memo`, a dict kept between calls, spares re-reading local run directories that did not change (a server's
    relistings).
    """
    if is_remote_url(logdir):
        from tb_gpu_advisor.remote.listing import remote_runs  # fsspec only when a URL asks for it
        return remote_runs(logdir)
    return local_runs(logdir, follow_symlinks=follow_symlinks and not confined, enter_links_out=not confined,
                      memo=memo)


def resolve_target(path, run=None, host=None, confined=False):
    """The (run id, [HostFile]) that `analyze PATH` means: a file, a run directory or a logdir (local, or an
    fsspec URL such as s3://bucket/logdir, whose host files stay URLs until analyzed); see profile_files.resolve.
    confined=True: local links out of `path` are refused (HostFile.problem) and not entered, as discover_runs.
    """
    path = str(path)
    if is_remote_url(path):
        from tb_gpu_advisor.remote.listing import remote_target
        return resolve(remote_target(path), run=run, host=host)
    return resolve(local_target(path, confined=confined), run=run, host=host)


def version(path):
    """What identifies the current content of a host file without reading it: size and modification time
    locally, size, ETag (or generation) and modification time in object storage. ProfileError when unreadable."""
    if is_remote_url(path):
        from tb_gpu_advisor.remote.fetch import remote_version
        return remote_version(path)
    try:
        stat = os.stat(path)
    except OSError as err:
        raise ProfileError(path, f"cannot read: {err.strerror or err}") from None
    return f"{stat.st_size}|{stat.st_mtime_ns}"
