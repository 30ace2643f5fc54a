"""`analyze` of a committed real trace or demo run, once per test process: several modules (tests/schema,
tests/analysis/test_all_idle.py) check every one of them, and each analysis takes seconds."""

import copy
import functools

from tb_gpu_advisor.api import analyze


@functools.cache
def _analyzed(path):
    return analyze(path, executor="inline")


def analyzed(path):
    """The run report of `path` (analyzed inline); each caller gets its own copy, so no test sees another's edits."""
    return copy.deepcopy(_analyzed(str(path)))
