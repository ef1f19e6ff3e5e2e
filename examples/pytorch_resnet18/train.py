#!/usr/bin/env python3
"""A few training steps of torchvision's ResNet-18 on random data (random weights, nothing
downloaded), profiled with tpuprof: activities for data preparation, one step per
iteration, every module (forward and backward), every aten operator and the optimizer step
through tpuprof.torch, then every report written by tpuprof.finalize.

    PYTHONPATH=build/python python3 examples/pytorch_resnet18/train.py --out profile
    TPUPROF=2 PYTHONPATH=build/python python3 examples/pytorch_resnet18/train.py  # same

Options: --steps N (default 5, the first a warm-up), --batch B (8), --image S (224),
--mode 0|1|2 (2: tensors too; ignored when TPUPROF is set), --out DIR (profile),
--no-profile (the same loop without tpuprof.torch: the baseline of the overhead bench).
"""

from __future__ import annotations

import argparse
import sys
import time

import torch
import torchvision

import tpuprof
import tpuprof.torch


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--mode", type=int, default=2, choices=(0, 1, 2))
    ap.add_argument("--out", default="profile")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    return ap.parse_args()


def main() -> int:
    a = parse()
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)  # random weights: no download
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    profiling = not a.no_profile
    if profiling:
        if not tpuprof.active():  # TPUPROF=N already started a session
            tpuprof.enable(mode=a.mode)
        tpuprof.meta("batch_size", str(a.batch))
        tpuprof.meta("model", "torchvision resnet18")
        prof = tpuprof.torch.profile(model, opt, graph="resnet18_train")
        step = prof.step
    else:
        def step(i: int, warmup: bool = False):
            return tpuprof.step("resnet18_train", i, warmup)  # capture off: a no-op
    times = []
    for i in range(a.steps):
        t0 = time.perf_counter()
        with step(i, warmup=(i == 0)):
            with tpuprof.activity("data preparation", step=i, meta=f"batch {a.batch}"):
                x = torch.randn(a.batch, 3, a.image, a.image)
                y = torch.randint(0, 10, (a.batch,))
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            with tpuprof.activity("logging", step=i):
                tpuprof.counter("loss", float(loss))
        times.append(time.perf_counter() - t0)
        if not a.quiet:
            print(f"step {i}: loss {float(loss):.4f}, {times[-1] * 1000:.1f} ms", flush=True)
    if profiling:
        prof.stop()
        report = tpuprof.finalize(a.out, args=["--disable_doc"] if a.quiet else [])
        if not a.quiet:
            print(f"reports in {report.dir}/ (dump {report.dump}):")
            for f in report.files:
                print("  " + str(f))
    # For the bench: the steps after the warm-up, one per line.
    if a.quiet:
        for t in times[1:]:
            print(f"step_s {t:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
