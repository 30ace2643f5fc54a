"""The Configuration section of a host: how the job ran, as the trace shows it (text, markdown and HTML)."""

from __future__ import annotations

from tb_gpu_advisor.report import units
from tb_gpu_advisor.vocabulary import BATCH_SCOPE_LABELS, NBSP, NO_MATMUL_PRECISION, NOT_IN_TRACE, counted, listed

VERSION_LABELS = {
    "tensorflow_version": "TensorFlow",
    "jax_version": "JAX",
    "jaxlib_version": "jaxlib",
    "torch_version": "PyTorch",
    "cuda_runtime_version": "CUDA runtime",
    "cuda_version": "CUDA",
    "cuda_driver_version": "CUDA driver",
    "cudnn_version": "cuDNN",
    "nccl_version": "NCCL",
    "rocm_version": "ROCm",
}


# Thread pools a configuration row names before "and N more" (a process has a handful).
POOLS_LISTED = 10


def configuration_rows(config: dict) -> tuple[tuple[str, str], ...]:
    """(setting, value) rows of a report's `configuration`; every row says what the trace does not record."""
    versions = config["versions"]
    gpu = config["gpu"]
    rows = [
        ("framework", config["framework"]),
        (
            "versions",
            ", ".join(
                f"{VERSION_LABELS.get(key, key.removesuffix('_version'))} {value}" for key, value in versions.items()
            )
            or NOT_IN_TRACE,
        ),
    ]
    if gpu["count"]:
        model = gpu["model"] or gpu_without_model(gpu.get("arch"))
        cc = f", cc {gpu['compute_capability']}" if gpu["compute_capability"] else ""
        memory = f", {units.size_bytes(gpu['memory_bytes'])}" if gpu["memory_bytes"] else ""
        active = f" ({gpu['active']} active)" if gpu["active"] != gpu["count"] else ""
        rows.append(("GPUs", f"{gpu['count']} x {model}{cc}{memory}{active}"))
    else:
        rows.append(("GPUs", "none in the profile"))
    graphs = config.get("graph_replay_pct")
    replayed = f"; CUDA graphs replay {units.percent(graphs)} of launched work" if graphs and graphs >= 1 else ""
    if config.get("tpu_count"):
        rows.append(("TPUs", f"{config['tpu_count']} (XProf's TPU tools in the Profile tab analyze them)"))
    if config["framework"] == "pytorch":
        rows.append(
            (
                "compiler",
                {True: "torch.compile", False: "off (eager kernels)", None: "unknown (no GPU kernel)"}[config["xla"]]
                + replayed,
            )
        )
    else:
        on = "on" if gpu["active"] else "on (TPU)" if config.get("tpu_count") else "on (CPU)"
        rows.append(
            (
                "XLA",
                {True: on, False: "off", None: "unknown (no GPU kernel)"}[config["xla"]]
                + replayed.replace("CUDA graphs", "command buffers (CUDA graphs)"),
            )
        )
    if config["precision"]:
        shares = ", ".join(f"{dtype} {units.percent(pct)}" for dtype, pct in config["matmul_dtype_pct"].items())
        by_default = config.get("tf32_by_default_pct") or 0.0
        if by_default:
            shares += (
                f"; tf32 for {units.percent(by_default)} by XLA's DEFAULT precision on f32 dots, whose kernels do "
                "not name it: TF32 unless NVIDIA_TF32_OVERRIDE=0"
            )
        rows.append(("precision", f"{config['precision']} (matmul/conv time: {shares})"))
    else:
        rows.append(("precision", NO_MATMUL_PRECISION))
    rows.append(("distribution", config["distribution"] or "none seen"))
    rows.append(("global batch", batch_text(config)))
    # A pool's count stays on the line of its noun ("python 1 thread"): a non-breaking space the text turns back.
    pools = listed(
        [f"{kind} {counted(count, 'thread').replace(' ', NBSP)}" for kind, count in config["thread_pools"].items()],
        limit=POOLS_LISTED,
    )
    if config["gpu_thread_mode"]:
        pools = f"TF_GPU_THREAD_MODE={config['gpu_thread_mode']}; {pools}"
    rows.append(("thread pools", pools or NOT_IN_TRACE))
    seen = config.get("host_cores_seen")
    rows.append(("host cores", config["host_cores"] or (seen and seen["text"]) or NOT_IN_TRACE))
    if config["tf_data_options"]:
        rows.append(("tf.data", ", ".join(config["tf_data_options"])))
    return tuple((label, str(value)) for label, value in rows)


def gpu_without_model(arch: str) -> str:
    """A GPU whose trace names no model: its vendor and architecture where the trace gives them."""
    if arch and arch.startswith("gfx"):
        return f"AMD {arch} (model not in the trace)"
    if arch and arch.startswith("sm_"):
        return f"NVIDIA {arch} (model not in the trace)"
    return "GPU (model not in the trace)"


def batch_text(config: dict) -> str:
    """The global batch row: the number and where it comes from; the per-device batch, or why it is unknown."""
    examples = config.get("examples_per_step") or {}
    if config["global_batch"]:
        return f"{config['global_batch']} ({examples.get('source') or 'examples per step'})"
    if examples.get("value"):
        scope = BATCH_SCOPE_LABELS.get(examples["scope"], examples["scope"])
        return (
            f"{NOT_IN_TRACE}; {examples['value']} examples per step {scope} ({examples['source']}; "
            f"{examples['reason']})"
        )
    return f"{NOT_IN_TRACE} ({examples['reason']})" if examples.get("reason") else NOT_IN_TRACE
