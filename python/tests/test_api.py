"""Every call of the tpuprof package against what the converter reads back: sessions,
activities, steps, operators with tensors and attributes, runtime calls, counters, marks,
ranges, async ranges, thread names, metadata, the device index, flush, and modes 0-2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tpuprof
from conftest import convert, dumps_in, trace_events


def test_version():
    assert tpuprof.version() == tpuprof.__version__
    assert tpuprof.version().count(".") == 2


def test_enable_disable_paths(tmp_path: Path):
    assert not tpuprof.active() and tpuprof.mode() == -1
    d = tpuprof.enable(mode=1)
    assert tpuprof.active() and tpuprof.mode() == 1
    assert d.is_dir() and d.parent.resolve() == tmp_path.resolve()
    assert d.name.startswith("tpuprof_data_dev0-") and d.name.endswith(f".{os.getpid()}")
    assert tpuprof.session_dir() == d
    assert tpuprof.disable() == d
    assert (d / "capture.tpp").is_file() and not (d / "session.tpc").exists()
    assert tpuprof.session_dir() == d  # the latest session's, after it ended
    assert not tpuprof.active()


def test_enable_twice_and_disable_when_off():
    tpuprof.enable()
    with pytest.raises(tpuprof.BusyError, match="already active"):
        tpuprof.enable()
    tpuprof.disable()
    with pytest.raises(tpuprof.NotActiveError, match="no capture session"):
        tpuprof.disable()
    with pytest.raises(tpuprof.NotActiveError):
        tpuprof.flush()
    assert issubclass(tpuprof.CaptureIOError, OSError)
    assert issubclass(tpuprof.BusyError, tpuprof.TpuprofError)


@pytest.mark.parametrize("kw, exc, msg", [
    ({"mode": 3}, ValueError, r"mode must be in \[0, 2\], got 3"),
    ({"mode": -1}, ValueError, "mode must be"),
    ({"mode": "1"}, TypeError, "mode must be int, not str"),
    ({"mode": 1.0}, TypeError, "mode must be int, not float"),
    ({"max_records": -5}, ValueError, "max_records must be in"),
    ({"max_records": 2**40}, ValueError, "max_records must be in"),
    ({"records": 1}, TypeError, "unexpected keyword argument 'records'"),
])
def test_enable_bad_arguments(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        tpuprof.enable(**kw)
    assert not tpuprof.active()


def test_enable_unwritable_dir(tmp_path: Path):
    r = pytest.importorskip("conftest").run_py(
        "import tpuprof\n"
        "try:\n    tpuprof.enable()\nexcept tpuprof.CaptureIOError as e:\n    print('EIO', e)\n",
        env={"TPUPROF_DIR": "/proc/no/such/dir"})
    assert r.stdout.startswith("EIO enable: the dump directory")


def test_activities_steps_and_ops(tmp_path: Path):
    np = pytest.importorskip("numpy")
    d = tpuprof.enable(mode=2)
    desc = tpuprof.Op("MatMul", "fc1")
    for i in range(3):
        tpuprof.step_begin("train", i, warmup=(i == 0))
        tpuprof.activity_begin("preprocess", i, "batch of 4")
        x = np.ones((4, 8), np.float32)
        tpuprof.activity_end("preprocess", i, "batch of 4")
        tpuprof.op_begin(desc)
        y = x @ np.ones((8, 2), np.float32)
        tpuprof.op_end(desc, inputs={"x": x, "w": tpuprof.Tensor((8, 2), "fp32")},
                       outputs=[y], attrs={"transpose_b": False, "alpha": 0.5},
                       weight=tpuprof.Tensor((8, 2), "fp32"), sparsity=0.25, flops=128)
        tpuprof.step_end("train", i)
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    o = s["overall_stats"]
    assert (o["steps"], o["warmup_steps"], o["scopes_cut_short"]) == (3, 1, 0)
    assert s["app_stats"]["1"]["preprocess"]["meta"] == "batch of 4"
    fc1 = s["op_stats"]["train"]["2"]["localhost"]["CPU"]["fc1"]
    assert fc1["op_type"] == "MatMul"
    assert fc1["output"]["0"] == {"name": "", "shape": [4, 2], "type": "fp32"}
    # bytes: the inputs' and outputs' sizes (128 + 64 + 32)
    assert fc1["total_bytes"] == 224
    ev = [e for e in trace_events(tmp_path / "out", "op")][0]["args"]
    assert ev["input_names"] == "x;w" and ev["input_shapes"] == "4x8;8x2"
    assert ev["attr.transpose_b"] == "false" and ev["attr.alpha"] == "0.5"
    assert ev["weight_shape"] == "8x2" and ev["weight_sparse_ratio"] == 0.25
    assert ev["flops"] == 128


def test_op_end_explicit_bytes_and_dtypes(tmp_path: Path):
    np = pytest.importorskip("numpy")
    d = tpuprof.enable(mode=2)
    desc = tpuprof.Op("Cast", post_op="relu")
    assert desc.name == "Cast" and desc.post_op == "relu"
    tpuprof.op_begin(desc)
    tpuprof.op_end(desc, inputs=np.zeros((2, 3), np.int8), outputs=np.zeros((2, 3), np.float16),
                   bytes=1000)
    tpuprof.disable()
    convert(d, tmp_path / "out")
    ev = trace_events(tmp_path / "out", "op")[0]
    assert ev["name"] == "Cast" and ev["args"]["post_op"] == "relu"
    assert ev["args"]["input_dtypes"] == "int8" and ev["args"]["output_dtypes"] == "fp16"
    assert ev["args"]["bytes"] == 1000


def test_runtime_counter_marks_ranges_async_threads(tmp_path: Path):
    d = tpuprof.enable(mode=2)
    tpuprof.thread_name("main-thread")
    tpuprof.runtime_begin("memcpy_h2d")
    tpuprof.runtime_end("memcpy_h2d")
    tpuprof.counter("loss", 0.5)
    tpuprof.counter("items", 3)
    tpuprof.mark("checkpoint", category="io", color=(255, 0, 0))
    tpuprof.range_begin("load", category="io", color=0x00FF00)
    tpuprof.range_end("load")
    tpuprof.async_begin("request", 42, category="net")
    tpuprof.async_end("request", 42)
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    o = s["overall_stats"]
    assert (o["marks"], o["ranges"], o["async_ranges"]) == (1, 1, 1)
    assert s["mark_stats"] == [{"name": "checkpoint", "category": "io", "count": 1}]
    kinds = {(r["kind"], r["name"], r["category"]) for r in s["range_stats"]}
    assert kinds == {("range", "load", "io"), ("async", "request", "net")}
    evs = trace_events(tmp_path / "out")
    assert [e["name"] for e in evs if e["cat"] == "runtime"] == ["memcpy_h2d"]
    mark = [e for e in evs if e["cat"] == "mark"][0]["args"]
    assert mark["color"] == "#ff0000"
    # mode 2: the Python caller's source location
    assert mark["src_file"] == __file__ and mark["src_function"].endswith("async_threads")
    rng = [e for e in evs if e["cat"] == "range"][0]["args"]
    assert rng["color"] == "#00ff00"
    import json
    with open(tmp_path / "out" / "trace.json") as f:
        raw = json.load(f)["traceEvents"]
    counters = sorted((e["name"], e["args"]["value"]) for e in raw if e.get("ph") == "C")
    assert counters == [("items", 3), ("loss", 0.5)]
    names = [e["args"]["name"] for e in raw if e.get("name") == "thread_name"]
    assert "main-thread" in names


def test_meta_and_device(tmp_path: Path):
    tpuprof.meta("batch_size", "8")
    with pytest.raises(ValueError, match="at most 31 bytes"):
        tpuprof.meta("k" * 40, "v")
    with pytest.raises(ValueError, match="device must be in"):
        tpuprof.set_device(-1)
    tpuprof.set_device(3)
    try:
        d = tpuprof.enable()
        assert d.name.startswith("tpuprof_data_dev3-")
        with tpuprof.step("g", 0):
            pass
        tpuprof.disable()
    finally:
        tpuprof.set_device(0)
    s = convert(d, tmp_path / "out")
    assert s["meta"]["batch_size"] == "8"
    assert s["overall_stats"]["batch_size"] == 8


def test_flush_writes_while_recording(tmp_path: Path):
    d = tpuprof.enable()
    with tpuprof.activity("a"):
        pass
    tpuprof.flush()
    assert (d / "capture.tpp").is_file() and (d / "session.tpc").is_file()
    tpuprof.disable()


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_modes(tmp_path: Path, mode: int):
    np = pytest.importorskip("numpy")
    d = tpuprof.enable(mode=mode)
    with tpuprof.step("g", 0):
        with tpuprof.op("Add", "add0", inputs=[np.ones(4)]):
            pass
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    assert s["meta"]["capture_mode"].startswith(str(mode))
    ops = trace_events(tmp_path / "out", "op")
    assert len(ops) == 1
    # names from mode 1, tensors from mode 2
    assert (ops[0]["name"] == "add0") == (mode >= 1)
    assert ("input_shapes" in ops[0]["args"]) == (mode == 2)


def test_capture_off_records_nothing_and_checks_arguments(tmp_path: Path):
    tpuprof.activity_begin("a")
    tpuprof.activity_end("a")
    with tpuprof.step("g", 1):
        tpuprof.counter("c", 1.0)
    with pytest.raises(TypeError):
        tpuprof.activity_begin(3)
    assert dumps_in(tmp_path) == []
