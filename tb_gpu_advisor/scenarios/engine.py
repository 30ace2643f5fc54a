"""Replays a TensorFlow GPU program onto a TraceBuilder: host op events, driver launches, kernels on streams.

Times are microseconds on a grid of 0.5 us, so every sum is exact in binary floating point and the scenario
numbers are exactly reproducible. A kernel starts when its launch has reached the GPU and its stream is free.
"""

from dataclasses import dataclass, field

from tb_gpu_advisor.scenarios.devices import occupancy

COMPUTE_STREAM = 7
H2D_STREAM = 13
D2H_STREAM = 14
NCCL_STREAM = 22


def half_us(value):
    """Rounds to the 0.5 us grid, never below 0.5 us."""
    return max(0.5, round(value * 2) / 2)


@dataclass(frozen=True)
class Kernel:
    """One kernel launch: demangled name, duration and launch configuration."""

    name: str
    duration_us: float
    grid: tuple
    block: tuple
    registers: int
    static_shared: int = 0
    dynamic_shared: int = 0
    hlo_op: str | None = None


@dataclass(frozen=True)
class Op:
    """A TensorFlow op (`name:type`), the kernels it launches and the host time it computes on the CPU."""

    tf_op: str
    kernels: tuple = ()
    host_us: float = 0.0


@dataclass(frozen=True)
class HostCosts:
    """Host time around each op and launch (TF executor overhead, cuLaunchKernel, launch-to-GPU latency)."""

    before_launch_us: float = 1.5
    launch_us: float = 4.0
    after_launch_us: float = 1.0
    between_ops_us: float = 1.5
    latency_us: float = 6.0


GRAPH_COSTS = HostCosts()


@dataclass
class Gpu:
    """One GPU plane, its spec and when each of its streams is next free."""

    plane: object
    spec: object
    free_at: dict = field(default_factory=dict)

    def ready(self, stream):
        return self.free_at.get(stream, 0.0)


def run_kernel(
    gpu, kernel, start_us, *, stream=COMPUTE_STREAM, launch=None, tf_op=None, hlo_module=None, program_id=None
):
    """Puts one kernel on `stream` at `start_us` and returns its end; `program_id` names its XLA module's id."""
    occ = occupancy(gpu.spec, kernel.block, kernel.registers, kernel.static_shared + kernel.dynamic_shared)
    gpu.plane.kernel(
        kernel.name,
        start_us,
        kernel.duration_us,
        stream=stream,
        grid=kernel.grid,
        block=kernel.block,
        registers=kernel.registers,
        static_shared=kernel.static_shared,
        dynamic_shared=kernel.dynamic_shared,
        occupancy_pct=occ.occupancy_pct,
        launch=launch,
        tf_op=None if kernel.hlo_op else tf_op,
        hlo_op=kernel.hlo_op,
        hlo_module=hlo_module,
        min_grid_size=occ.min_grid_size,
        suggested_block_size=occ.suggested_block_size,
        program_id=program_id,
    )
    end = start_us + kernel.duration_us
    gpu.free_at[stream] = end
    return end


def launch_ops(
    thread,
    gpu,
    ops,
    start_us,
    *,
    costs=GRAPH_COSTS,
    stream=COMPUTE_STREAM,
    not_before_us=0.0,
    hlo_module=None,
    op_events=True,
    program_id=None,
):
    """Launches `ops` one after another from `thread`; returns when the host is done with the last one.

    Each op is a host event `name:type` holding one driver launch per kernel. A kernel starts
    `costs.latency_us` after its launch began, or when its stream frees up, and never before `not_before_us`
    (the data it needs). `op_events=False` leaves the op events out (XLA launches a whole program at once).
    """
    t = start_us
    for op in ops:
        op_start = t
        t += costs.before_launch_us
        for kernel in op.kernels:
            begin = max(t + costs.latency_us, gpu.ready(stream), not_before_us)
            run_kernel(
                gpu,
                kernel,
                begin,
                stream=stream,
                launch=(thread, t, costs.launch_us),
                tf_op=op.tf_op,
                hlo_module=hlo_module,
                program_id=program_id,
            )
            t += costs.launch_us
        t += op.host_us + costs.after_launch_us
        if op_events:
            thread.event(op.tf_op, op_start, t - op_start)
        t += costs.between_ops_us
    return t


def memcpy(
    thread,
    gpu,
    direction,
    start_us,
    size_bytes,
    duration_us,
    *,
    src,
    dst,
    is_async,
    stream,
    not_before_us=0.0,
    launch_us=5.0,
    latency_us=4.0,
):
    """A memcpy called from `thread` at `start_us`; returns (host end, device end).

    A synchronous copy keeps the calling thread inside the driver call until the copy is done.
    """
    begin = max(start_us + latency_us, gpu.ready(stream), not_before_us)
    end = begin + duration_us
    host_end = end + 1.0 if not is_async else start_us + launch_us
    gpu.plane.memcpy(
        direction,
        begin,
        duration_us,
        size_bytes,
        src=src,
        dst=dst,
        is_async=is_async,
        stream=stream,
        launch=(thread, start_us, host_end - start_us),
    )
    gpu.free_at[stream] = end
    return host_end, end


def transfer_us(size_bytes, gbps):
    """Copy time of `size_bytes` at `gbps` GB/s, on the 0.5 us grid."""
    return half_us(size_bytes / (gbps * 1e3))
