"""A finding's documentation links matched to the run: another framework's page becomes the run framework's page
on the same subject (or is left out where none is listed), on AMD GPUs the ROCm page replaces an NVIDIA one (or
none where ROCm has no counterpart), and NVIDIA runs get no ROCm pages."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L

# Where a page belongs, by the start of its address (after the scheme): a framework or a GPU vendor.
_FRAMEWORK_SITES = {
    "tensorflow": ("www.tensorflow.org/", "keras.io/"),
    "jax": ("docs.jax.dev/", "orbax.readthedocs.io/", "google-grain.readthedocs.io/", "github.com/google/array_record"),
    "pytorch": ("pytorch.org/", "github.com/webdataset/"),
}
_VENDOR_SITES = {
    "NVIDIA": ("docs.nvidia.com/", "developer.nvidia.com/", "github.com/NVIDIA/"),
    "AMD": ("rocm.docs.amd.com/", "github.com/ROCm/"),
}
# NVIDIA page -> its ROCm counterpart for AMD GPUs; an NVIDIA page not listed here is left out on AMD.
_ROCM_COUNTERPART = {
    L.CUDA_BEST_PRACTICES: L.ROCM_HIP_PERFORMANCE,
    L.CUDA_PINNED: L.ROCM_HIP_PERFORMANCE,
    L.CUDA_OCCUPANCY: L.ROCM_HIP_PERFORMANCE,
    L.NVIDIA_DL_PERFORMANCE: L.ROCM_HIP_PERFORMANCE,
    L.NVIDIA_MATMUL_PERFORMANCE: L.ROCM_HIP_PERFORMANCE,
    L.CUDA_GRAPHS: L.ROCM_HIP_GRAPHS,
    L.NVIDIA_SMI: L.ROCM_SMI,
    L.NCCL_GUIDE: L.RCCL_GUIDE,
    L.NCCL_ENV: L.RCCL_ENV,
    L.NCCL_TESTS_PERFORMANCE: L.RCCL_TESTS,
}

# Another framework's page -> the page on the same subject for each framework that has one.
_FRAMEWORK_COUNTERPART = {
    L.TF_PROFILER: {"jax": L.JAX_PROFILING, "pytorch": L.TORCH_PROFILER},
    L.TF_GPU_PERFORMANCE: {"jax": L.JAX_GPU_TIPS, "pytorch": L.TORCH_PERFORMANCE},
    L.TF_DATA_PERFORMANCE: {"jax": L.GRAIN, "pytorch": L.TORCH_DATA},
    L.TF_MIXED_PRECISION: {"pytorch": L.TORCH_AMP},
    L.TF_XLA: {"jax": L.JAX_JIT, "pytorch": L.TORCH_COMPILE},
    L.TORCH_CUDA_GRAPHS: {"jax": L.JAX_GPU_TIPS},
}


def _site(url, sites):
    bare = url.split("://", 1)[-1]
    return next((owner for owner, prefixes in sites.items() if bare.startswith(prefixes)), None)


def matched_docs(urls, framework, vendor):
    """`urls` in order, without repeats, kept only where they fit `framework` ("tensorflow", "jax", "pytorch";
    anything else keeps every framework's pages) and `vendor` ("NVIDIA", "AMD"; None keeps every vendor's)."""
    out = []
    for url in urls:
        if vendor == "AMD" and _site(url, _VENDOR_SITES) == "NVIDIA":
            url = _ROCM_COUNTERPART.get(url)
            if url is None:
                continue
        owner = _site(url, _VENDOR_SITES)
        if vendor in _VENDOR_SITES and owner is not None and owner != vendor:
            continue
        page_framework = _site(url, _FRAMEWORK_SITES)
        if framework in _FRAMEWORK_SITES and page_framework is not None and page_framework != framework:
            url = _FRAMEWORK_COUNTERPART.get(url, {}).get(framework)
            if url is None:
                continue
        if url not in out:
            out.append(url)
    return out
