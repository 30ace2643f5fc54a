"""The rule families, in the order their findings rank on ties; each module's ids start with its name."""

from tb_gpu_advisor.findings.rules import (
    batch,
    collectives,
    communication,
    environment,
    fusion,
    host,
    input,
    kernel,
    launch,
    memory,
    occupancy,
    placement,
    precision,
    steps,
    sync,
    threading,
    transfer,
)

FAMILIES = (
    input,
    batch,
    precision,
    fusion,
    launch,
    occupancy,
    kernel,
    transfer,
    host,
    threading,
    placement,
    communication,
    collectives,
    steps,
    environment,
    sync,
    memory,
)
RULES = tuple(rule for family in FAMILIES for rule in family.RULES)
