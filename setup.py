"""Packaging of tb-gpu-advisor: the CLI, and (from the plugin issue on) the TensorBoard tab."""

from setuptools import find_packages, setup

setup(
    name="tb-gpu-advisor",
    version="0.1.0",
    description="Tells people training on NVIDIA or AMD GPUs why their GPUs idle and what to change, from their "
    "TensorFlow or JAX profile.",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["tb_gpu_advisor", "tb_gpu_advisor.*"]),
    include_package_data=True,
    package_data={"tb_gpu_advisor": ["static/*", "static/**/*", "schema/*.json"]},
    install_requires=[
        "protobuf>=4.21",
        "numpy>=1.24",
        "tensorboard>=2.15",
        "tensorboard-plugin-profile>=2.15",
        "werkzeug>=2.2",
        # The Kineto reader decodes events in batches with it; without it, the standard library reads them.
        "msgspec>=0.18",
    ],
    extras_require={
        # Real TensorFlow captures in tests (Keras 3 step markers need TensorFlow 2.16 or newer).
        "tf": ["tensorflow-cpu>=2.16", "tensorboard>=2.15"],
        # playwright drives the system chromium in the browser test (never `playwright install`).
        # holistictraceanalysis: HTA, the reference our Kineto figures are checked against.
        # jsonschema validates every output against tb_gpu_advisor/schema; mcp drives `tb-gpu-advisor mcp`;
        # ruff lints the repository (ruff.toml, tests/test_lint.py); mypy checks the core packages (mypy.ini,
        # tests/test_mypy.py); pytest-xdist runs plain `pytest` on every core.
        "test": [
            "pytest>=7",
            "pytest-xdist>=3",
            "playwright>=1.40",
            "pillow>=9",
            "moto[server]>=5",
            "fsspec>=2023.6",
            "s3fs>=2023.6",
            "holistictraceanalysis>=0.5",
            "jsonschema>=4.18",
            "mcp>=2",
            "ruff>=0.5",
            "mypy>=1.10",
        ],
        # Real PyTorch CPU captures in tests; the exact pin takes the CPU wheel, not a several-GB CUDA build.
        "torch": ["torch==2.13.0"],
        "remote": ["fsspec>=2023.6", "s3fs>=2023.6"],  # s3:// and other fsspec logdirs
        # `tb-gpu-advisor mcp`: the Model Context Protocol server for AI assistants (tested with mcp 2.3.0).
        "mcp": ["mcp>=2"],
        "gcs": ["fsspec>=2023.6", "gcsfs>=2023.6"],  # gs:// logdirs
        "dask": ["dask[distributed]>=2023.1"],  # --dask: hosts analyzed on a Dask cluster
        # Real JAX captures in tests (capture.jax_gpu on the CPU backend; capture.cpu_pairs); jaxlib comes with it.
        "jax": ["jax>=0.6"],
    },
    entry_points={
        "console_scripts": ["tb-gpu-advisor = tb_gpu_advisor.cli:main_exit"],
        "tensorboard_plugins": ["gpu_advisor = tb_gpu_advisor.plugin.loader:GpuAdvisorLoader"],
    },
)
