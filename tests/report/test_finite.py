"""Non-finite numbers become null in every JSON we print or serve."""

import json
import math

from tb_gpu_advisor.report.finite import finite, to_json


def test_nan_and_infinities_become_none_at_any_depth():
    value = {"a": math.nan, "b": [1.5, math.inf, {"c": -math.inf}], "d": (2, "x"), "e": None, "f": True}
    assert finite(value) == {"a": None, "b": [1.5, None, {"c": None}], "d": [2, "x"], "e": None, "f": True}


def test_to_json_is_strict_json():
    assert json.loads(to_json({"occupancy_pct": math.nan})) == {"occupancy_pct": None}
