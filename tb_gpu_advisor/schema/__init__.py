"""The JSON Schemas (draft 2020-12) of the machine outputs: the run report, the comparison and the check result.

    from tb_gpu_advisor.schema import validate
    problems = validate(report, "report")  # [] when the report follows schema_version 1

docs/schema.md says how to use them and what may change; `jsonschema` is needed only to validate.
"""

import functools
import json
from importlib import resources

from tb_gpu_advisor.constants import SCHEMA_VERSION

SCHEMA_NAMES = ("report", "comparison", "check")


@functools.cache
def _text(name):
    if name not in SCHEMA_NAMES:
        raise ValueError(f"no schema {name!r}; schemas: {', '.join(SCHEMA_NAMES)}")
    return resources.files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")


def schema(name):
    """The schema `name` (one of SCHEMA_NAMES) as a fresh dict."""
    return json.loads(_text(name))


def host_report_schema():
    """The schema of one HostReport (HTTP GET /report answers one), as a dict referring into the report schema."""
    report = schema("report")
    return {"$schema": report["$schema"], "$defs": report["$defs"], "$ref": "#/$defs/HostReport"}


def validate(document, name):
    """The problems of `document` against schema `name`, one line each (`at hosts/0/summary: ...`); [] when valid.
    Needs the `jsonschema` package (pip install jsonschema)."""
    try:
        import jsonschema
    except ImportError:
        raise ImportError("validating needs the jsonschema package: pip install jsonschema") from None
    spec = host_report_schema() if name == "host_report" else schema(name)
    validator = jsonschema.Draft202012Validator(spec)
    problems = []
    for error in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(str(part) for part in error.absolute_path) or "(top)"
        problems.append(f"at {where}: {error.message}")
    return problems


__all__ = ["SCHEMA_NAMES", "SCHEMA_VERSION", "schema", "host_report_schema", "validate"]
