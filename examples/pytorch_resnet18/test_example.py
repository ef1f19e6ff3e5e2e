"""The ResNet-18 example end to end (ctest python_torch): two training steps of batch 2
produce summary.json / summary.md with the activities and the operators, ops.csv with the
aten operators' shapes, result.html, perfetto.pftrace, trace.json and the per-step files."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch

HERE = Path(__file__).resolve().parent

try:
    import torch  # noqa: F401
    import torchvision  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"\nSKIPPED: the ResNet-18 example needs python3-torch and python3-torchvision ({e})\n",
          flush=True)
    pytest.skip(f"torch / torchvision not installed: {e}", allow_module_level=True)


def test_resnet18_example(tmp_path: Path):
    p = subprocess.run([sys.executable, str(HERE / "train.py"), "--steps", "2", "--batch", "2",
                        "--out", "prof"], cwd=tmp_path, env=dict(os.environ), text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    out = tmp_path / "prof"
    for f in ("summary.json", "summary.md", "ops.csv", "result.html", "perfetto.pftrace",
              "trace.json", "timeline/resnet18_train_step_0", "timeline/resnet18_train_step_1",
              "step_stats/resnet18_train_step_1"):
        assert (out / f).is_file() and (out / f).stat().st_size > 0, f
    s = json.loads((out / "summary.json").read_text())
    assert s["overall_stats"]["steps"] == 2 and s["overall_stats"]["batch_size"] == 2
    assert s["overall_stats"]["scopes_cut_short"] == 0
    assert s["app_stats"]["1"]["data preparation"]["meta"] == "batch 2"
    step1 = s["op_stats"]["resnet18_train"]["1"]["localhost"]["CPU"]
    conv1 = step1["conv1/aten::convolution"]
    assert conv1["output"]["0"] == {"name": "", "shape": [2, 64, 112, 112], "type": "fp32"}
    assert "layer4.1.conv2.backward/aten::convolution_backward" in step1
    ranges = {(r["kind"], r["name"]) for r in s["range_stats"]}
    assert ("range", "layer1.0.conv1") in ranges and ("range", "SGD.step") in ranges
    assert ("async", "layer1.0.conv1.backward") in ranges
    with open(out / "ops.csv", newline="") as f:
        rows = {r[2]: r for r in csv.reader(f) if len(r) > 8}
    assert rows["conv1/aten::convolution"][4] == "2x3x224x224;64x3x7x7"
    assert rows["fc/aten::addmm"][7] == "2x10"
    md = (out / "summary.md").read_text()
    assert "aten::convolution" in md and "data preparation" in md
    tl = json.loads((out / "timeline" / "resnet18_train_step_1").read_text())["traceEvents"]
    assert sum(1 for e in tl if e.get("cat") == "Op") > 200
