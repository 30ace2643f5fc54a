"""What a Kineto host event's category and name make of it (a step marker, a launch, a wait, an op with a cost
from its shapes, a tagged span), worked out once per distinct (category, name)."""

from __future__ import annotations

import re
from typing import NamedTuple

from tb_gpu_advisor.model.collective_names import is_collective_host_op
from tb_gpu_advisor.model.host import event_tag
from tb_gpu_advisor.model.host_waits import is_allocator_call, is_device_wait
from tb_gpu_advisor.readers.kineto.op_work import COSTED_BY_SHAPE
from tb_gpu_advisor.readers.kineto.python_calls import python_call_name

LAUNCH_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})
_STEP = re.compile(r"^ProfilerStep#(\d+)$")
_INPUT_WAIT_PREFIX = "enumerate(DataLoader)"
_ZERO_GRAD_PREFIX = "Optimizer.zero_grad"
_OPTIMIZER_STEP_PREFIX = "Optimizer.step#"  # analysis.optimizer_loop
_FILL_OPS = {"aten::zero_", "aten::fill_"}
# The op that copies between host and device (under aten::to / .cuda()): a sync inside it is the copy's own.
_COPY_OPS = {"aten::copy_"}
# PyTorch's loss operators, whose input and target `Input Dims` hold the rows a step scores
# (analysis.examples_per_step); a composite loss (cross entropy) encloses the ones it calls.
LOSS_OPS = frozenset(
    {
        "aten::cross_entropy_loss",
        "aten::nll_loss",
        "aten::nll_loss_nd",
        "aten::nll_loss2d",
        "aten::mse_loss",
        "aten::l1_loss",
        "aten::smooth_l1_loss",
        "aten::huber_loss",
        "aten::binary_cross_entropy",
        "aten::binary_cross_entropy_with_logits",
        "aten::kl_div",
        "aten::soft_margin_loss",
        "aten::multilabel_margin_loss",
        "aten::multi_margin_loss",
        "aten::hinge_embedding_loss",
        "aten::poisson_nll_loss",
        "aten::cosine_embedding_loss",
        "aten::margin_ranking_loss",
    }
)
# Host calls that block until the device is done (the runtime API and HIP spellings).
_SYNC_CALLS = re.compile(
    r"^(cuda|hip)(Device|Stream|Event|Ctx)Synchroni[sz]e$|"
    r"^(cuda|hip)Memcpy$"
)
# One-time setup calls (context, streams, module loading, first allocations); a long one marks warm-up.
_INIT_CALLS = re.compile(
    r"^(cu|cuda|hip)(Free|Malloc\w*|HostAlloc|HostRegister|StreamCreate\w*|"
    r"DeviceGetStreamPriorityRange|ModuleLoad\w*|LibraryLoad\w*|CtxCreate\w*|"
    r"DevicePrimaryCtxRetain|SetDevice|GetDeviceProperties\w*|FuncGetAttributes|"
    r"EventCreate\w*)$"
)


class HostName(NamedTuple):
    step: str | None  # the digits of a ProfilerStep#N marker's number
    python: bool  # a Python-stack event (python_function)
    launch: bool  # a runtime or driver call (may launch device work)
    device_wait: bool
    allocator: bool
    sync: bool
    init: bool  # a one-time setup call (counted when long)
    span: str | None  # "input_wait", "zero_grad", "optimizer_step", "fill" or "copy_op"
    collective: bool  # may issue a collective (kineto.collectives)
    cpu_op: bool
    costed: bool  # an op whose FLOPs come from its shapes (kineto.op_work)
    loss: bool
    tag: str | None  # model.host.event_tag


def host_name(cat: str | None, name: str) -> HostName:
    """The HostName of a host event of category `cat` named `name`."""
    step = _STEP.match(name)
    launch = cat in LAUNCH_CATEGORIES
    span = None
    if not launch:
        if name.startswith(_INPUT_WAIT_PREFIX):
            span = "input_wait"
        elif name.startswith(_ZERO_GRAD_PREFIX):
            span = "zero_grad"
        elif name.startswith(_OPTIMIZER_STEP_PREFIX):
            span = "optimizer_step"
        elif name in _FILL_OPS:
            span = "fill"
        elif name in _COPY_OPS:
            span = "copy_op"
    call = python_call_name(name) if cat == "python_function" else None
    return HostName(
        step=step.group(1) if step else None,
        python=cat == "python_function",
        launch=launch,
        device_wait=launch and is_device_wait(name),
        allocator=launch and is_allocator_call(name),
        sync=launch and bool(_SYNC_CALLS.match(name)),
        init=launch and bool(_INIT_CALLS.match(name)),
        span=span,
        collective=not launch and is_collective_host_op(name),
        cpu_op=cat == "cpu_op",
        costed=name in COSTED_BY_SHAPE,
        loss=name in LOSS_OPS,
        tag=None if launch else event_tag(call if call is not None else name),
    )
