"""The per-step files of the Cambricon TensorFlow models profiler, from the converter's
trace.json: for every step (a step_begin/step_end pair, any graph)

    timeline/<graph>_step_<N>     Chrome-trace JSON in the layout of TensorFlow's
                                  timeline.Timeline(step_stats).generate_chrome_trace_format(
                                  show_dataflow=True, show_memory=True)
    step_stats/<graph>_step_<N>   the step as a text-format tensorflow.StepStats protobuf

A step holds the events of its process that lie within its time span: operators only if they
carry its step index (an operator of another thread during an overlapping step belongs to
that one), activities, ranges, marks and runtime calls by time. Times are whole microseconds
from the start of the capture. docs/python.md describes both formats."""

from __future__ import annotations

import bisect
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"

# tpuprof dtype names -> tensorflow.DataType enum names.
_TF_DTYPES = {
    "fp32": "DT_FLOAT", "fp64": "DT_DOUBLE", "int32": "DT_INT32", "uint8": "DT_UINT8",
    "int16": "DT_INT16", "int8": "DT_INT8", "complex64": "DT_COMPLEX64", "int64": "DT_INT64",
    "bool": "DT_BOOL", "qint8": "DT_QINT8", "quint8": "DT_QUINT8", "qint32": "DT_QINT32",
    "bf16": "DT_BFLOAT16", "uint16": "DT_UINT16", "complex128": "DT_COMPLEX128",
    "fp16": "DT_HALF", "uint32": "DT_UINT32", "uint64": "DT_UINT64",
}
_ITEMSIZE = {"fp32": 4, "fp64": 8, "int32": 4, "uint8": 1, "int16": 2, "int8": 1,
             "complex64": 8, "int64": 8, "bool": 1, "bf16": 2, "uint16": 2, "complex128": 16,
             "fp16": 2, "uint32": 4, "uint64": 8, "qint8": 1, "quint8": 1, "qint32": 4}


def _file_name(graph: str, step: int, seen: Dict[str, int]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]", "_", graph) or "_"
    name = f"{base}_step_{step}"
    k = seen.get(name, 0)
    seen[name] = k + 1
    return name if k == 0 else f"{name}_{k}"  # the same step index again (a second epoch)


def _split(text: Any) -> List[str]:
    return text.split(";") if isinstance(text, str) and text != "" else []


def _dims(shape: str) -> Optional[List[int]]:
    if shape == "":
        return []
    try:
        return [int(d) for d in shape.split("x")]
    except ValueError:
        return None


def _tensors(args: Dict[str, Any], side: str) -> List[Dict[str, Any]]:
    """The input or output tensors of an operator slice: name, dtype, dims (None if not
    numeric), per slot."""
    names = _split(args.get(side + "_names"))
    shapes = _split(args.get(side + "_shapes"))
    dtypes = _split(args.get(side + "_dtypes"))
    n = max(len(names), len(shapes), len(dtypes))
    out = []
    for i in range(n):
        shape = shapes[i] if i < len(shapes) else ""
        out.append({"name": names[i] if i < len(names) else "",
                    "dtype": dtypes[i] if i < len(dtypes) else "",
                    "shape": shape, "dims": _dims(shape)})
    return out


def _us(ts: float) -> int:
    return int(round(ts))


class _Step:
    def __init__(self, ev: Dict[str, Any]):
        args = ev.get("args", {})
        self.graph = str(args.get("graph", ev.get("name", "")))
        self.step = int(args.get("step", -1))
        self.pid = ev.get("pid")
        self.ts = float(ev["ts"])
        self.end = self.ts + float(ev.get("dur", 0))
        self.events: List[Dict[str, Any]] = []

    def takes(self, ev: Dict[str, Any]) -> bool:
        if ev.get("pid") != self.pid:
            return False
        ts = float(ev["ts"])
        if ts < self.ts or ts + float(ev.get("dur", 0)) > self.end:
            return False
        if ev.get("cat") == "op":
            return ev.get("args", {}).get("step") == self.step
        return True


def _node_label(name: str, op_type: str, inputs: List[Dict[str, Any]]) -> str:
    ins = ", ".join(t["name"] or f"{t['dtype']}[{t['shape']}]" for t in inputs)
    return f"{name} = {op_type}({ins})"


def _timeline(st: _Step, threads: Dict[Tuple[Any, Any], str]) -> Dict[str, Any]:
    """TensorFlow's timeline layout: pid 0 "<device> Compute" (operators, cat "Op", name = op
    type, args name / op / inputN), pid 1 "<device> Tensors" (N / O / D objects of the output
    tensors), data flow s / t arrows between a named output and the input that uses it, and
    pid 2 "Application" with the step, its activities, ranges, marks and runtime calls."""
    meta: List[Dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": DEVICE + " Compute"}},
        {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": DEVICE + " Tensors"}},
        {"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "Application"}},
    ]
    evs: List[Dict[str, Any]] = [{
        "ph": "X", "cat": "Step", "name": f"{st.graph} step {st.step}", "pid": 2, "tid": 0,
        "ts": _us(st.ts), "dur": _us(st.end) - _us(st.ts),
        "args": {"graph": st.graph, "step": st.step}}]
    tids = set()
    producers: Dict[str, Tuple[int, int]] = {}
    obj = flow = 0
    step_end = _us(st.end)
    for ev in st.events:
        args = ev.get("args", {})
        ts, dur = _us(ev["ts"]), _us(float(ev["ts"]) + float(ev.get("dur", 0))) - _us(ev["ts"])
        tid = ev.get("tid")
        if ev.get("cat") != "op":
            evs.append({"ph": "X", "cat": str(ev.get("cat", "")).capitalize(),
                        "name": ev.get("name", ""), "pid": 2, "tid": tid, "ts": ts, "dur": dur,
                        "args": args})
            continue
        tids.add(tid)
        op_type = args.get("op_type", "")
        ins, outs = _tensors(args, "input"), _tensors(args, "output")
        a: Dict[str, Any] = {"name": ev.get("name", ""), "op": op_type}
        for i, t in enumerate(ins):
            a[f"input{i}"] = t["name"] or f"{t['dtype']}[{t['shape']}]"
            src = producers.get(t["name"]) if t["name"] else None
            if src is not None:
                flow += 1
                evs.append({"ph": "s", "cat": "DataFlow", "name": t["name"], "pid": 0,
                            "tid": src[1], "ts": src[0], "id": flow})
                evs.append({"ph": "t", "cat": "DataFlow", "name": t["name"], "pid": 0,
                            "tid": tid, "ts": ts, "id": flow})
        for key in ("bytes", "flops", "step"):
            if key in args:
                a[key] = args[key]
        evs.append({"ph": "X", "cat": "Op", "name": op_type, "pid": 0, "tid": tid, "ts": ts,
                    "dur": dur, "args": a})
        for slot, t in enumerate(outs):
            tname = t["name"] or f"{ev.get('name', '')}:{slot}"
            obj += 1
            desc = {"dtype": _TF_DTYPES.get(t["dtype"], "DT_INVALID"), "shape": t["shape"]}
            evs.append({"ph": "N", "cat": "Tensor", "name": tname, "pid": 1, "tid": 0,
                        "ts": ts + dur, "id": obj})
            evs.append({"ph": "O", "cat": "Tensor", "name": tname, "pid": 1, "tid": 0,
                        "ts": ts + dur, "id": obj,
                        "args": {"snapshot": {"tensor_description": desc}}})
            evs.append({"ph": "D", "cat": "Tensor", "name": tname, "pid": 1, "tid": 0,
                        "ts": step_end, "id": obj})
            if t["name"]:
                producers[t["name"]] = (ts + dur, tid)
    for tid in sorted(tids, key=str):
        meta.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": tid,
                     "args": {"name": threads.get((st.pid, tid), str(tid))}})
    return {"traceEvents": meta + evs}


def _q(s: str) -> str:
    """A protobuf text-format string literal."""
    out = []
    for ch in s.encode("utf-8"):
        if ch in (0x22, 0x5C):
            out.append("\\" + chr(ch))
        elif ch == 0x0A:
            out.append("\\n")
        elif 0x20 <= ch < 0x7F:
            out.append(chr(ch))
        else:
            out.append(f"\\{ch:03o}")
    return '"' + "".join(out) + '"'


def _step_stats(st: _Step) -> str:
    """tensorflow.StepStats in protobuf text format: one dev_stats for the CPU with a
    node_stats per operator (whole microseconds; memory = its bytes; one output per output
    tensor). Only fields every TensorFlow release has (no *_nanos, no thread_names), so any
    version's StepStats parses it."""
    lines = ["dev_stats {", f"  device: {_q(DEVICE)}"]
    for ev in st.events:
        if ev.get("cat") != "op":
            continue
        args = ev.get("args", {})
        t0 = float(ev["ts"])
        dur_us = _us(t0 + float(ev.get("dur", 0))) - _us(t0)
        tid = ev.get("tid")
        name, op_type = str(ev.get("name", "")), str(args.get("op_type", ""))
        lines += ["  node_stats {", f"    node_name: {_q(name)}",
                  f"    all_start_micros: {_us(t0)}", "    op_start_rel_micros: 0",
                  f"    op_end_rel_micros: {dur_us}",
                  f"    all_end_rel_micros: {dur_us}"]
        if args.get("bytes"):
            lines += ["    memory {", '      allocator_name: "cpu"',
                      f"      total_bytes: {int(args['bytes'])}", "    }"]
        for slot, t in enumerate(_tensors(args, "output")):
            lines += ["    output {", f"      slot: {slot}", "      tensor_description {",
                      f"        dtype: {_TF_DTYPES.get(t['dtype'], 'DT_INVALID')}"]
            if t["dims"] is not None:
                lines.append("        shape {")
                lines += [f"          dim {{ size: {d} }}" for d in t["dims"]]
                lines.append("        }")
                size = _ITEMSIZE.get(t["dtype"])
                if size:
                    n = size
                    for d in t["dims"]:
                        n *= d
                    lines += ["        allocation_description {",
                              f"          requested_bytes: {n}",
                              '          allocator_name: "cpu"', "        }"]
            lines += ["      }", "    }"]
        lines += [f"    timeline_label: {_q(_node_label(name, op_type, _tensors(args, 'input')))}",
                  f"    thread_id: {int(tid) if isinstance(tid, int) and tid >= 0 else 0}",
                  "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _write_file(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write(trace: Path, out: Path) -> List[Tuple[str, int]]:
    """Writes timeline/ and step_stats/ under `out` from the converter's trace.json; returns
    the (graph, step) of each step written, in time order."""
    with open(trace, encoding="utf-8") as f:
        events = json.load(f).get("traceEvents", [])
    threads = {(e.get("pid"), e.get("tid")): e.get("args", {}).get("name", "")
               for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    steps = sorted((_Step(e) for e in events if e.get("ph") == "X" and e.get("cat") == "step"),
                   key=lambda s: (s.ts, s.graph, s.step))
    # Each event goes to the steps that hold it: those begun at or before it (bisect) whose
    # span reaches it (the running maximum of the ends bounds the walk back).
    starts = [st.ts for st in steps]
    reach: List[float] = []
    for st in steps:
        reach.append(max(st.end, reach[-1]) if reach else st.end)
    for ev in events:
        if ev.get("ph") != "X" or ev.get("cat") == "step":
            continue
        ts = float(ev["ts"])
        i = bisect.bisect_right(starts, ts) - 1
        while i >= 0 and reach[i] >= ts:
            if steps[i].takes(ev):
                steps[i].events.append(ev)
            i -= 1
    for sub in ("timeline", "step_stats"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    seen: Dict[str, int] = {}
    done = []
    for st in steps:
        st.events.sort(key=lambda e: (float(e["ts"]), str(e.get("tid")), e.get("name", "")))
        name = _file_name(st.graph, st.step, seen)
        _write_file(out / "timeline" / name,
                    json.dumps(_timeline(st, threads), separators=(",", ":")) + "\n")
        _write_file(out / "step_stats" / name, _step_stats(st))
        done.append((st.graph, st.step))
    return done
