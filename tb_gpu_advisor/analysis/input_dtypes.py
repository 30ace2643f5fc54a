"""Image batches sent to the GPU as 32-bit numbers: host-to-device copies joined by size to the image-shaped 32-bit
parameters of the compiled programs (XLA HLO modules the trace carries)."""

from __future__ import annotations

import re
from dataclasses import dataclass


from tb_gpu_advisor.readers.hlo.modules import parse_module
from tb_gpu_advisor.readers.hlo.shapes import TUPLE, byte_size, type_name
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection


# 32-bit element types a pixel batch is commonly widened to.
_WIDE_TYPES = {"f32", "s32", "u32"}
_CHANNELS = {1, 3, 4}
MIN_IMAGE_SIDE = 16
# Host events that show 8-bit image data on the host: decoding, reading images, widening with astype.
_EIGHT_BIT_SOURCE = re.compile(
    r"Decode(Jpeg|Png|Image|Bmp|Gif|AndCropJpeg)|decode_(jpeg|png|image)|imread|"
    r"\bastype\b|:Cast$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class WideInput:
    """An image-shaped 32-bit program input and the host-to-device copies of exactly its size."""

    module: str  # "program <XLA program id>"
    parameter: str
    dtype: str
    shape: tuple
    bytes: int
    copies: int
    copy_ps: int
    spans: tuple  # ((start_ps, end_ps), ...) of those copies

    @property
    def saved_fraction(self) -> float:
        """The share of the bytes an 8-bit copy would not send."""
        return 1.0 - 8 / 32


def image_shape(dims: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """(batch, height, width, channels) of an NHWC or NCHW batch shape, or None."""
    if len(dims) != 4:
        return None
    batch, a, b, c = dims
    if c in _CHANNELS and min(a, b) >= MIN_IMAGE_SIDE:
        return batch, a, b, c
    if a in _CHANNELS and min(b, c) >= MIN_IMAGE_SIDE:
        return batch, b, c, a
    return None


def _entry_parameters(data):
    """[(parameter name, ShapeProto)] of a serialized HloProto's entry computation."""
    index = parse_module(data)
    if index is None:
        return []
    found = []
    for computation in index.computations.values():
        for instruction in computation.instructions:
            if instruction.opcode == "parameter" and instruction.shape.element_type != TUPLE:
                found.append((computation, instruction))
    entry = [(c, i) for c, i in found if c.name == "main" or c.name.startswith("main.")]
    return [(i.name, i.shape) for _, i in (entry or found)]


def wide_image_inputs(model):
    """WideInput per image-shaped 32-bit entry parameter whose byte size some host-to-device copy has."""
    if not model.hlo_protos:
        return ()
    copies = {}
    for gpu in model.gpus:
        activity = gpu.activity
        mask = (activity.kind == ActivityKind.MEMCPY) & (activity.copy_direction == int(CopyDirection.H2D))
        size_of = [copy.size_bytes for copy in activity.copies]
        for copy_id, start, end in zip(
            activity.copy_id[mask].tolist(), activity.start_ps[mask].tolist(), activity.end_ps[mask].tolist()
        ):
            copies.setdefault(size_of[copy_id], []).append((start, end))
    if not copies:
        return ()
    found, seen = [], set()
    for program_id, data in model.hlo_protos.items():
        for name, shape in _entry_parameters(data):
            dtype = type_name(shape.element_type)
            dims = tuple(int(d) for d in shape.dimensions)
            size = byte_size(shape)
            if dtype not in _WIDE_TYPES or image_shape(dims) is None or size not in copies or (size, dims) in seen:
                continue
            seen.add((size, dims))
            spans = tuple(sorted(copies[size]))
            found.append(
                WideInput(
                    module=f"program {program_id}",
                    parameter=name,
                    dtype=dtype,
                    shape=dims,
                    bytes=size,
                    copies=len(spans),
                    copy_ps=sum(end - start for start, end in spans),
                    spans=spans,
                )
            )
    found.sort(key=lambda item: (-item.copy_ps, item.parameter))
    return tuple(found)


def eight_bit_source_events(op_totals: dict[str, tuple[int, int]]) -> list:
    """Host event names that show 8-bit image data on the host (decoding, image reads, astype/Cast)."""
    return sorted(name for name in op_totals if _EIGHT_BIT_SOURCE.search(name))
