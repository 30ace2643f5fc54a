"""tb-gpu-advisor: tells people training on GPUs why their GPUs idle and what to change.

`tb_gpu_advisor.analyze(path, run=None, host=None)` and `tb_gpu_advisor.compare(baseline, candidate)` are the
Python API (tb_gpu_advisor/api.py); they load on first use, so importing the package stays light.
"""

__version__ = "0.1.0"
__all__ = ["analyze", "compare", "__version__"]


def __getattr__(name):
    if name in ("analyze", "compare"):
        from tb_gpu_advisor import api

        return getattr(api, name)
    raise AttributeError(f"module 'tb_gpu_advisor' has no attribute {name!r}")
