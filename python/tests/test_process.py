"""The process-level guarantees of libtpuprof, from Python: threads record at once with their
own names, a forked child gets its own dump, a crash in the middle of a step leaves a dump the
converter rebuilds, TPUPROF=1 captures a script with no code change, and finalize works on
that session."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import tpuprof
from conftest import convert, dumps_in, run_py, trace_events


def test_threads(tmp_path: Path):
    d = tpuprof.enable(mode=1)
    desc = tpuprof.Op("Work", "work")
    barrier = threading.Barrier(4)

    def worker(k: int) -> None:
        tpuprof.thread_name(f"worker-{k}")
        barrier.wait()
        for i in range(200):
            with tpuprof.activity("chunk", step=i):
                tpuprof.op_begin(desc)
                tpuprof.op_end(desc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    with tpuprof.step("g", 0):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    tpuprof.disable()
    s = convert(d, tmp_path / "out")
    assert s["overall_stats"]["records_dropped"] == 0
    ops = trace_events(tmp_path / "out", "op")
    assert len(ops) == 800 and len({e["tid"] for e in ops}) == 4
    # operators of other threads carry the open step's index
    assert {e["args"]["step"] for e in ops} == {0}
    import json
    with open(tmp_path / "out" / "trace.json") as f:
        names = {e["args"]["name"] for e in json.load(f)["traceEvents"]
                 if e.get("name") == "thread_name"}
    assert {f"worker-{k}" for k in range(4)} <= names


def test_fork_child_gets_its_own_dump(tmp_path: Path):
    d = tpuprof.enable(mode=1)
    with tpuprof.activity("parent-before"):
        pass
    pid = os.fork()
    if pid == 0:  # the child: record, end its session, leave without pytest's cleanup
        code = 1
        try:
            with tpuprof.activity("child"):
                pass
            cd = tpuprof.disable()
            code = 0 if cd is not None and cd.name.endswith(f".{os.getpid()}") else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with tpuprof.activity("parent-after"):
        pass
    assert tpuprof.disable() == d
    dumps = dumps_in(tmp_path)
    assert len(dumps) == 2
    child = [p for p in dumps if p != d][0]
    assert child.name.endswith(f".{pid}")
    parent_acts = [e["name"] for e in trace_events_of(d, tmp_path / "p")]
    child_acts = [e["name"] for e in trace_events_of(child, tmp_path / "c")]
    assert parent_acts == ["parent-before", "parent-after"]
    assert child_acts == ["child"]


def trace_events_of(dump: Path, out: Path):
    convert(dump, out)
    return trace_events(out, "activity")


def test_crash_mid_step_keeps_the_dump(tmp_path: Path):
    p = run_py(
        "import os, tpuprof\n"
        "d = tpuprof.enable(mode=1)\n"
        "print(d, flush=True)\n"
        "for i in range(3):\n"
        "    with tpuprof.step('train', i):\n"
        "        with tpuprof.op('MatMul', 'fc'):\n"
        "            pass\n"
        "tpuprof.step_begin('train', 3)\n"
        "tpuprof.op_begin(tpuprof.Op('MatMul', 'fc'))\n"
        "os.abort()\n", check=False, cwd=tmp_path)
    assert p.returncode < 0  # killed by SIGABRT
    d = Path(p.stdout.strip())
    assert not (d / "capture.tpp").exists() and (d / "session.tpc").exists()
    s = convert(d, tmp_path / "out")
    assert any("process died" in n for n in s["notes"])
    o = s["overall_stats"]
    # every record up to the crash: 3 x (step + op begin/end) + the open step and operator
    assert o["records_read"] == 14
    assert o["steps"] == 3  # the open step is cut short, left out of the statistics
    assert o["scopes_cut_short"] == 2  # step 3 and its operator
    assert s["operators"][0]["executions"] == 3


def test_tpuprof_env_captures_without_code_change(tmp_path: Path):
    run_py("import tpuprof\n"
           "assert tpuprof.mode() == 2, tpuprof.mode()\n"
           "with tpuprof.step('g', 0):\n"
           "    tpuprof.activity_begin('a', 0)\n"
           "    tpuprof.activity_end('a', 0)\n",
           env={"TPUPROF": "2"}, cwd=tmp_path)
    (d,) = dumps_in(tmp_path)
    assert (d / "capture.tpp").is_file()  # written at exit
    s = convert(d, tmp_path / "out")
    assert s["meta"]["capture_mode"].startswith("2")
    assert s["app_stats"]["0"]["a"]["count"] == 1


def test_env_session_finalize(tmp_path: Path):
    run_py("import tpuprof\n"
           "p = tpuprof.Profiler()\n"
           "assert p.trace_level() == 1\n"
           "p.step_start('g', 0); p.step_end('g', 0)\n"
           "r = p.finalize('rep')\n"
           "assert r.steps == [('g', 0)], r.steps\n"
           "assert not tpuprof.active()\n",
           env={"TPUPROF": "1"}, cwd=tmp_path)
    assert (tmp_path / "rep" / "summary.json").is_file()
    assert (tmp_path / "rep" / "timeline" / "g_step_0").is_file()


def test_finalize_without_capture(tmp_path: Path):
    r = run_py("import tpuprof\n"
               "try:\n    tpuprof.finalize('rep')\n"
               "except tpuprof.NotActiveError as e:\n    print(e)\n", cwd=tmp_path)
    assert "captured nothing" in r.stdout
