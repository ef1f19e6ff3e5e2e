"""Context managers and decorators: both sides recorded, also when the body raises (the
exception propagates and the scopes still nest), operator tensors set inside the body,
decorated functions and methods."""

from __future__ import annotations

from pathlib import Path

import pytest

import tpuprof
from conftest import convert, trace_events


class Boom(Exception):
    pass


def test_scopes_nest_and_survive_exceptions(tmp_path: Path):
    d = tpuprof.enable(mode=1)
    for i in range(2):
        with pytest.raises(Boom):
            with tpuprof.step("train", i):
                with tpuprof.activity("preprocess", step=i, meta="m"):
                    with tpuprof.range("inner", category="cpu"):
                        with tpuprof.runtime("sync"):
                            with tpuprof.op("Add", "add0"):
                                raise Boom()
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    assert s["overall_stats"]["steps"] == 2
    assert s["overall_stats"]["scopes_cut_short"] == 0
    evs = trace_events(tmp_path / "out")
    by_cat = {}
    for e in evs:
        by_cat.setdefault(e["cat"], []).append(e)
    assert {c: len(v) for c, v in by_cat.items()} == {
        "step": 2, "activity": 2, "range": 2, "runtime": 2, "op": 2}
    # each inner scope lies within its outer one
    order = ["step", "activity", "range", "runtime", "op"]
    for i in range(2):
        spans = [(by_cat[c][i]["ts"], by_cat[c][i]["ts"] + by_cat[c][i]["dur"]) for c in order]
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            assert a0 <= b0 and b1 <= a1 + 1e-3
    assert by_cat["op"][0]["args"]["step"] == 0 and by_cat["op"][1]["args"]["step"] == 1


def test_scope_objects_are_reusable_and_describe_themselves():
    s = tpuprof.activity("a", step=3)
    assert repr(s) == "tpuprof.activity('a', 3)" and s.kind == "activity" and s.op is None
    with s:
        with s:
            pass
    o = tpuprof.op("MatMul", "fc")
    assert o.kind == "op" and o.op.type == "MatMul" and repr(o).startswith("tpuprof.op(")
    with pytest.raises(AttributeError, match="only operator scopes"):
        s.outputs = []


def test_op_outputs_set_in_body(tmp_path: Path):
    np = pytest.importorskip("numpy")
    d = tpuprof.enable(mode=2)
    x = np.ones((2, 3), np.float32)
    with tpuprof.op("Relu", "relu1", inputs=[x], attrs={"inplace": True}) as o:
        y = np.maximum(x, 0)
        o.outputs = {"y": y}
        assert o.outputs == (("y", "fp32", (2, 3), 24),)
        assert o.inputs == ((None, "fp32", (2, 3), 24),)
        assert o.attrs == (("inplace", "true"),)
        with pytest.raises(TypeError, match="outputs: expected a tensor"):
            o.outputs = [object()]
        assert o.outputs == (("y", "fp32", (2, 3), 24),)  # unchanged by the failed set
    tpuprof.disable()
    convert(d, tmp_path / "out")
    a = trace_events(tmp_path / "out", "op")[0]["args"]
    assert a["output_names"] == "y" and a["output_shapes"] == "2x3"
    assert a["attr.inplace"] == "true" and a["bytes"] == 48


def test_decorators(tmp_path: Path):
    np = pytest.importorskip("numpy")

    @tpuprof.activity("load", step=-1)
    def load():
        return 1

    @tpuprof.op
    def attention(q, k, scale=1.0):
        return q @ k.T * scale, None

    @tpuprof.op("Gelu", "mlp.act")
    def gelu(x):
        return x

    @tpuprof.range("loop")
    def failing():
        raise Boom()

    class Model:
        @tpuprof.op
        def forward(self, x):
            return x + 1

    d = tpuprof.enable(mode=2)
    assert load() == 1 and load.__name__ == "load"
    q = np.ones((2, 4), np.float32)
    out, _ = attention(q, k=np.ones((3, 4), np.float32))
    assert out.shape == (2, 3)
    gelu(q)
    Model().forward(q)
    with pytest.raises(Boom):
        failing()
    with pytest.raises(Boom):
        with tpuprof.step("g", 0):
            tpuprof.op(lambda: (_ for _ in ()).throw(Boom()))()
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    assert s["overall_stats"]["scopes_cut_short"] == 0
    evs = trace_events(tmp_path / "out")
    assert [e["name"] for e in evs if e["cat"] == "activity"] == ["load"]
    ops = {e["name"]: e["args"] for e in evs if e["cat"] == "op"}
    att = ops[f"{__name__}.test_decorators.<locals>.attention"]
    assert att["op_type"] == "attention"
    assert att["input_shapes"] == "2x4;3x4" and att["output_shapes"] == "2x3"
    assert ops["mlp.act"]["op_type"] == "Gelu" and ops["mlp.act"]["input_shapes"] == "2x4"
    assert ops[f"{__name__}.test_decorators.<locals>.Model.forward"]["op_type"] == "forward"
    assert [e["name"] for e in evs if e["cat"] == "range"] == ["loop"]


def test_scope_decorates_only_functions():
    with pytest.raises(TypeError, match="decorates one function"):
        tpuprof.activity("a")(1)
    with pytest.raises(TypeError, match="decorates one function"):
        tpuprof.activity("a")(print, print)
