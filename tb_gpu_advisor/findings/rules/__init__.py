"""The rule families, in the order their findings rank on ties; each module's ids start with its name."""

from tb_gpu_advisor.findings.rules import (batch, communication, environment, fusion, host, input, launch, occupancy,
                                           placement, precision, steps, threading, transfer)

FAMILIES = (input, batch, precision, fusion, launch, occupancy, transfer, host, threading, placement, communication,
            steps, environment)
RULES = tuple(rule for family in FAMILIES for rule in family.RULES)
