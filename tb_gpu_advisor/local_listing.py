"""Lists a local path into a profile_files.Target: a file, a run directory's host files, or a logdir's runs."""

import os

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.profile_files import HostFile, ProfileRun, Target, host_name, newest_first, run_id


def local_target(path):
    """The Target of a local path; ProfileError when it does not exist."""
    if not os.path.exists(path):
        raise ProfileError(path, "no such file or directory")
    if os.path.isfile(path):
        return Target(path=path, name=os.path.basename(path), is_file=True)
    direct = _hosts_in(path)
    return Target(path=path, name=os.path.basename(os.path.normpath(path)), is_file=False, hosts=direct,
                  runs=() if direct else local_runs(path))


def local_runs(logdir):
    """Every ProfileRun under a local `logdir`, newest first, with absolute paths."""
    runs = []
    logdir = os.path.abspath(logdir)
    for directory, subdirs, _ in os.walk(logdir, followlinks=False):
        subdirs.sort()
        if os.path.basename(directory) != PROFILE_SUBDIR[1] or \
                os.path.basename(os.path.dirname(directory)) != PROFILE_SUBDIR[0]:
            continue
        tb_run = os.path.relpath(os.path.dirname(os.path.dirname(directory)), logdir)
        for profile_run in sorted(subdirs):
            run_path = os.path.join(directory, profile_run)
            hosts = _hosts_in(run_path)
            if hosts:
                tb_run_id = "" if tb_run == "." else tb_run.replace(os.sep, "/")
                runs.append(ProfileRun(run=run_id(tb_run_id, profile_run), path=run_path, hosts=hosts))
        subdirs[:] = []
    return newest_first(runs)


def _hosts_in(directory):
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return ()
    return tuple(HostFile(host=host_name(name), path=os.path.join(directory, name))
                 for name in names
                 if name.endswith(XPLANE_SUFFIX) and os.path.isfile(os.path.join(directory, name)))
