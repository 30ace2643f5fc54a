"""Non-finite numbers (NaN, +-infinity) become null, the same way in every JSON the CLI prints or HTTP serves."""

import json
import math


def finite(value):
    """`value` (dicts, lists, tuples, scalars) with every NaN or infinite float replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def to_json(value):
    """The JSON text the CLI prints: indented, non-finite numbers as null."""
    return json.dumps(finite(value), indent=2, allow_nan=False) + "\n"
