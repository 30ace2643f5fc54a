"""Non-finite numbers (NaN, +-infinity) become null and lone surrogates U+FFFD, the same way in every JSON the CLI
prints or HTTP serves, so strict parsers (and UTF-8 encoders) accept it."""

from __future__ import annotations

import json
import math

from tb_gpu_advisor.report.safe_text import valid_unicode


def finite(value):
    """`value` (dicts, lists, tuples, scalars) with every NaN or infinite float replaced by None and every
    string (keys too) valid Unicode."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, dict):
        return {finite(key): finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def to_json(value: dict) -> str:
    """The JSON text the CLI prints: indented, non-finite numbers as null."""
    return json.dumps(finite(value), indent=2, allow_nan=False) + "\n"
