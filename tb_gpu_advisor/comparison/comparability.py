"""Whether two profiles can be compared step for step: same hardware, shared kernels, the same work per step."""

import statistics

from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.vocabulary import ARROW

# Under this share of kernel time matched by name (on either side), kernel-by-kernel changes say little.
MIN_MATCHED_KERNEL_SHARE = 0.30
# Work per step differs when a per-step measure moved by more than this factor.
WORK_RATIO_TOLERANCE = 1.10


def _per_name(host):
    """{name: [total_us, occurrences]} of the kernel table, rows of one name summed."""
    totals = {}
    for row in host.get("kernels") or []:
        entry = totals.setdefault(row["name"], [0.0, 0])
        entry[0] += row.get("total_us") or 0.0
        entry[1] += row.get("occurrences") or 0
    return totals


def _matched_share(mine, other):
    total = sum(time for time, _ in mine.values())
    if not total:
        return None
    return sum(mine[name][0] for name in mine if name in other) / total


def kernel_share(base, cand):
    """`{baseline, candidate}`: the share (0-1) of each side's kernel time in kernels the other side also has;
    None on a side without kernel time."""
    base_kernels, cand_kernels = _per_name(base), _per_name(cand)
    share = (_matched_share(base_kernels, cand_kernels), _matched_share(cand_kernels, base_kernels))
    return {
        "baseline": None if share[0] is None else round(share[0], 4),
        "candidate": None if share[1] is None else round(share[1], 4),
    }


def _steps(host):
    return host["summary"]["step_time_ms"]["count"]


def _h2d_per_step(host):
    h2d = (host.get("transfers") or {}).get("h2d") or {}
    steps = _steps(host)
    return h2d["bytes"] / steps if steps and h2d.get("bytes") else None


def _kernel_steps(host):
    """How many steps' worth of kernels the kernel table counts: its kernels (launch.kernel_count, the table's
    occurrences summed) over the kernels launched per timed step (launch.per_step). The table counts every kernel
    of the capture, and a capture holds kernels outside its timed steps (before the first step marker, after the
    last, a step cut short): a name's occurrences over the timed step count read the same program as more work
    per step when one capture runs longer past its steps (8 timed steps of each, 8.5 and 10 steps of kernels:
    1.21x). None without kernels in timed steps."""
    launch = host.get("launch") or {}
    per_step, total = launch.get("per_step"), launch.get("kernel_count")
    return total / per_step if per_step and total else None


def _launch_ratio(base, cand):
    """The median, over compute (non-collective) kernels matched by name, of candidate launches per step over
    baseline launches per step, each side's occurrences over its steps' worth of kernels (`_kernel_steps`); None
    unless both sides have kernels in timed steps and share at least MIN_MATCHED_KERNEL_SHARE of their compute
    kernel time (else the kernels are not the same program)."""
    base_steps, cand_steps = _kernel_steps(base), _kernel_steps(cand)
    if not base_steps or not cand_steps:
        return None
    base_kernels = {n: v for n, v in _per_name(base).items() if not is_nccl(n)}
    cand_kernels = {n: v for n, v in _per_name(cand).items() if not is_nccl(n)}
    shares = (_matched_share(base_kernels, cand_kernels), _matched_share(cand_kernels, base_kernels))
    if None in shares or min(shares) < MIN_MATCHED_KERNEL_SHARE:
        return None
    ratios = [
        (cand_kernels[n][1] / cand_steps) / (base_kernels[n][1] / base_steps)
        for n in base_kernels
        if n in cand_kernels and base_kernels[n][1]
    ]
    return statistics.median(ratios) if ratios else None


def _differs(ratio):
    return ratio is not None and not 1 / WORK_RATIO_TOLERANCE <= ratio <= WORK_RATIO_TOLERANCE


def _examples(host):
    """The report's examples per step (configuration.examples_per_step) when the trace records them, else None."""
    examples = (host.get("configuration") or {}).get("examples_per_step") or {}
    return examples if examples.get("value") else None


def examples_per_step(base, cand):
    """`{baseline, candidate, scope}` examples per step when both sides record them on the same footing (both
    global, or both per device on as many GPUs), else None."""
    before, after = _examples(base), _examples(cand)
    if not before or not after or before["scope"] != after["scope"]:
        return None
    if before["scope"] != "global" and len(_gpus(base)) != len(_gpus(cand)):
        return None
    return {"baseline": before["value"], "candidate": after["value"], "scope": before["scope"]}


def work_per_step(base, cand):
    """How much work a candidate step does relative to a baseline step.

    `{ratio, source, examples_per_step, h2d_bytes_ratio, launch_ratio}`: `examples_per_step` = both sides'
    examples per step from the input tensors (`examples_per_step()`), the best measure of the work: when both
    record it, `ratio` is candidate / baseline examples where they differ (`source` "examples_per_step") and
    None where they are equal, whatever the launches say. Else `launch_ratio` = the median change of launches per step
    of the compute kernels both sides run (more micro-batches, or a longer loop), `h2d_bytes_ratio` =
    host-to-device bytes per step (candidate / baseline), shown but never used as the work: copy bytes also
    change with the input dtype, with copies removed around a misplaced op, or with a batch sent ahead.
    `ratio` is `launch_ratio` when it moved by more than WORK_RATIO_TOLERANCE (`source`
    "kernel_launches_per_step"), else None: the same work, or no measure of it.
    """
    base_h2d, cand_h2d = _h2d_per_step(base), _h2d_per_step(cand)
    h2d_ratio = cand_h2d / base_h2d if base_h2d and cand_h2d else None
    launch_ratio = _launch_ratio(base, cand)
    examples = examples_per_step(base, cand)
    ratio, source = None, None
    if examples is not None:
        if examples["candidate"] != examples["baseline"]:
            ratio, source = examples["candidate"] / examples["baseline"], "examples_per_step"
    elif _differs(launch_ratio):
        ratio, source = launch_ratio, "kernel_launches_per_step"
    return {
        "ratio": None if ratio is None else round(ratio, 4),
        "source": source,
        "examples_per_step": examples,
        "h2d_bytes_ratio": None if h2d_ratio is None else round(h2d_ratio, 4),
        "launch_ratio": None if launch_ratio is None else round(launch_ratio, 4),
    }


def copy_bytes_moved(base, cand, work):
    """Whether host-to-device bytes per step moved beyond what one batch sent ahead into (or out of) the
    capture window explains: WORK_RATIO_TOLERANCE plus one step's share of the shorter capture."""
    ratio = work["h2d_bytes_ratio"]
    steps = min(_steps(base) or 0, _steps(cand) or 0)
    if ratio is None or not steps:
        return False
    tolerance = WORK_RATIO_TOLERANCE + 1 / steps
    return not 1 / tolerance <= ratio <= tolerance


def _gpus(host):
    """Sorted model names of the GPUs with activity (all GPUs when none has any)."""
    devices = host.get("devices") or []
    active = [d for d in devices if d.get("busy_pct") is not None] or devices
    return sorted(d.get("model_name") or "unknown GPU" for d in active)


def _gpu_text(models):
    counts = {}
    for model in models:
        counts[model] = counts.get(model, 0) + 1
    return " + ".join(f"{count}x {model}" for model, count in counts.items())


def hardware(base, cand):
    """`{baseline, candidate, differs}`: each side's active GPUs as text ("4x NVIDIA A100-PCIE-40GB"), null
    without GPUs; `differs` when the GPU models or their count differ."""
    base_gpus, cand_gpus = _gpus(base), _gpus(cand)
    return {
        "baseline": _gpu_text(base_gpus) or None,
        "candidate": _gpu_text(cand_gpus) or None,
        "differs": base_gpus != cand_gpus,
    }


def warnings_of(hardware_info, share, work, copies_unexplained=False):
    """Sentences saying what makes the two profiles not comparable step for step; `copies_unexplained`: the
    copy bytes per step moved (`copy_bytes_moved`) and no resolved transfer or placement finding explains it."""
    warnings = []
    if hardware_info["differs"]:
        warnings.append(
            f"different hardware ({hardware_info['baseline'] or 'no GPU'} vs "
            f"{hardware_info['candidate'] or 'no GPU'}): the change mixes the hardware with the code"
        )
    if None not in share.values() and min(share.values()) < MIN_MATCHED_KERNEL_SHARE:
        warnings.append(
            f"the profiles share few kernels ({100 * share['baseline']:.0f}% of the baseline's "
            f"kernel time and {100 * share['candidate']:.0f}% of the candidate's matched by name): "
            "a different program, so kernel-by-kernel changes say little"
        )
    if work["ratio"] is not None and work["source"] == "examples_per_step":
        examples = work["examples_per_step"]
        scope = "" if examples["scope"] == "global" else " per device"
        warnings.append(
            f"different work per step ({examples['baseline']} {ARROW} {examples['candidate']} examples "
            f"per step{scope}, from the input tensors), so step times are compared per example"
        )
    elif work["ratio"] is not None:
        warnings.append(
            f"different work per step ({work['ratio']:.2f}x the kernel launches per step in the "
            "candidate: a different number of micro-batches or a longer loop), so step times are "
            "compared per example"
        )
    elif copies_unexplained:
        warnings.append(
            f"the candidate copies {work['h2d_bytes_ratio']:.2f}x the host-to-device bytes per step: "
            "if the batch size changed, compare the time per example yourself (copy bytes do not "
            "measure work, so step times are compared per step)"
        )
    return warnings
