"""Large multi-GPU training traces (millions of events) written in bulk with the vectorized wire encoder.

The scenario is a data-parallel training loop in the current CUPTI format, as TraceBuilder writes it: a
`python` thread marks each step (`train`, `step_num`, `_r`), a tf.data thread waits in `IteratorGetNext`, and
one executor thread per GPU launches that GPU's kernels and copies (kernel-symbol launch events with
`correlation_id`, `device_id`, `context_id`). Each GPU runs the same program of kernels every step on a compute
stream (with `kernel_details` and `tf_op` interned), an H2D copy of the batch first, NCCL all-reduces on a
second stream and a D2H copy of the loss last.
"""

import os
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.testing import encode
from tb_gpu_advisor.readers.xplane import schema

_PS_PER_US = 1_000_000
_LINE_BASE_NS = 1_000
_COMPUTE_STREAM, _COPY_STREAM, _OUT_STREAM, _NCCL_STREAM = 7, 9, 10, 13
_NCCL_NAME = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
_KERNEL_FAMILIES = (
    ("ampere_fp16_s16816gemm_fp16_{}x128_ldg8_f2f_stages_32x5_tn", 20.0, (216, 1, 1), (256, 1, 1), 232),
    (
        "sm80_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize{}x128x32_stage3_warpsize2x2x1_tensor16x8x8_kernel",
        15.0,
        (108, 2, 1),
        (128, 1, 1),
        168,
    ),
    (
        "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
        "Eigen::Tensor<float, {}, 1, long>, 16>>, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<float>, long)",
        3.0,
        (1024, 1, 1),
        (1024, 1, 1),
        32,
    ),
    (
        "void tensorflow::functor::ColumnReduceKernel<float const*, float*, cub::Sum, {}>(float const*, float*, "
        "int, int, cub::Sum, float)",
        4.0,
        (32, 8, 1),
        (32, 32, 1),
        40,
    ),
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_{}x64_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm"
        "::Params)",
        25.0,
        (54, 4, 1),
        (128, 1, 1),
        254,
    ),
)


@dataclass(frozen=True)
class TraceSize:
    """What was written: the file, its bytes and event counts."""

    path: str
    bytes: int
    kernels: int
    host_events: int


class _Plane:
    """Interned event and stat metadata of one plane, and its serialized lines."""

    def __init__(self, plane_id, name):
        self.header = schema.XPlane(id=plane_id, name=name)
        self.events, self.stats, self.lines = {}, {}, []

    def event_id(self, name):
        if name not in self.events:
            self.events[name] = len(self.events) + 1
            self.header.event_metadata[self.events[name]].id = self.events[name]
            self.header.event_metadata[self.events[name]].name = name
        return self.events[name]

    def stat_id(self, name):
        if name not in self.stats:
            self.stats[name] = len(self.stats) + 1
            self.header.stat_metadata[self.stats[name]].id = self.stats[name]
            self.header.stat_metadata[self.stats[name]].name = name
        return self.stats[name]

    def plane_stat(self, name, value, kind="int64_value"):
        stat = self.header.stats.add(metadata_id=self.stat_id(name))
        setattr(stat, kind, value)

    def add_line(self, line_id, name, chunks):
        header = schema.XLine(id=line_id, name=name, timestamp_ns=_LINE_BASE_NS).SerializeToString()
        self.lines.append(header + b"".join(chunks))

    def serialize(self):
        return self.header.SerializeToString() + b"".join(encode.len_prefixed(3, line) for line in self.lines)


def _events(meta_ids, start_ps, duration_ps, stats):
    """Serialized `events` fields of one line; `stats` holds Rows of already-encoded XStat fields."""
    offset = np.asarray(start_ps, dtype=np.int64) - _LINE_BASE_NS * 1000
    parts = [encode.varint_field(1, meta_ids), encode.varint_field(2, offset), encode.varint_field(3, duration_ps)]
    parts += [encode.message_field(4, stat) for stat in stats]
    return encode.message_field(4, encode.join_rows(*parts)).tobytes()


def _int_stat(stat_id, values):
    return encode.join_rows(encode.varint_field(1, np.full(len(values), stat_id)), encode.varint_field(4, values))


def _ref_stat(stat_id, refs):
    return encode.join_rows(encode.varint_field(1, np.full(len(refs), stat_id)), encode.varint_field(7, refs))


def _str_stat(stat_id, text, count):
    return encode.join_rows(
        encode.varint_field(1, np.full(count, stat_id)), encode.constant(encode.len_prefixed(5, text.encode()), count)
    )


def _program(kernels_per_step, rng):
    """One step's kernel sequence: family, variant and mean duration (us) of each kernel."""
    families = rng.integers(0, len(_KERNEL_FAMILIES), kernels_per_step)
    variants = rng.integers(1, 40, kernels_per_step)
    means = np.array([_KERNEL_FAMILIES[f][1] for f in families]) * rng.uniform(0.3, 2.0, kernels_per_step)
    return families, variants, means


def write_training_trace(path, *, gpus=8, steps=20, kernels_per_step=1000, seed=0):
    """Writes the scenario to `path` and returns its TraceSize (about 90 bytes per kernel and launch)."""
    rng = np.random.default_rng(seed)
    families, variants, means = _program(kernels_per_step, rng)
    nccl = np.zeros(kernels_per_step, dtype=bool)
    nccl[int(kernels_per_step * 0.96) :] = True  # the step ends with its gradient all-reduces
    host = _Plane(0, "/host:CPU")
    host_lines = {"python": [], "tf_data": [], **{g: [] for g in range(gpus)}}
    correlation = 1
    step_start = 1_000 * _PS_PER_US
    device_chunks = {
        g: {s: [] for s in (_COMPUTE_STREAM, _COPY_STREAM, _OUT_STREAM, _NCCL_STREAM)} for g in range(gpus)
    }
    device_planes = [_GpuPlane(g) for g in range(gpus)]
    host_events = 0
    for step in range(steps):
        wait_ps = int(rng.choice([200, 200, 200, 6_000]) * _PS_PER_US)
        step_end = step_start
        for g, plane in enumerate(device_planes):
            durations = (rng.lognormal(0.0, 0.5, kernels_per_step) * means * _PS_PER_US).astype(np.int64)
            launch_gap = (rng.uniform(4, 9, kernels_per_step) * _PS_PER_US).astype(np.int64)
            launch_start = step_start + wait_ps + 60 * _PS_PER_US + np.cumsum(launch_gap) - launch_gap
            launch_dur = (launch_gap * 0.6).astype(np.int64)
            ready = launch_start + launch_dur + 5 * _PS_PER_US
            gaps = (rng.exponential(2.0, kernels_per_step) * _PS_PER_US).astype(np.int64)
            before = np.cumsum(durations + gaps) - (durations + gaps)
            kernel_start = before + np.maximum.accumulate(ready - before)
            ids = np.arange(correlation, correlation + kernels_per_step + 2, dtype=np.int64)
            correlation += kernels_per_step + 2
            copy_start = step_start + wait_ps + 10 * _PS_PER_US
            plane.add_step(
                device_chunks[g],
                kernel_start,
                durations,
                ids,
                nccl,
                families,
                variants,
                copy_start,
                step_start,
                int(kernel_start[-1] + durations[-1]),
            )
            out_end = int(kernel_start[-1] + durations[-1]) + 40 * _PS_PER_US
            step_end = max(step_end, out_end)
            host_lines[g].append(
                _launches(host, g, plane, launch_start, launch_dur, ids, nccl, families, variants, copy_start)
            )
            host_events += kernels_per_step + 2
        host_lines["python"].append(
            _events(
                [host.event_id("train")],
                [step_start],
                [step_end - step_start],
                [_int_stat(host.stat_id("step_num"), [step]), _int_stat(host.stat_id("_r"), [1])],
            )
        )
        host_lines["tf_data"].append(
            _events([host.event_id("IteratorGetNextOp::DoCompute")], [step_start + 50 * _PS_PER_US], [wait_ps], [])
        )
        host_events += 2
        step_start = step_end + 100 * _PS_PER_US
    host.add_line(1001, "python", host_lines.pop("python"))
    host.add_line(1002, "tf_data_iterator_get_next", host_lines.pop("tf_data"))
    for g in range(gpus):
        host.add_line(1003 + g, f"tf_executor/gpu{g}", host_lines[g])
    planes = [host.serialize()]
    for g, plane in enumerate(device_planes):
        planes.append(plane.serialize(device_chunks[g]))
    env = _Plane(0, "Task Environment")
    env.plane_stat("profile_start_time", 1_796_000_000_000_000_000, "uint64_value")
    env.plane_stat("profile_stop_time", 1_796_000_000_000_000_000 + step_start // 1000, "uint64_value")
    planes.append(env.serialize())
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as handle:
        for plane in planes:
            handle.write(encode.len_prefixed(1, plane))
        handle.write(encode.len_prefixed(4, b"localhost"))
    return TraceSize(
        path=str(path), bytes=os.path.getsize(path), kernels=gpus * steps * kernels_per_step, host_events=host_events
    )


def _kernel_name(family, variant):
    return _NCCL_NAME if family < 0 else _KERNEL_FAMILIES[family][0].format(64 * variant)


def _launches(host, ordinal, plane, start, duration, ids, nccl, families, variants, copy_start):
    """The executor thread's launch calls: the H2D copy, every kernel, the D2H copy."""
    names = [_kernel_name(-1 if n else f, v) for n, f, v in zip(nccl, families, variants)]
    table = {name: host.event_id(name) for name in dict.fromkeys(names)}
    kernel_meta = np.array([table[name] for name in names], dtype=np.int64)
    meta = np.concatenate([[host.event_id("MemcpyH2D")], kernel_meta, [host.event_id("MemcpyD2H")]])
    starts = np.concatenate([[copy_start - 8 * _PS_PER_US], start, [start[-1] + 20 * _PS_PER_US]])
    durs = np.concatenate([[5 * _PS_PER_US], duration, [6 * _PS_PER_US]])
    count = len(meta)
    return _events(
        meta,
        starts,
        durs,
        [
            _int_stat(host.stat_id("correlation_id"), ids),
            _int_stat(host.stat_id("device_id"), np.full(count, ordinal)),
            _str_stat(host.stat_id("context_id"), f"$${ordinal + 1}", count),
        ],
    )


class _GpuPlane:
    """One `/device:GPU:N` plane with A100 capability stats."""

    def __init__(self, ordinal):
        self.ordinal = ordinal
        self.plane = _Plane(ordinal, f"/device:GPU:{ordinal}")
        for name, value in (
            ("clock_rate", 1_410_000),
            ("core_count", 108),
            ("memory_bandwidth", 2_039 * 10**9),
            ("memory_size", 80 * 2**30),
            ("compute_cap_major", 8),
            ("compute_cap_minor", 0),
        ):
            self.plane.plane_stat(name, value)
        self.plane.plane_stat("device_vendor", "Nvidia", "str_value")
        self.plane.plane_stat("gpu_device_name", "NVIDIA A100-SXM4-80GB", "str_value")
        self.stat = {
            name: self.plane.stat_id(name)
            for name in ("correlation_id", "context_id", "kernel_details", "tf_op", "memcpy_details")
        }

    def _details(self, family, variant):
        if family < 0:
            grid, block, regs = (8, 1, 1), (512, 1, 1), 96
        else:
            _, _, grid, block, regs = _KERNEL_FAMILIES[family]
            regs = min(255, regs // 2 + variant)
        return self.plane.stat_id(
            f"regs:{regs} static_shared:0 dynamic_shared:{variant * 1024 % 49152} "
            f"grid:{','.join(map(str, grid))} block:{','.join(map(str, block))} "
            f"occ_pct:{min(100, 2400 // regs) / 1.0}"
        )

    def add_step(self, chunks, start, durations, ids, nccl, families, variants, copy_start, step_start, end):
        plane = self.plane
        programs = [(-1 if n else int(f), int(v)) for n, f, v in zip(nccl, families, variants)]
        cache = {}
        for key in dict.fromkeys(programs):
            cache[key] = (
                plane.event_id(_kernel_name(*key)),
                self._details(*key),
                plane.stat_id(
                    f"model/layer_{key[1] % 24}/{'allreduce' if key[0] < 0 else 'dense'}/"
                    f"op_{key[0]}_{key[1]}:{'NcclAllReduce' if key[0] < 0 else 'MatMul'}"
                ),
            )
        meta, details, ops = (np.array([cache[k][i] for k in programs], dtype=np.int64) for i in range(3))
        for stream, chosen in ((_COMPUTE_STREAM, ~nccl), (_NCCL_STREAM, nccl)):
            count = int(chosen.sum())
            chunks[stream].append(
                _events(
                    meta[chosen],
                    start[chosen],
                    durations[chosen],
                    [
                        _int_stat(self.stat["correlation_id"], ids[1:-1][chosen]),
                        _str_stat(self.stat["context_id"], f"$${self.ordinal + 1}", count),
                        _ref_stat(self.stat["kernel_details"], details[chosen]),
                        _ref_stat(self.stat["tf_op"], ops[chosen]),
                    ],
                )
            )
        batch = plane.stat_id(f"kind_src:pageable kind_dst:device size:{16 << 20} dest:{self.ordinal} async:0")
        loss = plane.stat_id(f"kind_src:device kind_dst:pageable size:4 dest:{self.ordinal} async:0")
        for stream, name, at, dur, corr, details in (
            (_COPY_STREAM, "MemcpyH2D", copy_start, 1_400 * _PS_PER_US, ids[0], batch),
            (_OUT_STREAM, "MemcpyD2H", end + 25 * _PS_PER_US, 3 * _PS_PER_US, ids[-1], loss),
        ):
            chunks[stream].append(
                _events(
                    [plane.event_id(name)],
                    [at],
                    [dur],
                    [
                        _int_stat(self.stat["correlation_id"], [corr]),
                        _str_stat(self.stat["context_id"], f"$${self.ordinal + 1}", 1),
                        _ref_stat(self.stat["memcpy_details"], [details]),
                    ],
                )
            )

    def serialize(self, chunks):
        names = {
            _COMPUTE_STREAM: "Stream #7(Compute)",
            _COPY_STREAM: "Stream #9(MemcpyH2D)",
            _OUT_STREAM: "Stream #10(MemcpyD2H)",
            _NCCL_STREAM: "Stream #13(Compute)",
        }
        for stream in sorted(chunks):
            self.plane.add_line(stream, names[stream], chunks[stream])
        return self.plane.serialize()
