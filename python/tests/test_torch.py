"""tpuprof.torch on small CPU models (Debian's python3-torch): every module's forward and
backward, every aten operator (forward, backward, optimizer) with shapes, dtypes, bytes and
attributes, steps from the loop, exceptions inside a step, and hooks removed by stop()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tpuprof
from conftest import convert, trace_events

pytestmark = pytest.mark.torch

try:
    import torch
    import tpuprof.torch as tt
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"\nSKIPPED: the PyTorch tests need python3-torch ({e})\n", flush=True)
    pytest.skip(f"torch is not installed: {e}", allow_module_level=True)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.act = torch.nn.ReLU(inplace=True)
        self.fc = torch.nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        return self.fc(torch.flatten(self.act(self.conv(x)), 1))


def _train(prof, model, opt, steps=2, fail_at=None):
    x, y = torch.randn(2, 3, 8, 8), torch.tensor([1, 3])
    for i in range(steps):
        with prof.step(i):
            opt.zero_grad()
            out = model(x)
            if i == fail_at:
                raise RuntimeError("boom")
            torch.nn.functional.cross_entropy(out, y).backward()
            opt.step()


def _setup():
    torch.manual_seed(0)
    model = Net()
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def test_modules_ops_backward_optimizer(tmp_path: Path):
    model, opt = _setup()
    d = tpuprof.enable(mode=2)
    with tt.profile(model, opt, graph="tiny") as prof:
        _train(prof, model, opt)
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    o = s["overall_stats"]
    assert o["steps"] == 2 and o["scopes_cut_short"] == 0 and o["ranges_cut_short"] == 0
    ranges = {(r["kind"], r["name"], r["category"]): r["count"] for r in s["range_stats"]}
    for m in ("Net", "conv", "act", "fc"):
        assert ranges[("range", m, "module")] == 2, m
        assert ranges[("async", m + ".backward", "module.backward")] == 2, m
    assert ranges[("range", "SGD.step", "optimizer")] == 2
    assert ranges[("range", "SGD.zero_grad", "optimizer")] == 2
    ops = {e["name"]: e["args"] for e in trace_events(tmp_path / "out", "op")}
    conv = ops["conv/aten::convolution"]
    assert conv["op_type"] == "aten::convolution"
    assert conv["input_shapes"] == "2x3x8x8;4x3x3x3;4" and conv["output_shapes"] == "2x4x4x4"
    assert conv["input_dtypes"] == "fp32;fp32;fp32"
    assert conv["attr.stride"] == "[2,2]" and conv["attr.padding"] == "[1,1]"
    assert conv["bytes"] == 4 * (2 * 3 * 64 + 4 * 27 + 4 + 2 * 4 * 16)
    assert ops["fc/aten::addmm"]["output_shapes"] == "2x5"
    assert "conv.backward/aten::convolution_backward" in ops
    assert "fc.backward/aten::mm" in ops
    assert any(n.startswith("SGD.step/aten::add_") for n in ops)
    assert "aten::nll_loss_forward" in ops  # outside any module
    # the operators of step 1 carry its index
    tiny = s["op_stats"]["tiny"]
    assert set(tiny) == {"0", "1"}
    assert tiny["1"]["localhost"]["CPU"]["conv/aten::convolution"]["count"] == 1


def test_mode1_names_no_tensors_and_ops_off(tmp_path: Path):
    model, opt = _setup()
    d = tpuprof.enable(mode=1)
    with tt.profile(model, opt, backward=False) as prof:
        _train(prof, model, opt, steps=1)
    with tt.profile(model, ops=False) as prof:
        model(torch.randn(1, 3, 8, 8))
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    ops = trace_events(tmp_path / "out", "op")
    assert ops and all("input_shapes" not in e["args"] for e in ops)
    kinds = {r["kind"] for r in s["range_stats"]}
    assert kinds == {"range"}  # no backward async ranges
    # the second profile: module ranges only, no operators
    assert all(e["ts"] < max(r["ts"] for r in trace_events(tmp_path / "out", "range"))
               for e in ops)


def test_exception_in_step_unwinds(tmp_path: Path):
    model, opt = _setup()
    d = tpuprof.enable(mode=1)
    with tt.profile(model, opt) as prof:
        with pytest.raises(RuntimeError, match="boom"):
            _train(prof, model, opt, steps=2, fail_at=1)

        def bad_forward(x):
            raise ValueError("bad input")

        model.fc.forward = bad_forward
        with pytest.raises(ValueError):
            with prof.step(5):
                model(torch.randn(2, 3, 8, 8))
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    assert s["overall_stats"]["scopes_cut_short"] == 0
    assert s["overall_stats"]["ranges_cut_short"] == 0
    assert [st["step"] for st in s["steps"]] == [0, 1, 5]


def test_stop_removes_hooks_and_capture_off_records_nothing(tmp_path: Path):
    model, opt = _setup()
    prof = tt.profile(model, opt)
    assert "step" in vars(opt)
    _train(prof, model, opt, steps=1)  # capture off: runs, records nothing
    prof.stop()
    assert "step" not in vars(opt) and "zero_grad" not in vars(opt)
    assert not model.conv._forward_pre_hooks and not model.conv._forward_hooks
    d = tpuprof.enable(mode=1)
    model(torch.randn(1, 3, 8, 8))
    tpuprof.disable()
    convert(d, tmp_path / "out")
    assert trace_events(tmp_path / "out") == []
    assert [p for p in tmp_path.iterdir() if p.name.startswith("tpuprof_data")] == [d]


def test_torch_tensors_in_the_core_api(tmp_path: Path):
    d = tpuprof.enable(mode=2)
    x = torch.ones(3, 4, dtype=torch.float16)
    with tpuprof.op("Cast", "cast", inputs=[x]) as o:
        o.outputs = [x.to(torch.bfloat16), torch.zeros(2, dtype=torch.int64)]
    tpuprof.disable()
    convert(d, tmp_path / "out")
    a = trace_events(tmp_path / "out", "op")[0]["args"]
    assert a["input_dtypes"] == "fp16" and a["output_dtypes"] == "bf16;int64"
    assert a["output_shapes"] == "3x4;2" and a["bytes"] == 24 + 24 + 16


def test_bad_arguments():
    with pytest.raises(TypeError, match="model must be a torch.nn.Module, not str"):
        tt.profile("model")
    with pytest.raises(TypeError, match="optimizer must have a step"):
        tt.profile(None, object())
    with pytest.raises(ValueError, match="graph must be a non-empty str"):
        tt.profile(None, graph="")
