"""The demo logdir: one run per scenario of the library, written (or reused when up to date)."""

import os
from datetime import datetime, timedelta

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.scenarios import SCENARIOS

DEMO_TIMESTAMP = "2026_01_15_09_30_00"  # the newest run's, the first of the library (a problem run)
DEFAULT_DIR = "demo_logs"


def demo_timestamp(name):
    """The profile directory name of scenario `name`: one minute older per place in the library, so each run has
    its own time and the newest (shown first) is the library's first, a problem run."""
    place = list(SCENARIOS).index(name)
    newest = datetime.strptime(DEMO_TIMESTAMP, "%Y_%m_%d_%H_%M_%S")
    return (newest - timedelta(minutes=place)).strftime("%Y_%m_%d_%H_%M_%S")


def run_path(directory, name, host):
    """Where TensorBoard expects the run `name`: `<dir>/<name>/plugins/profile/<timestamp>/<host>.xplane.pb`."""
    return os.path.join(directory, name, *PROFILE_SUBDIR, demo_timestamp(name), host + XPLANE_SUFFIX)


def _current(path, data):
    try:
        with open(path, "rb") as handle:
            return handle.read() == data
    except OSError:
        return False


def write_demo_logdir(directory, names=None):
    """Writes every scenario (or those in `names`) as a run of `directory`; returns the runs, in library order.

    Runs carry seeded step-to-step jitter (`Scenario.build_realistic`). Each run is a dict {name, run (the Profile tab's run id), path, title, written}. A file already holding the
    same bytes is left alone (`written` False), so TensorBoard's caches of an up-to-date demo stay valid.
    """
    runs = []
    for name, scenario in SCENARIOS.items():
        if names is not None and name not in names:
            continue
        builder = scenario.build_realistic()
        data = builder.to_bytes()
        path = run_path(directory, name, builder.hostname)
        written = not _current(path, data)
        if written:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temporary = path + ".tmp"
            with open(temporary, "wb") as handle:
                handle.write(data)
            os.replace(temporary, path)
        runs.append(
            {
                "name": name,
                "run": f"{name}/{demo_timestamp(name)}",
                "path": path,
                "title": scenario.title,
                "written": written,
            }
        )
    return runs
