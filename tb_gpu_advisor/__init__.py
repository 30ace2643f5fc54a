"""tb-gpu-advisor: tells people training on GPUs why their GPUs idle and what to change."""

__version__ = "0.1.0"
