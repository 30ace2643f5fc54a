"""Finds profile runs and hosts under a remote logdir by listing it (no file is downloaded), as discovery does."""

import posixpath

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.discovery import HostFile, ProfileRun, host_name, newest_first, pick_host
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.kineto.files import is_kineto_file
from tb_gpu_advisor.kineto.runs import kineto_runs
from tb_gpu_advisor.remote.filesystem import open_url, remote_errors


def _host_file(fs, path):
    name = posixpath.basename(path)
    return HostFile(host=host_name(name), path=fs.unstrip_protocol(path))


def _list(url):
    """(fs, root, root info, {path: info} of every file below root); one listing call for a directory."""
    fs, root = open_url(url)
    root = root.rstrip("/")
    with remote_errors(url, "list"):
        fs.invalidate_cache(root)  # a long-lived filesystem instance (the plugin's) must see new runs
        info = fs.info(root)
        files = {} if info.get("type") == "file" else fs.find(root, detail=True)
    return fs, root, info, files


def _kineto_runs(fs, root, files):
    """ProfileRuns of the Kineto trace files, grouped per directory as discovery does locally."""
    by_dir = {}
    for path in sorted(files):
        if is_kineto_file(path) and files[path].get("type", "file") == "file":
            by_dir.setdefault(posixpath.dirname(path), []).append(posixpath.basename(path))
    found = []
    for directory, names in by_dir.items():
        relative = posixpath.relpath(directory, root)
        run_dir = posixpath.basename(root) if relative == "." else relative
        for run_id, members in kineto_runs(run_dir, names):
            found.append(ProfileRun(run=run_id, path=fs.unstrip_protocol(directory),
                                    hosts=tuple(HostFile(host=worker, path=fs.unstrip_protocol(
                                        posixpath.join(directory, name))) for worker, name in members)))
    return found


def _runs(fs, root, files):
    runs = {}
    for path in sorted(files):
        if not path.endswith(XPLANE_SUFFIX) or files[path].get("type", "file") != "file":
            continue
        parts = posixpath.relpath(path, root).split("/")
        if len(parts) < 4 or tuple(parts[-4:-2]) != PROFILE_SUBDIR:
            continue
        tb_run, profile_run = "/".join(parts[:-4]), parts[-2]
        run_id = f"{tb_run}/{profile_run}" if tb_run else profile_run
        runs.setdefault(run_id, (posixpath.dirname(path), []))[1].append(_host_file(fs, path))
    found = [ProfileRun(run=run_id, path=fs.unstrip_protocol(directory), hosts=tuple(hosts))
             for run_id, (directory, hosts) in runs.items()]
    return newest_first(found + _kineto_runs(fs, root, files))


def discover_remote_runs(url):
    """Every ProfileRun under a remote logdir, newest first; their paths are URLs. Raises ProfileError."""
    fs, root, _, files = _list(url)
    return _runs(fs, root, files)


def resolve_remote_target(url, run=None, host=None):
    """discovery.resolve_target for a URL: a file, a run directory or a logdir; host files stay URLs."""
    fs, root, info, files = _list(url)
    if info.get("type") == "file":
        if run:
            raise ProfileError(url, "--run applies to a logdir, not to a single file")
        return None, pick_host(url, [HostFile(host=host_name(posixpath.basename(root)), path=url)], host)
    direct = [_host_file(fs, path) for path in sorted(files)
              if posixpath.dirname(path) == root and path.endswith(XPLANE_SUFFIX)]
    if direct:
        if run:
            raise ProfileError(url, "is a run directory; --run applies to a logdir")
        return posixpath.basename(root), pick_host(url, direct, host)
    runs = _runs(fs, root, files)
    if not runs:
        raise ProfileError(url, "no profiles found: expected <logdir>/<run>/plugins/profile/<timestamp>/"
                                "<host>.xplane.pb")
    if run is None:
        chosen = runs[0]
    else:
        chosen = next((r for r in runs if r.run == run), None)
        if chosen is None:
            raise ProfileError(url, f"no run {run!r}; runs: {', '.join(r.run for r in runs)}")
    return chosen.run, pick_host(chosen.path, chosen.hosts, host)
