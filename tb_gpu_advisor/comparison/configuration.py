"""What changed in the configuration between two HostReports ("XLA off -> on", "precision fp32 -> bf16")."""

from tb_gpu_advisor.report.configuration_section import VERSION_LABELS
from tb_gpu_advisor.vocabulary import ARROW


def _on_off(value):
    return {True: "on", False: "off"}.get(value)


def _gpus(config):
    gpu = config["gpu"]
    return f"{gpu['active'] or gpu['count']} x {gpu['model'] or 'GPU'}" if gpu["count"] else "none"


def _pools(config):
    pools = dict(config["thread_pools"])
    if config.get("gpu_thread_mode"):
        pools["TF_GPU_THREAD_MODE"] = config["gpu_thread_mode"]
    return pools


def _per_device_batch(config):
    examples = config.get("examples_per_step") or {}
    return examples.get("value") if examples.get("scope") == "per_device" else None


def configuration_changes(base, cand):
    """[{setting, baseline, candidate, text}] of the settings that differ between two HostReports, in reading
    order; a setting one side's trace does not record is not compared."""
    before, after = base.get("configuration"), cand.get("configuration")
    if not before or not after:
        return []
    changes = []

    def note(setting, old, new, label=None):
        if old is not None and new is not None and old != new:
            changes.append(
                {
                    "setting": setting,
                    "baseline": old,
                    "candidate": new,
                    "text": f"{label or setting} {old} {ARROW} {new}",
                }
            )

    note("framework", before["framework"], after["framework"])
    note("xla", _on_off(before["xla"]), _on_off(after["xla"]), "XLA")
    note("precision", before["precision"], after["precision"])
    note("gpus", _gpus(before), _gpus(after), "GPUs")
    note("distribution", before["distribution"] or "none", after["distribution"] or "none")
    note("global_batch", before["global_batch"], after["global_batch"], "global batch")
    if before["global_batch"] is None or after["global_batch"] is None:
        note("batch_per_device", _per_device_batch(before), _per_device_batch(after), "batch per device")
    for key in sorted(set(before["versions"]) & set(after["versions"])):
        note(key, before["versions"][key], after["versions"][key], VERSION_LABELS.get(key, key))
    old_data, new_data = set(before["tf_data_options"]), set(after["tf_data_options"])
    if old_data != new_data and (old_data or new_data):
        text = ", ".join(
            [f"+{option}" for option in sorted(new_data - old_data)]
            + [f"-{option}" for option in sorted(old_data - new_data)]
        )
        changes.append(
            {
                "setting": "tf_data_options",
                "baseline": sorted(old_data),
                "candidate": sorted(new_data),
                "text": f"tf.data {text}",
            }
        )
    old_pools, new_pools = _pools(before), _pools(after)
    if old_pools and new_pools and old_pools != new_pools:
        moved = [
            f"{kind} {old_pools.get(kind, 0)} {ARROW} {new_pools.get(kind, 0)}"
            for kind in sorted(set(old_pools) | set(new_pools))
            if old_pools.get(kind) != new_pools.get(kind)
        ]
        changes.append(
            {
                "setting": "thread_pools",
                "baseline": old_pools,
                "candidate": new_pools,
                "text": "threads " + ", ".join(moved),
            }
        )
    return changes
