"""Profiler (the Cambricon-style object) and finalize(): every report is written, and the
per-step timeline/ and step_stats/ files hold each step's operators, tensors and activities
(step_stats checked against TensorFlow's schema with protoc)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import tpuprof

HERE = Path(__file__).resolve().parent


def _profile_run(np, steps: int = 3):
    p = tpuprof.Profiler()
    assert p is tpuprof.Profiler()
    assert p.trace_level() == 0 and p.get_tf_trace_level() == 0
    p.enable(mode=2)
    assert p.trace_level() == 3 and p.mode == 2
    fc = tpuprof.Op("MatMul", "fc1")
    for i in range(steps):
        p.activity_start("data", i, "load batch")
        x = np.ones((2, 4), np.float32)
        p.activity_end("data", i, "load batch")
        p.step_start("my/graph", i)
        tpuprof.op_begin(fc)
        y = x @ np.ones((4, 3), np.float32)
        tpuprof.op_end(fc, inputs={"x": x, "w": np.ones((4, 3), np.float32)},
                       outputs={"y": y})
        with tpuprof.op("Relu", "relu1", inputs={"y": y}) as o:
            o.outputs = {"z": np.maximum(y, 0)}
        p.step_end("my/graph", i)
    return p


def test_finalize_writes_every_report(tmp_path: Path):
    np = pytest.importorskip("numpy")
    p = _profile_run(np)
    r = p.finalize("rep")
    assert not tpuprof.active()
    assert r.dir == Path("rep") and r.dump.is_dir()
    assert r.steps == [("my/graph", 0), ("my/graph", 1), ("my/graph", 2)]
    names = {str(f.relative_to(r.dir)) for f in r.files}
    for f in ("summary.json", "summary.md", "summary.txt", "ops.csv", "result.html",
              "perfetto.pftrace", "trace.json", "PerfDoc/PerfAI_output.xlsx",
              "timeline/my_graph_step_0", "step_stats/my_graph_step_2"):
        assert f in names, f
    s = r.summary()
    assert s["app_stats"]["1"]["data"]["meta"] == "load batch"
    relu = s["op_stats"]["my/graph"]["2"]["localhost"]["CPU"]["relu1"]
    assert relu["output"]["0"]["shape"] == [2, 3] and relu["output"]["0"]["type"] == "fp32"
    csv = (r.dir / "ops.csv").read_text()
    assert "MatMul,,fc1,x;w,2x4;4x3,fp32;fp32,y,2x3,fp32" in csv


def test_timeline_layout(tmp_path: Path):
    np = pytest.importorskip("numpy")
    _profile_run(np, steps=1)
    r = tpuprof.finalize("rep")
    with open(r.dir / "timeline" / "my_graph_step_0") as f:
        tl = json.load(f)["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in tl if e.get("name") == "process_name"}
    assert procs == {0: "/job:localhost/replica:0/task:0/device:CPU:0 Compute",
                     1: "/job:localhost/replica:0/task:0/device:CPU:0 Tensors",
                     2: "Application"}
    ops = [e for e in tl if e.get("cat") == "Op"]
    assert [(e["name"], e["args"]["name"]) for e in ops] == [("MatMul", "fc1"), ("Relu", "relu1")]
    assert ops[0]["args"]["input0"] == "x" and ops[0]["args"]["input1"] == "w"
    assert all(isinstance(e["ts"], int) and isinstance(e["dur"], int) for e in ops)
    # the data flow from fc1's output y to relu1's input
    flows = [e for e in tl if e.get("cat") == "DataFlow"]
    assert [(e["ph"], e["name"]) for e in flows] == [("s", "y"), ("t", "y")]
    tensors = [e for e in tl if e.get("cat") == "Tensor"]
    assert [e["ph"] for e in tensors] == ["N", "O", "D"] * 2
    snap = [e for e in tensors if e["ph"] == "O"][1]["args"]["snapshot"]
    assert snap == {"tensor_description": {"dtype": "DT_FLOAT", "shape": "2x3"}}
    # the step's activity is not inside the step here (it ran before step_start)
    assert [e["cat"] for e in tl if e.get("pid") == 2 and e["ph"] == "X"] == ["Step"]


def test_step_stats_parse_as_tensorflow_stepstats(tmp_path: Path):
    np = pytest.importorskip("numpy")
    _profile_run(np, steps=1)
    r = tpuprof.finalize("rep")
    text = (r.dir / "step_stats" / "my_graph_step_0").read_text()
    assert 'node_name: "relu1"' in text and "dtype: DT_FLOAT" in text
    assert 'timeline_label: "fc1 = MatMul(x, w)"' in text
    assert text.count("node_stats {") == 2
    protoc = shutil.which("protoc")
    if protoc is None:
        print("SKIPPED: protoc not installed (protobuf-compiler): step_stats not checked "
              "against the schema")
        pytest.skip("protoc not installed")
    p = subprocess.run([protoc, f"-I{HERE}", "--encode=tensorflow.StepStats",
                        str(HERE / "tf_step_stats.proto")], input=text.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    assert p.returncode == 0, p.stderr.decode()
    assert len(p.stdout) > 100


def test_steps_by_thread_and_repeated_indices(tmp_path: Path):
    tpuprof.enable(mode=1)
    desc = tpuprof.Op("Add", "add")
    for epoch in range(2):
        for i in range(2):
            with tpuprof.step("train", i):
                with tpuprof.activity("fetch", step=i):
                    pass
                tpuprof.op_begin(desc)
                tpuprof.op_end(desc)
    with tpuprof.step("eval", 0):
        pass
    r = tpuprof.finalize("rep")
    assert r.steps == [("train", 0), ("train", 1), ("train", 0), ("train", 1), ("eval", 0)]
    files = sorted(os.listdir(r.dir / "timeline"))
    assert files == ["eval_step_0", "train_step_0", "train_step_0_1", "train_step_1",
                     "train_step_1_1"]
    with open(r.dir / "timeline" / "train_step_1_1") as f:
        tl = json.load(f)["traceEvents"]
    assert [e["cat"] for e in tl if e.get("ph") == "X"] == ["Step", "Activity", "Op"]
    empty = (r.dir / "step_stats" / "eval_step_0").read_text()
    assert "node_stats" not in empty and empty.startswith("dev_stats {")


def test_converter_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    tpuprof.enable()
    d = tpuprof.disable()
    with pytest.raises(tpuprof.ConverterNotFoundError, match="cli='/no/such/tpuprof'"):
        tpuprof.convert(d, "rep", cli="/no/such/tpuprof")
    with monkeypatch.context() as m:
        m.setenv("TPUPROF_CLI", "/no/such/tpuprof")
        with pytest.raises(tpuprof.ConverterNotFoundError, match="TPUPROF_CLI="):
            tpuprof.find_cli()
        m.delenv("TPUPROF_CLI")
        m.setenv("PATH", "/nonexistent")
        m.setattr("tpuprof._report._built_cli", lambda: None)
        with pytest.raises(tpuprof.ConverterNotFoundError, match="make build"):
            tpuprof.find_cli()
    with pytest.raises(tpuprof.ConversionError, match="exited with status 2"):
        tpuprof.convert(tmp_path / "absent", "rep")
