"""The words of where the step time went: the breakdown's categories and the idle attribution's causes, one
attribution shown as the Time line and the Idle line (analysis.breakdown CAUSE_CATEGORY), re-exported by
vocabulary for the CLI, the HTML report and the tab."""

ARROW = "\u2192"  # →, re-exported by vocabulary

# The breakdown categories of summary.breakdown_pct and steps[].breakdown_ms, in the report's order.
BREAKDOWN_LABELS = {
    "compute_16bit": "Compute (16-bit)",
    "compute_32bit": "Compute (32-bit)",
    "compute_unknown": "Compute (other/unknown dtype)",
    "collectives": "Collectives",
    "d2h": f"Device{ARROW}host copy",
    "d2d": f"Device{ARROW}device copy/memset",
    "h2d": f"Host{ARROW}device copy",
    "device_wait": "Device wait (work queued)",
    "input_wait": "Input wait",
    "input_prep": "Input preparation",
    "copy_call": "Copy call",
    "launch": "Kernel launch",
    "host_wait": "Host waiting on the device",
    "host_stall": "Host stalled inside an op (a wait)",
    "gil_wait": "Host waiting for the GIL",
    "host": "Host compute",
    "idle": "Idle",
}
# Column headers of the text report's step table, where 80 columns leave no room for the full labels.
BREAKDOWN_SHORT_LABELS = {
    "compute_16bit": "comp16",
    "compute_32bit": "comp32",
    "compute_unknown": "comp?",
    "collectives": "collect",
    "d2h": f"D{ARROW}H",
    "d2d": f"D{ARROW}D",
    "h2d": f"H{ARROW}D",
    "device_wait": "dev wait",
    "input_wait": "input",
    "input_prep": "prep",
    "copy_call": "copy",
    "launch": "launch",
    "host_wait": "wait",
    "host_stall": "stall",
    "gil_wait": "GIL",
    "host": "host",
    "idle": "idle",
}
# The causes of idle_attribution (analysis.idle_attribution.IDLE_CAUSES): why a GPU sat idle, gap by gap, in the
# words of the breakdown category each is counted in (analysis.breakdown.CAUSE_CATEGORY): one attribution, one
# vocabulary in the Time line, the Idle line and the tab; the two causes of `idle` say "Idle" first, the Time
# line's word for their sum, then which of the two they are.
IDLE_CAUSE_LABELS = {
    "device_wait": BREAKDOWN_LABELS["device_wait"],
    "launch": BREAKDOWN_LABELS["launch"],
    "copy_call": BREAKDOWN_LABELS["copy_call"],
    "host_wait": BREAKDOWN_LABELS["host_wait"],
    "host_stall": BREAKDOWN_LABELS["host_stall"],
    "gil_wait": BREAKDOWN_LABELS["gil_wait"],
    "input": BREAKDOWN_LABELS["input_wait"],
    "input_prep": BREAKDOWN_LABELS["input_prep"],
    "host": BREAKDOWN_LABELS["host"],
    "host_untraced": f"{BREAKDOWN_LABELS['idle']} (host not traced)",
    "unattributed": f"{BREAKDOWN_LABELS['idle']} (no host call found)",
}
# What the time breakdown (summary.breakdown_pct, steps[].breakdown_ms) counts, beside the busy figures above.
BREAKDOWN_DEFINITION = (
    "Time by category: each instant of the analyzed time counts once, as compute when any GPU computes, then "
    "collectives and copies; when every GPU is idle, as the idle cause of the GPU that resumes first (the idle "
    "attribution); with several GPUs its compute share is not the GPU busy figures, which are means over the GPUs"
)
