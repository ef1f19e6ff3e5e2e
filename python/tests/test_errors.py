"""Bad arguments: each call raises TypeError or ValueError saying which argument is wrong,
and records nothing (the capture holds only the well-formed calls around them)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tpuprof
from conftest import convert, trace_events

OP = tpuprof.Op("T", "t")

BAD = [
    (lambda: tpuprof.activity_begin(1), TypeError, "activity name must be str, not int"),
    (lambda: tpuprof.activity_begin(""), ValueError, "activity name must not be empty"),
    (lambda: tpuprof.activity_begin("a\0b"), ValueError, "activity name contains a NUL"),
    (lambda: tpuprof.activity_begin("a", "1"), TypeError, "step must be int, not str"),
    (lambda: tpuprof.activity_begin("a", -2), ValueError, r"step must be in \[-1, "),
    (lambda: tpuprof.activity_begin("a", 2**70), ValueError, "step is out of range"),
    (lambda: tpuprof.activity_end("a", 1, 5), TypeError, "meta must be str or None, not int"),
    (lambda: tpuprof.activity_begin(), TypeError, "missing required argument 'name'"),
    (lambda: tpuprof.activity_begin("a", 1, "m", 4), TypeError, "at most 3 arguments"),
    (lambda: tpuprof.activity_begin("a", step=1, stp=2), TypeError, "unexpected keyword"),
    (lambda: tpuprof.activity_begin("a", 1, step=1), TypeError, "multiple values for argument"),
    (lambda: tpuprof.step_begin("g", -1), ValueError, r"step must be in \[0, "),
    (lambda: tpuprof.step_begin(None, 1), TypeError, "graph must be str, not NoneType"),
    (lambda: tpuprof.step_begin("g", 1, warmup="yes"), TypeError, "warmup must be bool"),
    (lambda: tpuprof.step_end("g"), TypeError, "missing required argument 'step'"),
    (lambda: tpuprof.op_begin("T"), TypeError, "op must be a tpuprof.Op, not str"),
    (lambda: tpuprof.op_end(OP, inputs=[1]), TypeError, "inputs: expected a tensor"),
    (lambda: tpuprof.op_end(OP, inputs=5), TypeError, "inputs must be a tensor, a sequence"),
    (lambda: tpuprof.op_end(OP, outputs={1: tpuprof.Tensor((1,))}), TypeError,
     "tensor names must be str"),
    (lambda: tpuprof.op_end(OP, inputs=[tpuprof.Tensor((2, -1))]), ValueError,
     r"shape dimension must be in \[0, "),
    (lambda: tpuprof.op_end(OP, inputs=[tpuprof.Tensor("2x3")]), TypeError,
     "shape dimension must be int, not str"),
    (lambda: tpuprof.op_end(OP, attrs=[("a", 1)]), TypeError, "attrs must be a dict"),
    (lambda: tpuprof.op_end(OP, attrs={1: 1}), TypeError, "attribute name must be str"),
    (lambda: tpuprof.op_end(OP, sparsity=1.5), ValueError, r"sparsity must be in \[0, 1\]"),
    (lambda: tpuprof.op_end(OP, bytes=-1), ValueError, "bytes must be in"),
    (lambda: tpuprof.op_end(OP, flops=1.5), TypeError, "flops must be int, not float"),
    (lambda: tpuprof.op_end(OP, weight=[tpuprof.Tensor((1,)), tpuprof.Tensor((2,))]),
     ValueError, "weight must be one tensor"),
    (lambda: tpuprof.Op(""), ValueError, "operator type must not be empty"),
    (lambda: tpuprof.Op("T", 3), TypeError, "operator name must be str or None"),
    (lambda: tpuprof.op("T", inputs=[object()]), TypeError, "inputs: expected a tensor"),
    (lambda: tpuprof.op(5), TypeError, "operator type must be str"),
    (lambda: tpuprof.runtime_begin(b"x"), TypeError, "runtime call name must be str, not bytes"),
    (lambda: tpuprof.counter("c", "1"), TypeError, "counter value must be a number, not str"),
    (lambda: tpuprof.counter("", 1), ValueError, "counter name must not be empty"),
    (lambda: tpuprof.mark("m", color=(1, 2)), ValueError, r"color must be an \(r, g, b\)"),
    (lambda: tpuprof.mark("m", color=(1, 2, 256)), ValueError, "color component must be in"),
    (lambda: tpuprof.mark("m", color=0x1000000), ValueError, "color must be in"),
    (lambda: tpuprof.range_begin("r", category=3), TypeError, "category must be str or None"),
    (lambda: tpuprof.range_end(None), TypeError, "range name must be str"),
    (lambda: tpuprof.async_begin("a"), TypeError, "missing required argument 'id'"),
    (lambda: tpuprof.async_end("a", "1"), TypeError, "id must be int"),
    (lambda: tpuprof.thread_name(7), TypeError, "thread name must be str"),
    (lambda: tpuprof.meta("k", None), TypeError, "meta value must be str"),
    (lambda: tpuprof.activity("a", step="x"), TypeError, "step must be int, not str"),
    (lambda: tpuprof.step("g"), TypeError, "missing required argument 'step'"),
    (lambda: tpuprof.range("r", color="red"), TypeError, "color must be int"),
    (lambda: tpuprof.runtime(""), ValueError, "runtime call name must not be empty"),
]


@pytest.mark.parametrize("call, exc, msg", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_argument_messages(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_bad_calls_record_nothing(tmp_path: Path):
    d = tpuprof.enable(mode=2)
    with tpuprof.step("g", 0):
        for call, exc, _ in BAD:
            with pytest.raises(exc):
                call()
        tpuprof.op_begin(OP)
        with pytest.raises(TypeError):
            tpuprof.op_end(OP, inputs=[1])  # nothing recorded: the operator is still open
        tpuprof.op_end(OP, inputs=[tpuprof.Tensor((3,), "fp32")])
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    # step begin/end and one operator begin/end (+ its tensor record)
    assert s["overall_stats"]["scopes_cut_short"] == 0
    evs = trace_events(tmp_path / "out")
    assert sorted(e["cat"] for e in evs) == ["op", "step"]
    assert evs[-1]["args"]["input_shapes"] == "3"
    assert s["notes"] == []
