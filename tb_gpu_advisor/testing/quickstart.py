"""Writes a small input-bound run on an A100: a quick fixture for tests of the tab and the service."""

import sys

from tb_gpu_advisor.testing.builder import TraceBuilder


def write_quickstart(logdir):
    """An input-bound training loop: each 10 ms step waits 6 ms for tf.data before its kernels run."""
    builder = TraceBuilder(hostname="quickstart")
    python = builder.thread("python")
    feeder = builder.thread("tf_data_iterator_get_next/1")
    gpu = builder.gpu(0)
    for step in range(8):
        start = 1000 + step * 10_000
        python.step(step, start, 10_000)
        feeder.input_wait(start + 50, 6_000)
        t = start + 6_100
        for index in range(12):
            launch_at = t - 20
            name = (
                "ampere_sgemm_128x64_tn"
                if index % 3 == 0
                else "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(int)"
            )
            duration = 250 if index % 3 == 0 else 40
            gpu.kernel(
                name,
                t,
                duration,
                grid=(216, 1, 1),
                block=(256, 1, 1),
                occupancy_pct=50.0,
                launch=(python, launch_at, 8),
                tf_op="model/dense/MatMul:MatMul" if index % 3 == 0 else "model/dense/Relu:Relu",
            )
            t += duration + 15
        gpu.memcpy("h2d", start + 6_060, 30, 393_216, src="pageable", dst="device", launch=(python, start + 6_050, 5))
    return builder.write_run(logdir, run="quickstart_input_bound")


if __name__ == "__main__":
    print(write_quickstart(sys.argv[1] if len(sys.argv) > 1 else "demo_logs"))
