"""Writes the benchmark traces: 8-GPU data-parallel training profiles of given sizes (not committed).

python benchmarks/generate.py                  # the default set into benchmarks/data/
python benchmarks/generate.py --sizes 75 300   # only these (MB, approximately)
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tb_gpu_advisor.testing.large import write_training_trace  # noqa: E402

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
GPUS = 8
KERNELS_PER_STEP = 1000  # per GPU
# Steps for each nominal size in MB (about 0.69 MB per step of 8 x 1000 kernels and their launches).
STEPS = {19: 26, 38: 52, 75: 105, 150: 210, 300: 420}
DEFAULT_SIZES = tuple(STEPS)


def trace_path(size_mb, data_dir=DATA_DIR):
    return os.path.join(data_dir, f"train_8gpu_{size_mb}mb.xplane.pb")


def ensure_trace(size_mb, data_dir=DATA_DIR, out=sys.stdout):
    """The path of the trace of nominal size `size_mb`, written first if it is not there yet."""
    path = trace_path(size_mb, data_dir)
    if not os.path.exists(path):
        started = time.perf_counter()
        size = write_training_trace(path, gpus=GPUS, steps=STEPS[size_mb], kernels_per_step=KERNELS_PER_STEP)
        print(
            f"wrote {path}: {size.bytes / 1e6:.1f} MB, {size.kernels:,} kernels, {size.host_events:,} host "
            f"events in {time.perf_counter() - started:.1f} s",
            file=out,
            flush=True,
        )
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES, choices=sorted(STEPS))
    parser.add_argument("--data-dir", default=DATA_DIR)
    args = parser.parse_args()
    for size_mb in args.sizes:
        print(ensure_trace(size_mb, args.data_dir))


if __name__ == "__main__":
    main()
