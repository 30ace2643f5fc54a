"""Writes small Kineto (PyTorch profiler) traces as text, timestamps spelled exactly as given."""

import json


def x_event(cat, name, ts, dur, pid=1, tid=1, **args):
    """One complete ("X") event; `ts` and `dur` are microseconds, passed as strings to keep every digit."""
    return (
        f'{{"ph": "X", "cat": "{cat}", "name": {json.dumps(name)}, "pid": {pid}, "tid": {tid}, "ts": {ts}, '
        f'"dur": {dur}, "args": {json.dumps(args)}}}'
    )


def kernel(name, ts, dur, correlation, device=0, stream=7, **args):
    return x_event(
        "kernel", name, ts, dur, pid=device, tid=stream, device=device, stream=stream, correlation=correlation, **args
    )


def launch(ts, dur, correlation, name="cudaLaunchKernel"):
    return x_event("cuda_runtime", name, ts, dur, correlation=correlation)


def trace_text(events, **top):
    """The trace file's text: the top-level values given (deviceProperties, distributedInfo...) and the events."""
    extra = "".join(f'"{key}": {json.dumps(value)}, ' for key, value in top.items())
    return "{" + extra + '"traceEvents": [\n' + ",\n".join(events) + "\n]}"
