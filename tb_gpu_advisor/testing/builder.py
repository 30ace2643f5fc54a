"""TraceBuilder: GPU and host activity in microseconds in, an XSpace as TensorFlow/XLA save it out.

The current format (default) is what CUPTI-based profilers write today: host launch calls named by the kernel
symbol on `/host:CPU` thread lines with `correlation_id`/`device_id`/`context_id`, device kernels with an
interned `kernel_details` (`regs static_shared dynamic_shared grid block occ_pct`), memcpys with
`memcpy_details` (`kind_src kind_dst size dest async`), device capability stats with `device_vendor`, and a
`Task Environment` plane. `legacy=True` writes the old pre-grouped TensorFlow format instead: `kernel_details`
`regs shm grid block`, `memcpy_details` `size dest async`, `group_id` on events, per-GPU `Steps` lines, no
`device_id` on host launches and garbage kernel details on them, as in the real 8xV100 trace.
"""

import itertools
import os

from tb_gpu_advisor.constants import STEPS_LINE_ID
from tb_gpu_advisor.readers.xplane import schema

_PS_PER_US = 1_000_000
_COPY_NAMES = {"h2d": "MemcpyH2D", "d2h": "MemcpyD2H", "d2d": "MemcpyD2D", "p2p": "MemcpyP2P"}
_DEFAULT_BASE_NS = 1_000


def _ps(us):
    return int(round(us * _PS_PER_US))


class _PlaneWriter:
    """Interns metadata and collects lines of one XPlane."""

    def __init__(self, plane_id, name):
        self.plane = schema.XPlane(id=plane_id, name=name)
        self._event_ids = {}
        self._stat_ids = {}
        self._lines = {}

    def stat_id(self, name):
        found = self._stat_ids.get(name)
        if found is None:
            found = self._stat_ids[name] = len(self._stat_ids) + 1
            self.plane.stat_metadata[found].id = found
            self.plane.stat_metadata[found].name = name
        return found

    def event_id(self, name):
        found = self._event_ids.get(name)
        if found is None:
            found = self._event_ids[name] = len(self._event_ids) + 1
            self.plane.event_metadata[found].id = found
            self.plane.event_metadata[found].name = name
        return found

    def line(self, line_id, name, base_ns=_DEFAULT_BASE_NS):
        found = self._lines.get(line_id)
        if found is None:
            found = self._lines[line_id] = self.plane.lines.add(id=line_id, name=name, timestamp_ns=base_ns)
        return found

    def set_stat(self, stat, name, value, interned=False, unsigned=False):
        stat.metadata_id = self.stat_id(name)
        if interned:
            stat.ref_value = self.stat_id(str(value))
        elif isinstance(value, bool):
            stat.int64_value = int(value)
        elif isinstance(value, int):
            if value >= 2**63 or (unsigned and value >= 0):
                stat.uint64_value = value
            else:
                stat.int64_value = value
        elif isinstance(value, float):
            stat.double_value = value
        elif isinstance(value, bytes):
            stat.bytes_value = value
        else:
            stat.str_value = str(value)

    def add_event(self, line, name, start_us, duration_us, stats=(), interned=()):
        event = line.events.add(
            metadata_id=self.event_id(name),
            offset_ps=_ps(start_us) - line.timestamp_ns * 1000,
            duration_ps=_ps(duration_us),
        )
        for key, value in stats:
            if value is not None:
                self.set_stat(event.stats.add(), key, value, interned=key in interned)
        return event

    def add_plane_stat(self, name, value, unsigned=False):
        self.set_stat(self.plane.stats.add(), name, value, unsigned=unsigned)

    def sort_lines(self):
        """Orders each line's events by start, enclosing events first, as the profiler's post-processing does."""
        for line in self.plane.lines:
            ordered = sorted(line.events, key=lambda e: (e.offset_ps, -e.duration_ps))
            del line.events[:]
            line.events.extend(ordered)


class HostThread:
    """One host thread line of `/host:CPU`."""

    def __init__(self, builder, writer, thread_id, name):
        self._builder = builder
        self._writer = writer
        self._line = writer.line(thread_id, name)

    def event(self, name, start_us, duration_us, /, **stats):
        """Any TraceMe event; keyword arguments become stats (ints, floats or strings), `name=` included."""
        self._writer.add_event(self._line, name, start_us, duration_us, stats.items())
        return self

    def step(self, step_num, start_us, duration_us, name="train"):
        """A step marker as tf.profiler.experimental.Trace(name, step_num=..., _r=1) writes it."""
        return self.event(name, start_us, duration_us, step_num=step_num, _r=1)

    def python_call(self, location, function, start_us, duration_us):
        """A Python-tracer call as JAX's profiler names it: `$<location> <function>` (`$queue.py:154 get`,
        `$<unknown> acquire` for a method of a C object, `$time sleep`)."""
        return self.event(f"${location} {function}", start_us, duration_us)

    def input_wait(self, start_us, duration_us):
        """The host blocked in tf.data's IteratorGetNext."""
        return self.event("IteratorGetNextOp::DoCompute", start_us, duration_us)

    def launch_call(self, name, start_us, duration_us, correlation_id, device_ordinal, memcpy_details=None):
        """A CUPTI driver-API callback (kernel launch, memcpy or memset call) on this thread."""
        if not self._builder.legacy:
            stats = [
                ("device_id", device_ordinal),
                ("correlation_id", correlation_id),
                ("context_id", f"$${device_ordinal + 1}"),
                ("memcpy_details", memcpy_details),
            ]
        else:
            stats = [
                ("correlation_id", correlation_id),
                (
                    "kernel_details",
                    "regs:17179869185 shm:7 grid:1,210453397508,0 block:139910371608800,96,18446744073709551536",
                ),
            ]
        self._writer.add_event(self._line, name, start_us, duration_us, stats, interned=("memcpy_details",))


class GpuPlane:
    """One `/device:GPU:N` plane; kernels and copies go on per-stream lines."""

    def __init__(self, builder, writer, ordinal):
        self._builder = builder
        self._writer = writer
        self.ordinal = ordinal
        self._stream_types = {}

    def _stream(self, stream, kind):
        types = self._stream_types.setdefault(stream, [])
        if kind not in types:
            types.append(kind)
        line = self._writer.line(stream, "")
        line.name = f"Stream #{stream}({','.join(types)})"
        return line

    def _common_stats(self, correlation_id, group_id):
        stats = [("correlation_id", correlation_id), ("context_id", f"$${self.ordinal + 1}")]
        if self._builder.legacy:
            stats.append(("group_id", 0 if group_id is None else group_id))
        return stats

    def kernel(
        self,
        name,
        start_us,
        duration_us,
        *,
        stream=7,
        grid=(1, 1, 1),
        block=(128, 1, 1),
        registers=32,
        static_shared=0,
        dynamic_shared=0,
        occupancy_pct=50.0,
        launch=None,
        tf_op=None,
        hlo_op=None,
        hlo_module=None,
        group_id=None,
        min_grid_size=None,
        suggested_block_size=None,
        details=None,
        op_name=None,
        program_id=None,
        shape=None,
        correlation_id=None,
    ):
        """A kernel; `launch=(HostThread, start_us, duration_us)` adds its host launch call; `program_id` names
        the XLA module (TraceBuilder.hlo_module) whose `hlo_op` instruction it runs.

        `details` replaces the whole `kernel_details` text (ROCm writes
        ` grid:1,1,1 block:512,1,1 private_mem:0 group_mem:0 occ_pct:0`); `op_name` adds the `name` stat JAX
        writes beside `hlo_op` (`jit(dot)/dot_general`); `shape` the input shapes TensorFlow writes for an op
        outside XLA (`(float[1024,256])`).

        `min_grid_size` and `suggested_block_size` (current format) add the occupancy stats current XLA writes
        next to `kernel_details` (`theoretical_occupancy_pct`, `occupancy_min_grid_size`,
        `occupancy_suggested_block_size`).
        """
        # A CUDA graph's kernels share its launch's `correlation_id`; otherwise each kernel has its own.
        correlation_id = self._builder.next_correlation_id() if correlation_id is None else correlation_id
        occupancy_stats = []
        details_override = details
        if self._builder.legacy:
            details = f"regs:{registers} shm:{static_shared + dynamic_shared} grid:{_dim(grid)} block:{_dim(block)}"
        else:
            details = (
                f"regs:{registers} static_shared:{static_shared} dynamic_shared:{dynamic_shared} "
                f"grid:{_dim(grid)} block:{_dim(block)}"
                + (f" occ_pct:{_six_digits(occupancy_pct)}" if occupancy_pct is not None else "")
            )
            if occupancy_pct is not None and min_grid_size is not None:
                occupancy_stats = [
                    ("theoretical_occupancy_pct", float(occupancy_pct)),
                    ("occupancy_min_grid_size", min_grid_size),
                    ("occupancy_suggested_block_size", suggested_block_size),
                ]
        if details_override is not None:
            details = details_override
        stats = self._common_stats(correlation_id, group_id) + occupancy_stats + [("kernel_details", details)]
        if op_name:
            stats.append(("name", op_name))
        if tf_op:
            stats.append(("tf_op", tf_op))
        if hlo_op:
            stats += [("hlo_op", hlo_op), ("hlo_module", hlo_module or "jit_train_step"), ("tf_op", "XlaModule:")]
        if program_id is not None:
            stats.append(("program_id", program_id))
        if shape is not None:
            stats.append(("shape", shape))
        self._writer.add_event(
            self._stream(stream, "Compute"),
            name,
            start_us,
            duration_us,
            stats,
            interned=("kernel_details", "tf_op", "hlo_op", "hlo_module", "name"),
        )
        self._add_launch(launch, name, correlation_id)
        return correlation_id

    def memcpy(
        self,
        direction,
        start_us,
        duration_us,
        size_bytes,
        *,
        src="pageable",
        dst="device",
        is_async=False,
        stream=9,
        launch=None,
        group_id=None,
    ):
        """A copy; direction is h2d, d2h, d2d or p2p; src/dst are CUPTI memory kinds (current format only)."""
        correlation_id = self._builder.next_correlation_id()
        name = _COPY_NAMES[direction]
        if self._builder.legacy:
            details = f"size:{size_bytes} dest:{self.ordinal} async:{int(is_async)}"
        else:
            details = f"kind_src:{src} kind_dst:{dst} size:{size_bytes} dest:{self.ordinal} async:{int(is_async)}"
        stats = self._common_stats(correlation_id, group_id) + [("memcpy_details", details)]
        self._writer.add_event(
            self._stream(stream, name), name, start_us, duration_us, stats, interned=("memcpy_details",)
        )
        # The driver callback of a copy carries memcpy_details too, with memory kinds CUPTI does not know yet.
        host_details = (
            None
            if self._builder.legacy
            else f"kind_src:unknown kind_dst:unknown size:{size_bytes} dest:{self.ordinal} async:{int(is_async)}"
        )
        self._add_launch(launch, name, correlation_id, host_details)
        return correlation_id

    def rocm_copy(
        self, start_us, duration_us, size_bytes, *, name="CopyDeviceToDevice", stream=12, is_async=True, launch=None
    ):
        """A copy as XLA's ROCm tracer writes it: a `Copy...To...` event on a `Stream #N(MemcpyOther)` line
        with `memcpy_details` `kind:Unknown size:.. dest:.. async:..` (ROCm does not know memory kinds)."""
        correlation_id = self._builder.next_correlation_id()
        details = f"kind:Unknown size:{size_bytes} dest:{self.ordinal} async:{int(is_async)}"
        stats = [("correlation_id", correlation_id), ("memcpy_details", details)]
        self._writer.add_event(
            self._stream(stream, "MemcpyOther"), name, start_us, duration_us, stats, interned=("memcpy_details",)
        )
        self._add_launch(launch, "hipMemcpyAsync", correlation_id)
        return correlation_id

    def rocm_fill(self, start_us, duration_us, size_bytes, *, name="FillBuffer", stream=12):
        """A memset as the ROCm tracer writes it: a runtime-named event with `memset_details` and no
        `kernel_details`."""
        correlation_id = self._builder.next_correlation_id()
        stats = [("correlation_id", correlation_id), ("memset_details", f"kind:Unknown num_bytes:{size_bytes} async:1")]
        self._writer.add_event(
            self._stream(stream, "Memset"), name, start_us, duration_us, stats, interned=("memset_details",)
        )
        return correlation_id

    def memset(self, start_us, duration_us, size_bytes, *, stream=7, launch=None):
        correlation_id = self._builder.next_correlation_id()
        stats = self._common_stats(correlation_id, None) + [
            ("memset_details", f"kind:device num_bytes:{size_bytes} async:1")
        ]
        self._writer.add_event(self._stream(stream, "Memset"), "Memset 1", start_us, duration_us, stats)
        self._add_launch(launch, "Memset", correlation_id)
        return correlation_id

    def step_marker(self, group_id, start_us, duration_us, name=None):
        """A pre-grouped `Steps` line event (legacy format)."""
        line = self._writer.line(STEPS_LINE_ID, "Steps")
        self._writer.add_event(
            line,
            name or str(group_id),
            start_us,
            duration_us,
            [("group_id", group_id), ("step_name", name or str(group_id))],
        )

    def _add_launch(self, launch, name, correlation_id, memcpy_details=None):
        if launch is None:
            return
        thread, start_us, duration_us = launch
        thread.launch_call(name, start_us, duration_us, correlation_id, self.ordinal, memcpy_details)


def _dim(values):
    return ",".join(str(v) for v in values)


def _six_digits(value):
    """A double as absl::StrCat writes it (six significant digits, no trailing zeros): 50 -> "50"."""
    return f"{float(value):.6g}"


class TraceBuilder:
    """Collects planes and writes one host's `.xplane.pb`."""

    def __init__(self, legacy=False, hostname="localhost", first_correlation_id=1):
        self.legacy = legacy
        self._space = schema.XSpace(hostnames=[hostname])
        self._host = _PlaneWriter(0, "/host:CPU")
        self._gpus = {}
        self._threads = {}
        self._extra = []
        self._correlation = itertools.count(first_correlation_id)
        self._thread_ids = itertools.count(1001)

    @property
    def hostname(self):
        return self._space.hostnames[0]

    def next_correlation_id(self):
        return next(self._correlation)

    def thread(self, name="python", thread_id=None):
        """The host thread line named `name` (created on first use); `thread_id` is its line id."""
        found = self._threads.get(name)
        if found is None:
            line_id = next(self._thread_ids) if thread_id is None else thread_id
            found = self._threads[name] = HostThread(self, self._host, line_id, name)
        return found

    def gpu(
        self,
        ordinal=0,
        *,
        model="NVIDIA A100-SXM4-80GB",
        compute_capability=(8, 0),
        sm_count=108,
        clock_mhz=1410,
        memory_bandwidth_gbps=2039.0,
        memory_gb=80,
        memory_bandwidth_bytes=None,
        memory_bytes=None,
        vendor="Nvidia",
    ):
        """The GPU plane `/device:GPU:<ordinal>` with its capability stats (created on first use).

        `memory_bandwidth_bytes` (B/s) and `memory_bytes` give the exact values CUDA reports, overriding the
        rounded GB/s and GiB arguments. `vendor` is the `device_vendor` stat (None: not written); `model=None`
        writes no `gpu_device_name`, as ROCm traces do not.
        """
        found = self._gpus.get(ordinal)
        if found is None:
            writer = _PlaneWriter(ordinal, f"/device:GPU:{ordinal}")
            if not self.legacy:
                if vendor is not None:
                    writer.add_plane_stat("device_vendor", vendor)
                if model is not None:
                    writer.add_plane_stat("gpu_device_name", model)
            writer.add_plane_stat("clock_rate", int(round(clock_mhz * 1000)))
            writer.add_plane_stat("core_count", sm_count)
            writer.add_plane_stat(
                "memory_bandwidth",
                memory_bandwidth_bytes or int(round(memory_bandwidth_gbps * 1e9)),
                unsigned=not self.legacy,
            )
            writer.add_plane_stat("memory_size", memory_bytes or int(memory_gb * 2**30), unsigned=not self.legacy)
            writer.add_plane_stat("compute_cap_major", compute_capability[0])
            writer.add_plane_stat("compute_cap_minor", compute_capability[1])
            found = self._gpus[ordinal] = (writer, GpuPlane(self, writer, ordinal))
        return found[1]

    def metadata(self, **stats):
        """A `/host:metadata` plane with plane stats such as cuda_version or jax_version."""
        writer = self._metadata_writer()
        for key, value in stats.items():
            writer.add_plane_stat(key, value)

    def hlo_module(self, program_id, name, hlo_proto):
        """Stores a module as XLA does: an event metadata of `/host:metadata` with id `program_id`, named
        `name(program_id)`, holding the serialized HloProto (testing.hlo.HloModuleBuilder) in `Hlo Proto`."""
        writer = self._metadata_writer()
        meta = writer.plane.event_metadata[program_id]
        meta.id = program_id
        meta.name = f"{name}({program_id})"
        writer.set_stat(meta.stats.add(), "Hlo Proto", bytes(hlo_proto))

    def _metadata_writer(self):
        for writer in self._extra:
            if writer.plane.name == "/host:metadata":
                return writer
        writer = _PlaneWriter(0, "/host:metadata")
        self._extra.append(writer)
        return writer

    def profiler_warning(self, text):
        """A line in XSpace.warnings, where the profiler reports e.g. dropped events."""
        self._space.warnings.append(text)

    def profiler_error(self, text):
        """A line in XSpace.errors."""
        self._space.errors.append(text)

    def xspace(self):
        space = schema.XSpace()
        space.CopyFrom(self._space)
        self._host.sort_lines()
        space.planes.add().CopyFrom(self._host.plane)
        for ordinal in sorted(self._gpus):
            self._gpus[ordinal][0].sort_lines()
            space.planes.add().CopyFrom(self._gpus[ordinal][0].plane)
        for writer in self._extra:
            space.planes.add().CopyFrom(writer.plane)
        if not self.legacy:
            env = _PlaneWriter(0, "Task Environment")
            env.add_plane_stat("profile_start_time", 1_796_000_000_000_000_000)
            env.add_plane_stat("profile_stop_time", 1_796_000_010_000_000_000)
            space.planes.add().CopyFrom(env.plane)
        return space

    def to_bytes(self):
        """The serialized XSpace; deterministic, so the same scenario code always gives the same bytes."""
        return self.xspace().SerializeToString(deterministic=True)

    def write(self, path):
        """Writes the trace to `path` and returns it."""
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(self.to_bytes())
        return str(path)

    def write_run(self, logdir, run="train", timestamp="2026_01_01_00_00_00", host="localhost"):
        """Writes `<logdir>/<run>/plugins/profile/<timestamp>/<host>.xplane.pb` and returns its path."""
        return self.write(os.path.join(logdir, run, "plugins", "profile", timestamp, f"{host}.xplane.pb"))
