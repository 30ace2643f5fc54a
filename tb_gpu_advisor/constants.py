"""Names, suffixes and limits shared across layers."""

SCHEMA_VERSION = 1
PLUGIN_NAME = "gpu_advisor"
XPLANE_SUFFIX = ".xplane.pb"
PROFILE_SUBDIR = ("plugins", "profile")

# More planes than any profiled machine has (XProf writes one per GPU or TPU and one per host plane kind): a
# file holding more is refused as it is read.
MAX_PLANES = 4096

# A device model name is cut to this many characters when read (real ones are under 64): the name tables match
# it with patterns whose cost grows with its length.
MAX_DEVICE_NAME_CHARS = 256

# Files above this size are refused with a clear message unless the limit is raised (--max-file-mb).
DEFAULT_MAX_FILE_BYTES = 4 * 1024**3
# Analyses the tab keeps in memory (--gpu_advisor_cache_entries), and the bytes they may hold, counted as the
# length of their JSON (--gpu_advisor_cache_mb, `serve --cache-mb`).
DEFAULT_CACHE_ENTRIES = 32
DEFAULT_CACHE_BYTES = 512 * 2**20
# Each file the server analyzes runs in a worker process under these budgets (--gpu_advisor_time_budget_s,
# --gpu_advisor_memory_budget_mb): a file over one is reported as such and its process replaced.
DEFAULT_TIME_BUDGET_S = 300.0
DEFAULT_MEMORY_BUDGET_BYTES = 8 * 2**30

# XProf's derived-line ids: base 0xdeadbeef as int32, then a block of 390 ids.
DERIVED_LINE_ID_BASE = -559038737
DERIVED_LINE_ID_SPAN = 389
STEPS_LINE_ID = DERIVED_LINE_ID_BASE

# A kernel shorter than this is "tiny": its launch costs about as much as it runs.
TINY_KERNEL_US = 10.0
