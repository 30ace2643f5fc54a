"""Where the tests find their data: the real traces and XProf's reference outputs committed under tests/data/real."""

from pathlib import Path

REAL = Path(__file__).resolve().parent / "real"


def real_trace(name):
    """Path of a committed real trace (`kineto/<file>` for PyTorch traces); see tests/data/real/README.md."""
    return _existing(REAL / name)


def xprof_reference(*parts):
    """Path of one of XProf's outputs for a real trace, e.g. ("xprof_gpu_multi_worker", "kernel_stats.json")."""
    return _existing(REAL.joinpath("reference", *parts))


def _existing(path):
    if not path.is_file():
        raise FileNotFoundError(f"test data {path} is missing from this checkout (it is committed under tests/data)")
    return path
