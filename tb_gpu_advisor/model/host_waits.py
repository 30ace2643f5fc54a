"""Host calls that block a thread until the device is done, by name: CUDA and HIP synchronization and blocking
copies, JAX's and PjRt's waits for a result, TensorFlow's waits on a stream. Their time is a wait on the device,
evidence about what was waited on, never host work.
"""

from __future__ import annotations

import re

# Runtime and driver API calls (Kineto `cuda_runtime`/`cuda_driver` events, XPlane driver-API events): the
# synchronize calls, and the copies with no `Async` in their name, which return once the copy is done.
_API_WAIT = re.compile(
    r"^(cu|cuda|hip)(Ctx|Device|Stream|Event)Synchroni[sz]e(_v2)?$|"
    r"^(cu|cuda|hip)Memcpy(_v2)?$|^cuMemcpy[DH]to[DH](_v2)?$|^hipMemcpy[DH]to[DH]$|"
    r"^hipMemcpyWithStream$|^(cu|cuda|hip)Memset(_v2)?$"
)
# JAX, PjRt and TensorFlow: a result read or awaited on the host (`np.asarray(jax.Array)` is JAX's event for a
# device array turned into a NumPy one, which waits for the computation and copies; `TFE_TensorHandleResolve` is
# TensorFlow's for an eager tensor read on the host, `loss.numpy()`, which waits for the op that makes it).
_FRAMEWORK_WAITS = (
    "block_until_ready",
    "BlockHostUntilReady",
    "BlockUntilReady",
    "np.asarray(jax.Array)",
    "TFE_TensorHandleResolve",
    "WaitUntilBufferReady",
    "BlockHostUntilDone",
    "PjRtFuture::Await",
    "Future::Await",
    "Wait for donation holds",
    "Wait for usage holds",
    "SynchronizeAllActivity",
)


def is_device_wait(name: str) -> bool:
    """True for a host event that blocks its thread on the device (module docstring)."""
    if _API_WAIT.match(name):
        return True
    if name.startswith("$"):  # a Python-tracer call: `$<file>:<line> <function>`
        return name.endswith(" block_until_ready")
    return any(wait in name for wait in _FRAMEWORK_WAITS)


# The device allocator's own calls: a free synchronizes the device, and both take milliseconds when the driver
# maps or unmaps memory. A caching allocator (PyTorch's, XLA's BFC) calls them only while it grows.
_ALLOCATOR = re.compile(r"^(cuda|hip)(Free|Malloc)(Host|Managed|Pitch|Async)?$|^cuMem(Free|Alloc)(Host|Async)?(_v2)?$")


def is_allocator_call(name: str) -> bool:
    """True for a CUDA/HIP runtime or driver call that allocates or frees device (or pinned host) memory."""
    return bool(_ALLOCATOR.match(name))
