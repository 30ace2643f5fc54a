"""The host thread and the GPU plane a TraceBuilder writes its launches, kernels, copies and steps into."""

from __future__ import annotations

from tb_gpu_advisor.constants import STEPS_LINE_ID


_COPY_NAMES = {"h2d": "MemcpyH2D", "d2h": "MemcpyD2H", "d2d": "MemcpyD2D", "p2p": "MemcpyP2P"}


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
