"""Captures PyTorch problem/fix pairs on a GPU with torch.profiler and measures each run's step time without the
profiler, so that a predicted speedup can be checked against the fix's real one (held-out H200 runs, issue 35).

    python3 scripts/h200_torch_capture.py OUT_DIR [--size gpu|tiny] [--only NAME ...]

Writes OUT_DIR/<run>/<worker>.<ts>.pt.trace.json.gz per run and OUT_DIR/capture.json (versions, each run's
profiled and unprofiled mean step time, which run is the fix of which). `--size tiny` runs on the CPU for a dry run.
"""

import argparse
import gc
import json
import os
import platform
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PROFILE_SCHEDULE = dict(wait=2, warmup=2, active=8, repeat=1)
TIMED_STEPS = 20
SIZES = {
    "gpu": dict(
        batch=16,
        seq=1024,
        d_model=2048,
        heads=16,
        ffn=8192,
        layers=2,
        attn_seq=2048,
        attn_batch=8,
        small_layers=200,
        small_width=256,
        copy_mib=256,
        loader_ms=5,
        churn_mib=512,
    ),
    "tiny": dict(
        batch=2,
        seq=16,
        d_model=32,
        heads=4,
        ffn=64,
        layers=1,
        attn_seq=32,
        attn_batch=2,
        small_layers=8,
        small_width=16,
        copy_mib=1,
        loader_ms=2,
        churn_mib=1,
    ),
}


class Block(nn.Module):
    """A pre-norm transformer block whose attention is either fused (SDPA) or written out (bmm, softmax, bmm)."""

    def __init__(self, d_model, heads, ffn, fused):
        super().__init__()
        self.heads, self.fused = heads, fused
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv, self.out = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
        self.up, self.down = nn.Linear(d_model, ffn), nn.Linear(ffn, d_model)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, d // self.heads).transpose(1, 3).unbind(2)
        if self.fused:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            a = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        x = x + self.out(a.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def transformer(z, fused=True):
    return nn.Sequential(
        *[Block(z["d_model"], z["heads"], z["ffn"], fused) for _ in range(z["layers"])],
        nn.Linear(z["d_model"], z["d_model"]),
    )


def make_runs(z, dev):
    """name -> (fix_of, factory); a factory returns a step function (no argument) that runs one training step."""

    def lm(dtype_mode, fused_attn=True, seq=None, batch=None):
        def factory():
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            model = transformer(z, fused_attn).to(dev)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=dev.type == "cuda")
            x = torch.randn(batch or z["batch"], seq or z["seq"], z["d_model"], device=dev)

            def step():
                with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dtype_mode == "bf16"):
                    loss = model(x).float().square().mean()
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)

            return step

        return factory

    def many_params(optimizer_kwargs):
        def factory():
            w = z["small_width"]
            model = nn.Sequential(*[nn.Linear(w, w) for _ in range(z["small_layers"])]).to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=1e-4, **optimizer_kwargs)
            x = torch.randn(64, w, device=dev)

            def step():
                model(x).square().mean().backward()
                opt.step()
                opt.zero_grad(set_to_none=True)

            return step

        return factory

    def churn(empty_cache):
        def factory():
            model = transformer(dict(z, layers=1)).to(dev)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=dev.type == "cuda")
            x = torch.randn(z["batch"], z["seq"], z["d_model"], device=dev)
            n = z["churn_mib"] * 2**20 // 4

            def step():
                with torch.autocast(dev.type, dtype=torch.bfloat16):
                    scratch = torch.empty(n, device=dev).normal_()
                    loss = model(x).float().square().mean() + scratch[:1].sum()
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                del scratch
                if empty_cache and dev.type == "cuda":
                    torch.cuda.empty_cache()

            return step

        return factory

    def loader(workers):
        def factory():
            model = transformer(dict(z, layers=1)).to(dev)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=dev.type == "cuda")
            shape = (z["batch"] // 2, z["seq"] // 2, z["d_model"])

            class Slow(torch.utils.data.Dataset):
                def __len__(self):
                    return 10**6

                def __getitem__(self, i):
                    time.sleep(z["loader_ms"] / 1000)  # decoding / augmenting one sample on the CPU
                    return torch.ones(*shape[1:])

            data = torch.utils.data.DataLoader(
                Slow(),
                batch_size=shape[0],
                num_workers=workers,
                pin_memory=workers > 0 and dev.type == "cuda",
                persistent_workers=workers > 0,
                prefetch_factor=4 if workers else None,
            )
            it = iter(data)

            def step():
                x = next(it).to(dev, non_blocking=workers > 0)
                with torch.autocast(dev.type, dtype=torch.bfloat16):
                    loss = model(x).float().square().mean()
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)

            return step

        return factory

    def copy(pinned):
        def factory():
            model = transformer(dict(z, layers=1)).to(dev)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=dev.type == "cuda")
            n = z["copy_mib"] * 2**20 // 4
            host = torch.randn(n, pin_memory=pinned and dev.type == "cuda")
            x = torch.randn(z["batch"], z["seq"], z["d_model"], device=dev)

            def step():
                table = host.to(dev, non_blocking=pinned)
                with torch.autocast(dev.type, dtype=torch.bfloat16):
                    loss = model(x).float().square().mean() + table[:1].sum()
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)

            return step

        return factory

    return {
        "precision_fp32": ("", lm("fp32")),
        "precision_bf16": ("precision_fp32", lm("bf16")),
        "attention_unfused": ("", lm("bf16", fused_attn=False, seq=z["attn_seq"], batch=z["attn_batch"])),
        "attention_sdpa": ("attention_unfused", lm("bf16", seq=z["attn_seq"], batch=z["attn_batch"])),
        "optimizer_per_tensor": ("", many_params(dict(foreach=False))),
        "optimizer_fused": (
            "optimizer_per_tensor",
            many_params(dict(fused=dev.type == "cuda", foreach=None if dev.type == "cuda" else True)),
        ),
        "allocator_churn": ("", churn(True)),
        "allocator_cached": ("allocator_churn", churn(False)),
        "input_inline_loader": ("", loader(0)),
        "input_worker_loader": ("input_inline_loader", loader(8)),
        "transfer_pageable": ("", copy(False)),
        "transfer_pinned": ("transfer_pageable", copy(True)),
    }


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def timed(step, dev, steps):
    sync(dev)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    sync(dev)
    return (time.perf_counter() - start) * 1000 / steps


def capture(name, factory, out, dev):
    step = factory()
    for _ in range(5):
        step()
    unprofiled = timed(step, dev, TIMED_STEPS)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if dev.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    folder = os.path.join(out, name)
    total = sum(PROFILE_SCHEDULE[k] for k in ("wait", "warmup", "active"))
    sync(dev)
    with torch.profiler.profile(
        activities=activities,
        schedule=torch.profiler.schedule(**PROFILE_SCHEDULE),
        on_trace_ready=torch.profiler.tensorboard_trace_handler(folder, worker_name="h200", use_gzip=True),
        record_shapes=True,
        with_flops=True,
    ) as prof:
        start = None
        for i in range(total):
            if i == total - PROFILE_SCHEDULE["active"]:
                sync(dev)
                start = time.perf_counter()
            step()
            prof.step()
        sync(dev)
        profiled = (time.perf_counter() - start) * 1000 / PROFILE_SCHEDULE["active"]
    files = sorted(f for f in os.listdir(folder) if f.endswith(".pt.trace.json.gz"))
    return {
        "step_ms_unprofiled": round(unprofiled, 3),
        "step_ms_profiled": round(profiled, 3),
        "files": files,
        "bytes": sum(os.path.getsize(os.path.join(folder, f)) for f in files),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--size", choices=sorted(SIZES), default="gpu")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--budget-s", type=float, default=400, help="start no run after this many seconds")
    args = parser.parse_args()
    dev = torch.device("cuda" if args.size == "gpu" else "cpu")
    begun = time.time()
    result = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu",
        "size": args.size,
        "schedule": PROFILE_SCHEDULE,
        "timed_steps": TIMED_STEPS,
        "runs": {},
        "failed": {},
    }
    for name, (fix_of, factory) in make_runs(SIZES[args.size], dev).items():
        if args.only and name not in args.only:
            continue
        if time.time() - begun > args.budget_s:
            result["failed"][name] = "skipped: budget spent"
            continue
        try:
            result["runs"][name] = dict(fix_of=fix_of, **capture(name, factory, args.out, dev))
            print(name, result["runs"][name], flush=True)
        except Exception as error:  # one failed run must not lose the others
            result["failed"][name] = f"{type(error).__name__}: {error}"
            print(name, "FAILED", error, flush=True)
        gc.collect()
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    result["seconds"] = round(time.time() - begun, 1)
    with open(os.path.join(args.out, "capture.json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0 if result["runs"] else 1


if __name__ == "__main__":
    sys.exit(main())
