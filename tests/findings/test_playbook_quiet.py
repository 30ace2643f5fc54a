"""The playbook findings of issue 18 items 1, 2 and 5-9 stay quiet on every committed real trace and every demo
run: each fires only on the generated traces built for it (tests/findings/rules) and on the real captures and demo
runs made for it."""

import pytest

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.scenarios import SCENARIOS
from tests.conftest import report_of
from tests.data import REAL

PLAYBOOK_IDS = {
    "threading.host_cpu_saturated",
    "memory.near_limit",
    "host.gc_pauses",
    "host.feeder_blocked",
    "environment.idle_gpus",
    "communication.collective_below_link",
    "environment.versions_misaligned",
}
# The demo's launch-bound run is the target of the gpu_private hint (a 33% launch share, `low` without a core count).
TARGETS = {("launch_bound", "threading.tf_data_contention")}
BAD_INPUT = {"tpu_inference_utf8_mangled.xplane.pb"}  # a corrupt file kept for the error tests
# The real blocked-feeder capture (tests/data/real/feeder) is host.feeder_blocked's target; its fixed twin is not.
REAL_TARGETS = {("feeder/feeder_one_loader.xplane.pb", "host.feeder_blocked")}
REAL_TRACES = sorted(
    name
    for pattern in ("*.xplane.pb", "*/*.xplane.pb", "kineto/*.gz")
    for name in (str(path.relative_to(REAL)) for path in REAL.glob(pattern))
    if name not in BAD_INPUT
)


# Item 2: batch preparation on the step thread fires on the real loops that build batches inline and the demo's.
BATCH_PREP = "input.host_batch_prep"
# The jax_sharded_cpu captures draw each step's batch with jax.random on the step thread, too.
BATCH_PREP_REAL = {
    "jax0102_cpu_steps.xplane.pb",
    "cpu_pairs/jax_loader_inline.xplane.pb",
    "tf221_cpu_python_loader_inline.xplane.pb",
    "jax_sharded_cpu/jax0102_cpu4_named_sharding.xplane.pb",
    "jax_sharded_cpu/jax0102_cpu4_pmap.xplane.pb",
}
BATCH_PREP_DEMO = {"jax_inline_loader"}


@pytest.mark.parametrize("name", REAL_TRACES)
def test_quiet_on_the_real_traces(name):
    fired = {f["id"] for f in host_report(load_model(REAL / name))["findings"]}
    expected = {finding for trace, finding in REAL_TARGETS if trace == name}
    assert fired & (PLAYBOOK_IDS | {"threading.tf_data_contention"}) == expected, name
    assert (BATCH_PREP in fired) == (name in BATCH_PREP_REAL), name


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_quiet_on_the_demo_runs(name):
    fired = {f["id"] for f in report_of(SCENARIOS[name].build(), f"{name}.xplane.pb")["findings"]}
    expected = {finding for run, finding in TARGETS if run == name}
    assert fired & (PLAYBOOK_IDS | {"threading.tf_data_contention"}) == expected, name
    assert (BATCH_PREP in fired) == (name in BATCH_PREP_DEMO), name
