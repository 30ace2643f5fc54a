"""Fix code we tell users to paste runs on the installed framework (TensorFlow on CPU, in a subprocess)."""

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

from tb_gpu_advisor.findings.catalog import entry_for

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None,
    reason="TensorFlow is not installed (pip install -e '.[tf]'; scripts/test.sh does)",
)

_HARNESS = """
import numpy as np
import tensorflow as tf

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3)])
    optimizer = tf.keras.optimizers.SGD(0.1)
before = [v.numpy().copy() for v in model.trainable_variables]
x = tf.constant(np.arange(16, dtype="float32").reshape(4, 4) / 16.0)
dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(x).batch(4))

@tf.function
def train_step(batch):
    def replica_step(batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(batch)) / 4.0
{snippet}
    strategy.run(replica_step, args=(batch,))

for batch in dataset:
    train_step(batch)
after = [v.numpy() for v in model.trainable_variables]
# dLoss/dkernel = column sums of x over the global batch / 4, for every output; bias gradient = 1 per output
expected_kernel = before[0] - 0.1 * np.repeat((x.numpy().sum(axis=0) / 4.0)[:, None], 3, axis=1)
expected_bias = before[1] - 0.1 * np.ones(3)
np.testing.assert_allclose(after[0], expected_kernel, rtol=1e-2, atol=1e-3)
np.testing.assert_allclose(after[1], expected_bias, rtol=1e-2, atol=1e-3)
print("OK")
"""


def _code_block(fix):
    """The indented code lines of a fix text, dedented."""
    return textwrap.dedent("\n".join(line for line in fix.splitlines() if line.startswith("    ")))


def test_tensorflow_fp32_allreduce_fix_runs_and_reduces_once(tmp_path):
    idiom = entry_for("communication.allreduce_exposed").idiom("tensorflow", "fp32_allreduce")
    snippet = textwrap.indent(_code_block(idiom.fix), " " * 8)
    script = tmp_path / "step.py"
    script.write_text(_HARNESS.replace("{snippet}", snippet))
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **{k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"},
            "CUDA_VISIBLE_DEVICES": "",
            "TF_CPP_MIN_LOG_LEVEL": "2",
        },
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("OK")
