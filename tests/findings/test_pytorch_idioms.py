"""A PyTorch run reads PyTorch only: every fix a PyTorch trace can raise, in every condition, names no TensorFlow,
Keras, JAX or XLA API and no tool of theirs (the Trace Viewer); the framework's own wording of a condition wins
over the framework-neutral one."""

import re

import pytest

from tb_gpu_advisor.api import analyze
from tb_gpu_advisor.findings import engine  # noqa: F401 (registers every family and PyTorch's wording)
from tb_gpu_advisor.findings.catalog import CATALOG, Entry, Idiom, entry_for
from tests.readers.kineto.real import real_kineto

OTHER_FRAMEWORKS = re.compile(
    r"TensorFlow|Keras|\btf\.|\bJAX\b|\bjax\.|\bXLA\b|jit_compile|Trace Viewer|drop_remainder|xprof", re.IGNORECASE
)
# Rules that fire only on TensorFlow's own events (tf.data iterators and stages, TF op types and placement,
# EagerLocalExecute, tf.summary ops, tf.py_function): a PyTorch trace has none, so their TensorFlow text is never
# shown on one.
TENSORFLOW_ONLY = {
    "host.eager_execution",
    "host.python_function",
    "input.demanded_file_reads",
    "input.map_pool_saturated",
    "input.no_cache",
    "input.no_prefetch",
    "input.python_generator",
    "input.sequential_map",
    "input.tf_data_service",
    "placement.ops_on_host",
    "steps.summary_stall",
    "threading.tf_data_contention",
}


def _conditions(entry):
    return [None, *dict.fromkeys(key.split(":", 1)[-1] for key, _ in entry.variants)]


def _other_framework_words(finding_id):
    entry = entry_for(finding_id, "pytorch")
    found = {}
    for condition in _conditions(entry):
        idiom = entry.idiom("pytorch", condition)
        words = sorted(set(OTHER_FRAMEWORKS.findall(" ".join((entry.title, idiom.fix_summary, idiom.fix)))))
        if words:
            found[condition] = words
    return found


def test_every_fix_a_pytorch_trace_can_raise_reads_as_pytorch():
    assert {
        fid: words for fid in sorted(set(CATALOG) - TENSORFLOW_ONLY) if (words := _other_framework_words(fid))
    } == {}


def test_the_tensorflow_only_rules_exist_and_speak_tensorflow():
    """The exemption list is no blanket: each id is in the catalog and its text is TensorFlow's."""
    assert TENSORFLOW_ONLY <= set(CATALOG)
    assert [fid for fid in sorted(TENSORFLOW_ONLY) if not _other_framework_words(fid)] == []


def test_the_frameworks_own_wording_of_a_condition_wins_over_the_neutral_one():
    neutral, own = Idiom("neutral", "neutral text"), Idiom("torch", "torch text")
    entry = Entry("other", "t", "tf", "tf text", (), variants=(("any:warmup", neutral), ("pytorch:warmup", own)))
    assert entry.idiom("pytorch", "warmup") is own
    assert entry.idiom("jax", "warmup") is neutral and entry.idiom("tensorflow", "warmup") is neutral


@pytest.mark.parametrize(
    "name, finding_id, expected",
    [
        ("mi250_minitoy_train", "launch.gpu_starved_by_launches", "HIP graphs on ROCm"),  # warm-up on AMD
        ("a100_alexnet_sync", "host.gpu_idle_host_busy", "torch.profiler.schedule(wait=5"),  # warm-up
        ("a100_8rank_control", "communication.allreduce_exposed", "TorchRec"),  # all-to-all, not all-reduce
        ("v100_2rank_test", "steps.uneven_step_time", "the step's own work"),  # neutral: the slow steps do more
    ],
)
def test_real_pytorch_runs_read_as_pytorch(name, finding_id, expected):
    host = analyze(str(real_kineto(name)))["hosts"][0]
    assert host["summary"]["framework"] == "pytorch"
    finding = next(f for f in host["findings"] if f["id"] == finding_id)
    assert expected in finding["fix"]
    texts = [" ".join((f["title"], f["fix_summary"] or "", f["fix"] or "")) for f in host["findings"]]
    assert [OTHER_FRAMEWORKS.findall(text) for text in texts if OTHER_FRAMEWORKS.search(text)] == []
