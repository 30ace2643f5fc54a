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

from tb_gpu_advisor.readers.xplane import schema
from tb_gpu_advisor.testing.plane_writer import PlaneWriter
from tb_gpu_advisor.testing.timelines import GpuPlane, HostThread


class TraceBuilder:
    """Collects planes and writes one host's `.xplane.pb`."""

    def __init__(self, legacy=False, hostname="localhost", first_correlation_id=1):
        self.legacy = legacy
        self._space = schema.XSpace(hostnames=[hostname])
        self._host = PlaneWriter(0, "/host:CPU")
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
            writer = PlaneWriter(ordinal, f"/device:GPU:{ordinal}")
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
        writer = PlaneWriter(0, "/host:metadata")
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
            env = PlaneWriter(0, "Task Environment")
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
