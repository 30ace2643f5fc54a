"""Reads one profile file into the trace model, whichever its format: XPlane protobuf or PyTorch (Kineto) JSON."""

from __future__ import annotations

import logging
from os import PathLike
from typing import Any

from tb_gpu_advisor.files.names import is_kineto_trace
from tb_gpu_advisor.files.regular import FileChanged
from tb_gpu_advisor.model.trace import TraceModel
from tb_gpu_advisor.readers.progress import Progress
from tb_gpu_advisor.readers.xplane.build import build_model
from tb_gpu_advisor.readers.xplane.reader import read_space

logger = logging.getLogger(__name__)


def load_model(
    path: str | PathLike[str], max_bytes: int | None = None, reference: bool = False, progress: Progress | None = None
) -> TraceModel:
    """Reads and models one `.xplane.pb` or PyTorch `.pt.trace.json[.gz]` file; raises ProfileError for bad input.

    `progress(done_bytes, total_bytes)`, if given, is called after each plane. Every plane is read from one
    version of the file; a file that changes while it is read is read once more, then FileChanged.
    """
    kwargs: dict[str, Any] = {} if max_bytes is None else {"max_bytes": max_bytes}
    if is_kineto_trace(path):
        from tb_gpu_advisor.readers.kineto.build import load_kineto_model

        return load_kineto_model(path, **kwargs)
    try:
        return build_model(read_space(path, **kwargs), reference=reference, progress=progress)
    except FileChanged:  # replaced or rewritten while read: once more, from the version now there
        logger.info("%s changed while it was read; reading it again", path)
    return build_model(read_space(path, **kwargs), reference=reference, progress=progress)
