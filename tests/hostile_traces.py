"""Hostile traces of the shapes issue 28 lists, for the fuzz test: Kineto traces with huge numbers, deep nesting,
surrogates and long names of repeated fragments, and XPlanes carrying crafted HLO modules (computations that
each call the next twice, cycles, deep chains, absurd shapes, garbage)."""

from tb_gpu_advisor.readers.hlo import schema
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tests.readers.hlo.test_hostile_modules import cyclic_module, doubling_module

SPAN = "1700000000000"
LONG = 100_000  # characters of a long name


def kineto_events(name="good_kernel", steps=4, stretch=1):
    """The events of a small healthy PyTorch step loop; `name` names its kernels and ops."""
    events = []
    for step in range(steps):
        at = 1_000 + step * 1_000 * stretch
        events += [
            x_event("user_annotation", f"ProfilerStep#{step}", at, 900),
            x_event("cpu_op", f"aten::{name}", at + 5, 60),
            launch(at + 10, 5, 100 + step),
            kernel(name, at + 100, 500, 100 + step, grid=[4, 1, 1], block=[128, 1, 1]),
        ]
    return events


def _nested_events(depth):
    return [x_event("cpu_op", f"aten::level{i}", 1_000 + i, 2 * depth - 2 * i + 5) for i in range(depth)]


def kineto_text(kind):
    """The text of one hostile Kineto trace of `kind` (KINETO_KINDS)."""
    if kind == "huge_duration":
        return trace_text(kineto_events() + [kernel("k", 2_000, "1e100", 999)])
    if kind == "huge_timestamp":
        return trace_text(kineto_events() + [x_event("cpu_op", "aten::far", "1e308", 5)])
    if kind == "beyond_int64":
        return trace_text(kineto_events() + [kernel("k", 2**70, 2**66, 2**65, device=2**64, stream=-(2**70))])
    if kind == "deep_json":
        return trace_text(kineto_events()).replace(
            '"traceEvents"', '"deep": ' + "[" * 20_000 + "]" * 20_000 + ', "traceEvents"', 1
        )
    if kind == "deep_events":
        return trace_text(kineto_events() + _nested_events(3_000))
    if kind == "surrogates":
        return trace_text(kineto_events("k\ud800evil\udc80\u202ename\u2067"))
    if kind == "long_gemm":
        return trace_text(kineto_events("gemm" * (LONG // 4) + "x"))
    if kind == "long_buffer":
        return trace_text(
            kineto_events("buffer" * (LONG // 6) + "_full", steps=2), traceWarnings=["buffer" * (LONG // 6)]
        )
    if kind == "long_fragments":
        return trace_text(kineto_events("Cijk_" + "_MI16x" * (LONG // 6) + "HashTable" * 100, steps=2))
    if kind == "nan_fields":
        return (
            trace_text(kineto_events())
            .replace('"dur": 500', '"dur": NaN', 1)
            .replace('"ts": 1005', '"ts": Infinity', 1)
        )
    if kind == "wrong_types":
        return trace_text(
            kineto_events()
            + [
                '{"ph": "X", "cat": "kernel", "name": 5, "ts": "abc", "dur": [], "pid": {}, "tid": null, "args": []}',
                '"not an event"',
                "17",
                '{"ph": "X", "cat": "cpu_op", "name": "aten::x", "ts": 1100, "dur": 5, '
                '"pid": 1, "tid": [1, {"a": 2}], "args": {}}',
            ]
        )
    if kind == "absurd_device":
        return trace_text(
            kineto_events(),
            deviceProperties=[
                {
                    "id": 0,
                    "name": "NVIDIA H100 " * 5_000,
                    "totalGlobalMem": -1,
                    "numSms": 1e30,
                    "computeMajor": 2**70,
                    "computeMinor": -3,
                }
            ],
        )
    if kind == "no_events":
        return '{"traceEvents": []}'
    if kind == "not_json":
        return '{"traceEvents": [{"ph": "X", "name": "k", '
    raise ValueError(kind)


KINETO_KINDS = (
    "huge_duration",
    "huge_timestamp",
    "beyond_int64",
    "deep_json",
    "deep_events",
    "surrogates",
    "long_gemm",
    "long_buffer",
    "long_fragments",
    "nan_fields",
    "wrong_types",
    "absurd_device",
    "no_events",
    "not_json",
)


def _cyclic_module():
    module, _ = cyclic_module("top")
    return module.to_bytes()


def _chain_module(depth=2_000):
    module = HloModuleBuilder()
    chain = [module.computation(f"c{i}") for i in range(depth)]
    for i, computation in enumerate(chain):
        p = computation.parameter("p", shape("f32", 8))
        if i + 1 < depth:
            computation.add(f"f{i}", "fusion", shape("f32", 8), (p,), called=[chain[i + 1]])
        else:
            computation.add("add", "add", shape("f32", 8), (p, p))
    x = module.entry.parameter("x", shape("f32", 8))
    module.entry.add("top", "fusion", shape("f32", 8), (x,), called=[chain[0]])
    return module.to_bytes()


def _absurd_shapes_module():
    module = HloModuleBuilder()
    huge = schema.ShapeProto(element_type=11, dimensions=[2**62, 2**62, 2**62])
    a, b = module.entry.parameter("a", huge), module.entry.parameter("b", huge)
    module.entry.add("top", "add", huge, (a, b))
    return module.to_bytes()


def hlo_xspace(kind):
    """A serialized XSpace whose one GPU kernel runs instruction `top` of a crafted module of `kind` (HLO_KINDS),
    or of the serialized module `kind` when it is bytes."""
    data = (
        kind
        if isinstance(kind, bytes)
        else {
            "doubling": lambda: doubling_module().to_bytes(),
            "cyclic": _cyclic_module,
            "chain": _chain_module,
            "absurd_shapes": _absurd_shapes_module,
            "garbage": lambda: b"\x0a\xff\xff\xff\xff\x0f" + b"\x00" * 64,
            "truncated": lambda: doubling_module(depth=8).to_bytes()[:-7],
        }[kind]()
    )
    builder = TraceBuilder(hostname="bad")
    thread, gpu = builder.thread("python"), builder.gpu(0)
    builder.hlo_module(7, "jit_crafted", data)
    for step in range(4):
        at = 1_000 + step * 10_000
        thread.step(step, at, 10_000)
        gpu.kernel(
            "loop_add_fusion",
            at + 1_000,
            10,
            hlo_op="top",
            program_id=7,
            hlo_module="jit_crafted",
            launch=(thread, at + 500, 20),
        )
    return builder.xspace().SerializeToString()


HLO_KINDS = ("doubling", "cyclic", "chain", "absurd_shapes", "garbage", "truncated")


def long_name_xspace(fragment):
    """A serialized XSpace whose kernels and host ops are named `fragment` repeated to 100,000 characters."""
    name = (fragment * (LONG // len(fragment) + 1))[:LONG]
    builder = TraceBuilder(hostname="bad")
    thread, gpu = builder.thread("python"), builder.gpu(0)
    for step in range(3):
        at = 1_000 + step * 10_000
        thread.step(step, at, 10_000)
        thread.event(name, at + 100, 200)
        gpu.kernel(name, at + 1_000, 3_000, launch=(thread, at + 500, 20))
    return builder.xspace().SerializeToString()


LONG_FRAGMENTS = ("gemm", "f32gemm", "buffer", "_MI16x", "HashTable", "EagerLocalExecute: __inference_")
