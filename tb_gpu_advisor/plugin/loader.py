"""The `tensorboard_plugins` entry point: defines the --gpu_advisor_* flags and builds the plugin lazily."""

import logging
import math

from tensorboard.plugins import base_plugin

from tb_gpu_advisor.constants import (
    DEFAULT_CACHE_BYTES,
    DEFAULT_CACHE_ENTRIES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MEMORY_BUDGET_BYTES,
    DEFAULT_TIME_BUDGET_S,
)

logger = logging.getLogger(__name__)


class GpuAdvisorLoader(base_plugin.TBLoader):
    """Loads the GPU Advisor plugin; a failure to import it is logged and the tab left out, never fatal."""

    def define_flags(self, parser):
        group = parser.add_argument_group("GPU Advisor plugin")
        group.add_argument(
            "--gpu_advisor_max_file_mb",
            metavar="MB",
            type=float,
            default=DEFAULT_MAX_FILE_BYTES / 2**20,
            help="refuse profile files larger than this many MiB (default: %(default).0f)",
        )
        group.add_argument(
            "--gpu_advisor_cache_entries",
            metavar="N",
            type=int,
            default=DEFAULT_CACHE_ENTRIES,
            help="analyses kept in memory (default: %(default)s)",
        )
        group.add_argument(
            "--gpu_advisor_cache_mb",
            metavar="MB",
            type=float,
            default=DEFAULT_CACHE_BYTES / 2**20,
            help="MiB the analyses kept in memory may hold, counted as the length of their JSON; the "
            "last one used always stays (default: %(default).0f)",
        )
        group.add_argument(
            "--gpu_advisor_time_budget_s",
            metavar="S",
            type=float,
            default=DEFAULT_TIME_BUDGET_S,
            help="seconds one file's analysis may take in its worker process before the process "
            "is stopped and the file reported as over the time budget (default: %(default).0f)",
        )
        group.add_argument(
            "--gpu_advisor_memory_budget_mb",
            metavar="MB",
            type=float,
            default=DEFAULT_MEMORY_BUDGET_BYTES / 2**20,
            help="MiB of memory one file's analysis may take in its worker process (its address "
            "space beyond what the idle worker uses, where the OS enforces it: Linux) before "
            "the file is reported as over the memory budget (default: %(default).0f)",
        )
        group.add_argument(
            "--gpu_advisor_logdir",
            metavar="URL",
            default="",
            help="read profiles from this logdir instead of --logdir: any fsspec URL (s3://, gs://, "
            "az://...) or path, for logdirs TensorBoard's own file systems cannot read",
        )
        group.add_argument(
            "--gpu_advisor_follow_symlinks",
            action="store_true",
            help="analyze host files and run directories that are symbolic links to places "
            "outside the logdir (default: refused, with a message naming the file)",
        )

    def fix_flags(self, flags):
        for name in ("max_file_mb", "cache_mb", "time_budget_s", "memory_budget_mb"):
            value = getattr(flags, f"gpu_advisor_{name}", 1)
            if not (math.isfinite(value) and value > 0):
                raise base_plugin.FlagsError(f"--gpu_advisor_{name} must be a finite number above 0")
        if getattr(flags, "gpu_advisor_cache_entries", 1) < 1:
            raise base_plugin.FlagsError("--gpu_advisor_cache_entries must be at least 1")

    def load(self, context):
        try:
            from tb_gpu_advisor.plugin.plugin import GpuAdvisorPlugin
        except ImportError as err:  # e.g. numpy or protobuf missing or too old
            logger.warning("GPU Advisor tab disabled: cannot import its dependencies: %s", err)
            return None
        return GpuAdvisorPlugin(context)
