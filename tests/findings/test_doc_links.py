"""Documentation links match the run: a PyTorch or JAX run gets no other framework's pages, an AMD run no NVIDIA
pages (their ROCm counterparts instead), an NVIDIA run no ROCm pages."""

import pytest

from tb_gpu_advisor.api import analyze
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.doc_links import matched_docs
from tb_gpu_advisor.report.host_report import run_vendor
from tests.readers.kineto.real import real_kineto

OTHER_FRAMEWORKS = {
    "pytorch": ("tensorflow.org", "keras.io", "docs.jax.dev"),
    "jax": ("tensorflow.org", "keras.io", "pytorch.org"),
    "tensorflow": ("pytorch.org", "docs.jax.dev"),
}
OTHER_VENDORS = {"AMD": ("nvidia.com", "github.com/NVIDIA"), "NVIDIA": ("amd.com", "github.com/ROCm")}


def test_another_frameworks_page_becomes_this_frameworks_page_on_the_same_subject():
    urls = [L.TF_PROFILER, L.TF_GPU_PERFORMANCE, L.TF_FUNCTION, L.PYTHON_GC]
    assert matched_docs(urls, "pytorch", None) == [L.TORCH_PROFILER, L.TORCH_PERFORMANCE, L.PYTHON_GC]
    assert matched_docs(urls, "jax", None) == [L.JAX_PROFILING, L.JAX_GPU_TIPS, L.PYTHON_GC]
    assert matched_docs(urls, "tensorflow", None) == urls
    assert matched_docs(urls, "unknown", None) == urls  # TensorFlow's and JAX's fix together: both kept


def test_amd_gets_rocm_pages_and_nvidia_no_rocm_pages():
    urls = [L.CUDA_GRAPHS, L.CUDA_OCCUPANCY, L.NVIDIA_DL_PERFORMANCE, L.CUDA_GPUS, L.TORCH_CUDA_GRAPHS]
    assert matched_docs(urls, "pytorch", "AMD") == [L.ROCM_HIP_GRAPHS, L.ROCM_HIP_PERFORMANCE, L.TORCH_CUDA_GRAPHS]
    assert matched_docs([L.ROCM_SMI, L.NVIDIA_SMI], None, "NVIDIA") == [L.NVIDIA_SMI]
    assert matched_docs([L.ROCM_SMI, L.NVIDIA_SMI], None, None) == [L.ROCM_SMI, L.NVIDIA_SMI]


def test_the_vendor_is_the_one_of_every_gpu_that_ran_kernels():
    assert run_vendor([{"vendor": "Nvidia", "kernel_count": 3}, {"vendor": "AMD", "kernel_count": 0}]) == "NVIDIA"
    assert run_vendor([{"vendor": "AMD", "kernel_count": 3}, {"vendor": "NVIDIA", "kernel_count": 2}]) is None
    assert run_vendor([]) is None


@pytest.mark.parametrize("name", ["mi250_minitoy_train", "v100_2rank_test", "a100_alexnet_sync"])
def test_real_pytorch_runs_cite_only_their_frameworks_and_vendors_pages(name):
    report = analyze(str(real_kineto(name)))
    host = report["hosts"][0]
    framework, vendor = host["summary"]["framework"], run_vendor(host["devices"])
    assert framework == "pytorch" and vendor in ("AMD", "NVIDIA")
    urls = [url for finding in host["findings"] for url in finding["docs"]]
    assert urls, "the test needs findings with links"
    assert not [url for url in urls if any(site in url for site in OTHER_FRAMEWORKS[framework] + OTHER_VENDORS[vendor])]
    if vendor == "AMD":
        assert L.ROCM_HIP_GRAPHS in urls  # the launch finding's CUDA-graphs page, as ROCm's HIP graphs page
