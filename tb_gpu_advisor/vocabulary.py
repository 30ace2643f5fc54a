"""The product's words and units, one source for the CLI, the HTML report and the tab (static/vocabulary.js).

`python -m tb_gpu_advisor.vocabulary` rewrites static/vocabulary.js from this module; a test fails when the file
and this module disagree.
"""

import json
import os
import re
import sys

from tb_gpu_advisor import vocabulary_ranks
from tb_gpu_advisor.vocabulary_time import (  # noqa: F401 (the breakdown's and idle causes' words, re-exported)
    ARROW,
    BREAKDOWN_DEFINITION,
    BREAKDOWN_LABELS,
    BREAKDOWN_SHORT_LABELS,
    IDLE_CAUSE_LABELS,
)
from tb_gpu_advisor.vocabulary_kernels import KERNEL_PLUMBING
from tb_gpu_advisor.vocabulary_collectives import (
    COLLECTIVE_HEADERS,
    COLLECTIVE_SIZE_SOURCES,
    COLLECTIVE_SOURCE_LABELS,
    collective_bandwidth_gap as collective_bandwidth_gap,
)

MICRO = "\u00b5s"  # µs
LEFT_ARROW = "\u2190"  # ←
TIMES = "\u00d7"  # ×
# A finding's speedup stops here (at most 99% of the step recoverable): worded "over 100×", never "about 100×".
SPEEDUP_CAP = 100.0
NBSP = "\u00a0"  # between a number and its unit, so a line never breaks between them
BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")  # sizes are binary, in the CLI, the HTML report and the tab

# What the configuration says when no matmul/convolution kernel ran, so its precision cannot be told.
NO_MATMUL_PRECISION = "no matmul/conv kernel captured"
# The matrix units a kernel table's column names, by GPU vendor: (short header, words).
MATRIX_UNIT_LABELS = {"NVIDIA": ("TC", "Tensor Cores"), "AMD": ("MC", "Matrix cores")}
# What each "busy" figure means, one definition per figure, shown on hover in the tab and in the HTML report.
BUSY_DEFINITIONS = {
    "gpu_busy": "GPU busy: the share of the analyzed time in which a GPU runs a kernel, copy, memset or graph, "
    "averaged over the GPUs that ran anything",
    "gpu_compute_busy": "GPU compute busy: the same share, counting kernels and graphs only (collective kernels "
    "left out, and copies and memsets where they add 1 point or more)",
    "gpu_busy_no_collectives": "GPU busy without collectives: the same share, counting kernels, copies, memsets and "
    "graphs but not collective kernels",
    "device_busy": "Busy: the share of the analyzed time in which this GPU runs a kernel, copy, memset or graph",
    "step_busy": "GPU busy in a step (any GPU): the share of the step in which at least one GPU runs a kernel, copy, "
    "memset or graph",
}
# The kernel table's occupancy column: CUPTI's theoretical occupancy (XPlane) or the PyTorch profiler's estimate
# of achieved occupancy (Kineto), two different numbers: (column header, what it means).
OCCUPANCY_LABELS = {
    "theoretical": (
        "Occupancy",
        "Theoretical occupancy: the share of an SM's warp slots this launch "
        "configuration can fill (registers, shared memory, block size), as the profiler "
        "recorded it",
    ),
    "achieved": (
        "Est. occupancy",
        "Estimated achieved occupancy: the PyTorch profiler's `est. achieved "
        "occupancy %`, its estimate of the warp slots the kernel kept busy",
    ),
}
# summary.bottleneck, as words. "host" is the host's own work setting the pace; "host_blocked" is a host thread
# blocked (inside an op call, on a lock) while the GPU idles: a wait, which says nothing of the host being slow.
BOTTLENECK_LABELS = {
    "input": "Input-bound",
    "host": "Host-bound",
    "host_blocked": "Host-blocked",
    "launch": "Launch-bound",
    "transfer": "Transfer-bound",
    "kernel": "Kernel-bound",
    "communication": "Communication-bound",
    "none": "No bottleneck",
    "unknown": "Not enough data",
}
# The keys of `transfers`.
TRANSFER_LABELS = {
    "h2d": f"Host{ARROW}device",
    "d2h": f"Device{ARROW}host",
    "d2d": f"Device{ARROW}device",
    "p2p": f"GPU{ARROW}GPU (peer)",
    "other": "Other",
}
# What a configuration row says when the trace does not record the setting.
NOT_IN_TRACE = "not in the trace"
# How many kernels the launch latency counts ({paired} of {kernels}), in the CLI, the HTML report and the tab's
# launch card; "graph" where graph (command-buffer) launches replay many kernels under one call ({calls} calls,
# {s}: "s" unless one).
LAUNCH_PAIRING_WORDS = {
    "kernels": "{paired} of {kernels} kernels paired with their host launch",
    "graph": "{paired} of {kernels} kernels traced to {calls} host launch call{s} (a graph launch replays many "
    "kernels under one call)",
}
# Why a collective kind has no bus bandwidth (report `collective_bandwidth.collectives[]`, busbw_gbps null):
# the reasons in the order they are checked (collective_bandwidth_gap).
COLLECTIVE_BANDWIDTH_GAPS = {
    "no_sizes": f"sizes {NOT_IN_TRACE}",
    "no_large_calls": "no call of 8 MiB or more",
    "mixed_groups": "calls of several group sizes",
    "no_group": f"group size {NOT_IN_TRACE}",
    "no_bus_factor": "no bus bandwidth defined for this collective",
}
# configuration.examples_per_step.scope, as words: the whole step, or one device's share of it.
BATCH_SCOPE_LABELS = {"global": "global", "per_device": "per device"}
# A GPU as the framework that wrote the trace names it: PyTorch's cuda:N (on ROCm too) for a Kineto trace's
# /device:GPU:N; other formats keep the device path (the tab shows it without "/device:").
DEVICE_NAME_PREFIXES = {"kineto": "cuda:"}
# comparability.work_per_step.source: what measured how much work a candidate step does against a baseline step.
WORK_SOURCE_LABELS = {
    "examples_per_step": "examples per step, from the input tensors",
    "kernel_launches_per_step": "kernel launches per step: the median, over the compute kernels both runs launch, "
    "of the candidate's launches per step over the baseline's",
}
# predictions[].score of compare's prediction check: a model (a point estimate) is within 25% of the measured
# speedup or not; a bound (an upper limit) held, held within noise (the measured 95% CI includes it) or the fix
# beat it (the CI's low end above it). score_text adds the numbers to a bound's words. A finding the combined
# estimate does not name is not checked alone; findings it names together are checked by it.
PREDICTION_SCORE_LABELS = {
    "within": "within 25%",
    "not_within": "not within 25%",
    "bound_held": "bound held",
    "bound_held_noise": "bound held within noise",
    "bound_exceeded": "bound exceeded: the estimate was too low",
    "not_checked_alone": "- (resolved with the others: not checked alone)",
    "checked_together": "- (checked together: see the combined estimate)",
}
# compare's findings: a baseline finding gone from the candidate ("resolved"), gone though the candidate's trace
# still shows its cause ("no_longer_costs"), only in the candidate ("new"), on both sides ("persisting").
FINDING_CHANGE_LABELS = {
    "resolved": "Resolved",
    "no_longer_costs": "No longer costs time (the cause is still there)",
    "new": "New",
    "persisting": "Still present",
}
# Words of report keys that are written otherwise in text ("gpu_busy" is "GPU busy"), longest first.
KEY_WORDS = {
    "tf_data": "tf.data",
    "all_reduce": "all-reduce",
    "allreduce": "all-reduce",
    "py_function": "tf.py_function",
    "gpu": "GPU",
    "gpus": "GPUs",
    "cpu": "CPU",
    "cpus": "CPUs",
    "nccl": "NCCL",
    "hbm": "HBM",
    "xla": "XLA",
    "hlo": "HLO",
    "sm": "SM",
    "sms": "SMs",
    "fp8": "FP8",
    "fp16": "FP16",
    "bf16": "BF16",
    "fp32": "FP32",
    "tf32": "TF32",
    "16bit": "16-bit",
    "32bit": "32-bit",
    "h2d": f"host{ARROW}device",
    "d2h": f"device{ARROW}host",
    "d2d": f"device{ARROW}device",
    "p2p": "peer-to-peer",
    "io": "I/O",
    "os": "OS",
    "jit": "JIT",
    "tc": "Tensor Core",
    "mfu": "MFU",
    "tflops": "TFLOP/s",
    "flops": "FLOPs",
    "cuda": "CUDA",
    "cudnn": "cuDNN",
    "rocm": "ROCm",
}
# Key suffixes that name a unit: (suffix, unit shown after a number, unit shown in a label).
UNIT_SUFFIXES = (
    ("_pct", "%", "%"),
    ("_ms", "ms", "ms"),
    ("_us", MICRO, MICRO),
    ("_ns", "ns", "ns"),
    ("_bytes", "B", "bytes"),
    ("_gbps", "GB/s", "GB/s"),
    ("_mhz", "MHz", "MHz"),
    ("_tflops", "TFLOP/s", "TFLOP/s"),
)
# Words after a unit suffix that make a figure a rate or a statistic rather than a total ("x_ms_per_step").
PER_WORDS = ("per_step", "per_call", "per_kernel", "per_gpu", "per_host", "per_launch", "per_batch")
STATISTIC_WORDS = ("mean", "median", "min", "max", "avg", "p50", "p90", "p95", "p99", "stdev", "first", "last")
# Units a number can be written with, for keeping them on one line (`bind_units`).
BOUND_UNITS = (
    "ns",
    MICRO,
    "ms",
    "s",
    "min",
    "h",
    "%",
    "B",
    "KB",
    "MB",
    "GB",
    "TB",
    "KiB",
    "MiB",
    "GiB",
    "TiB",
    "GB/s",
    "TB/s",
    "MHz",
    "GHz",
    "TFLOP/s",
    "FLOP/B",
    "pts",
    "pt",
    TIMES,
)

_BIND = re.compile(
    r"(\d) (?=(?:" + "|".join(re.escape(u) for u in sorted(BOUND_UNITS, key=len, reverse=True)) + r")(?![\w/]))"
)


def bind_units(text):
    """`text` with a non-breaking space between each number and the unit after it: "160 ms" -> "160\u00a0ms"."""
    return _BIND.sub(lambda match: match.group(1) + NBSP, str(text))


def occupancy_kind(kernels):
    """ "theoretical" when any kernel row records CUPTI's occupancy, else "achieved" when any records the
    profiler's estimate of achieved occupancy, else "theoretical" (the column shows n/a)."""
    if any(k.get("occupancy_pct") is not None for k in kernels):
        return "theoretical"
    return "achieved" if any(k.get("achieved_occupancy_pct") is not None for k in kernels) else "theoretical"


def matrix_unit_labels(devices):
    """(short header, words) of the matrix units of a report's `devices`: AMD's matrix cores when every GPU with
    kernels is AMD's, else NVIDIA's Tensor Cores."""
    vendors = {d.get("vendor") for d in devices if d.get("kernel_count")}
    return MATRIX_UNIT_LABELS["AMD" if vendors == {"AMD"} else "NVIDIA"]


def counted(count, singular, plural=None):
    """A count and its noun, agreeing: "1 copy", "3 copies", "2.5 kernels"; `plural` defaults to singular + "s".
    A whole number is written without decimals, others with one; thousands are grouped."""
    number = f"{count:,.0f}" if round(count, 1) == round(count) else f"{count:,.1f}"
    return f"{number} {singular if number == '1' else (plural or singular + 's')}"


# Items a list read from the trace shows in report text before "and N more".
LISTED = 5


def listed(items, limit=LISTED, last=", "):
    """Items (strings) joined for a sentence, at most `limit` of them and then "and N more": a list read from a
    trace stays a few words however many items the trace holds. `last` joins the final shown item (" and ")."""
    items = [str(item) for item in items]
    shown, rest = items[:limit], len(items) - limit
    if rest > 0:
        return ", ".join(shown) + f" and {rest:,} more"
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + last + shown[-1]


def in_sentence(label):
    """A label as it reads inside a sentence: "Input wait" -> "input wait", "GPU busy" stays."""
    if len(label) > 1 and label[1].isupper():
        return label
    return label[:1].lower() + label[1:]


def device_label(name, trace_format=None):
    """`/device:GPU:2` as its framework names it: `cuda:2` in a Kineto (PyTorch) trace; other formats keep the
    device path, TensorFlow's own name (the tab shortens it to `GPU:2`)."""
    text = str(name or "")
    prefix = DEVICE_NAME_PREFIXES.get(trace_format)
    ordinal = text[len("/device:GPU:") :] if text.startswith("/device:GPU:") else ""
    return prefix + ordinal if prefix and ordinal.isdigit() else text


def exported():
    """What the tab receives, as JSON-ready data."""
    return {
        "micro": MICRO,
        "arrow": ARROW,
        "times": TIMES,
        "speedupCap": SPEEDUP_CAP,
        "nbsp": NBSP,
        "byteUnits": list(BYTE_UNITS),
        "breakdown": BREAKDOWN_LABELS,
        "breakdownShort": BREAKDOWN_SHORT_LABELS,
        "bottleneck": BOTTLENECK_LABELS,
        "idleCause": IDLE_CAUSE_LABELS,
        "busyDefinitions": BUSY_DEFINITIONS,
        "breakdownDefinition": BREAKDOWN_DEFINITION,
        "occupancy": {key: list(value) for key, value in OCCUPANCY_LABELS.items()},
        "transfer": TRANSFER_LABELS,
        "keyWords": KEY_WORDS,
        "unitSuffixes": [list(entry) for entry in UNIT_SUFFIXES],
        "perWords": list(PER_WORDS),
        "statisticWords": list(STATISTIC_WORDS),
        "boundUnits": list(BOUND_UNITS),
        "kernelPlumbing": list(KERNEL_PLUMBING),
        "notInTrace": NOT_IN_TRACE,
        "launchPairing": LAUNCH_PAIRING_WORDS,
        "batchScope": BATCH_SCOPE_LABELS,
        "workSource": WORK_SOURCE_LABELS,
        "deviceNamePrefixes": DEVICE_NAME_PREFIXES,
        "predictionScore": PREDICTION_SCORE_LABELS,
        "findingChange": FINDING_CHANGE_LABELS,
        "noMatmulPrecision": NO_MATMUL_PRECISION,
        "matrixUnits": MATRIX_UNIT_LABELS,
        "collectiveHeaders": list(COLLECTIVE_HEADERS),
        "collectiveSources": COLLECTIVE_SOURCE_LABELS,
        "collectiveSizeSources": COLLECTIVE_SIZE_SOURCES,
        "collectiveBandwidthGaps": COLLECTIVE_BANDWIDTH_GAPS,
        "ranks": vocabulary_ranks.exported(),
    }


JS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static", "vocabulary.js")


def render_js():
    """The text of static/vocabulary.js."""
    data = json.dumps(exported(), indent=2, ensure_ascii=True)
    return (
        "// Generated by `python -m tb_gpu_advisor.vocabulary` from tb_gpu_advisor/vocabulary.py: edit that file.\n"
        "/** The product's words and units, shared with the CLI and the HTML report. */\n"
        f"export const VOCABULARY = Object.freeze({data});\n"
    )


if __name__ == "__main__":
    with open(JS_PATH, "w", encoding="ascii", newline="\n") as handle:
        handle.write(render_js())
    sys.stdout.write(f"wrote {JS_PATH}\n")
