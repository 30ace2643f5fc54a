"""The demo logdir: one run per scenario of the library, written (or reused when up to date)."""

import os

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.scenarios import SCENARIOS

DEMO_TIMESTAMP = "2026_01_15_09_30_00"
DEFAULT_DIR = "demo_logs"


def run_path(directory, name, host):
    """Where TensorBoard expects the run `name`: `<dir>/<name>/plugins/profile/<timestamp>/<host>.xplane.pb`."""
    return os.path.join(directory, name, *PROFILE_SUBDIR, DEMO_TIMESTAMP, host + XPLANE_SUFFIX)


def _current(path, data):
    try:
        with open(path, "rb") as handle:
            return handle.read() == data
    except OSError:
        return False


def write_demo_logdir(directory, names=None):
    """Writes every scenario (or those in `names`) as a run of `directory`; returns the runs, in library order.

    Each run is a dict {name, run (the Profile tab's run id), path, title, written}. A file already holding the
    same bytes is left alone (`written` False), so TensorBoard's caches of an up-to-date demo stay valid.
    """
    runs = []
    for name, scenario in SCENARIOS.items():
        if names is not None and name not in names:
            continue
        builder = scenario.build()
        data = builder.to_bytes()
        path = run_path(directory, name, builder.hostname)
        written = not _current(path, data)
        if written:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temporary = path + ".tmp"
            with open(temporary, "wb") as handle:
                handle.write(data)
            os.replace(temporary, path)
        runs.append({"name": name, "run": f"{name}/{DEMO_TIMESTAMP}", "path": path, "title": scenario.title,
                     "written": written})
    return runs
