#!/usr/bin/python3
"""accel_test.py TPUPROF SHARED_DIR — the accelerator analysis end to end
(docs/accelerator-analysis.md), through the CLI:

  h200:    the four H200 traces (gzip'd, as written) against the facts of their README, read
           from SHARED_DIR/testdata/traces/h200/README.md: per-step host time, device time and
           work count of the two ResNet-50 runs, kernel time over the device span; both
           host-bound; BERT has device work but no steps; ONNX Runtime (CPU) has no
           accelerator section;
  diff:    `tpuprof diff` of the ResNet-50 pair says "device -52 %, step +20 %: host-bound",
           from the traces and from their output folders;
  fixture: a hand-made Kineto-like trace (written here) with nested host operators, the
           profiler's envelope, correlation links, a flow-only link, two streams (compute and
           a collective overlapping it), step annotations projected onto a stream, and two
           ranks; every figure is checked against the value worked out by hand;
  merged:  the real BM1688 dump with a 43 s host trace merged keeps its own derived counter
           samples, and gets the accelerator section (its engines as device lanes).
Prints SKIPPED loudly for inputs that are absent.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for tracetest
from tracetest import check, failures

TPUPROF, SHARED = sys.argv[1], sys.argv[2]
H200 = os.path.join(SHARED, "testdata", "traces", "h200")
DUMP = os.path.join(SHARED, "testdata", "sophgo", "bm1688_resnet50")
FP32 = os.path.join(H200, "torch_resnet50_fp32_bs64.pt.trace.json.gz")
BF16 = os.path.join(H200, "torch_resnet50_bf16cl_bs64.pt.trace.json.gz")


def run(*args):
    return subprocess.run([TPUPROF, *args], capture_output=True, text=True)


def convert(src, out, *extra, doc=False):
    r = run(src, out, "-q", "--disable_web", "--disable_perfetto", *(() if doc else ("--disable_doc",)), *extra)
    check(r.returncode == 0, "%s: exit %d %s" % (src, r.returncode, r.stderr))
    return json.load(open(os.path.join(out, "summary.json")))


def readme_facts():
    """The README's table: {row title: (fp32 cell numbers, bf16 cell numbers)}."""
    text = open(os.path.join(H200, "README.md")).read()
    facts = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3:
            continue
        nums = [[float(x.replace(" ", "")) for x in re.findall(r"\d[\d ]*(?:\.\d+)?", c)]
                for c in cells[1:]]
        facts[cells[0]] = nums
    return facts


def close(a, b, tol):
    return abs(a - b) <= tol


def test_h200(tmp):
    if not all(os.path.exists(p) for p in (FP32, BF16, os.path.join(H200, "README.md"))):
        print("SKIPPED: the H200 traces or their README are absent: accelerator facts not checked")
        return
    facts = readme_facts()
    host = facts.get("host step duration (us)")
    dev = facts.get("device busy time (us)")
    launched = facts.get("kernels + memsets launched")
    busy = facts.get("GPU busy over the whole trace")
    check(host and dev and launched and busy, "README table read: %s" % sorted(facts))
    if not (host and dev and launched and busy):
        return
    for i, (name, path) in enumerate((("fp32", FP32), ("bf16cl", BF16))):
        a = convert(path, os.path.join(tmp, name)).get("accelerator")
        check(a is not None, "%s: accelerator section" % name)
        if a is None:
            continue
        steps = a["steps"]
        check([s["name"] for s in steps] == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"],
              "%s: the three host steps only (no GPU projection): %s" % (name, [s["name"] for s in steps]))
        check(all(close(s["host_us"], w, 0.0005) for s, w in zip(steps, host[i])),
              "%s: host step durations %s, README %s" % (name, [s["host_us"] for s in steps], host[i]))
        check(all(close(s["device_us"], w, 0.05) for s, w in zip(steps, dev[i])),
              "%s: device time per step %s, README %s" % (name, [s["device_us"] for s in steps], dev[i]))
        check(all(sum(s["work"]["count"].values()) == launched[i][0] for s in steps),
              "%s: %d pieces of work launched per step" % (name, launched[i][0]))
        pct, kern_us, span_us = busy[i][0], busy[i][1], busy[i][2]
        check(close(a["compute_pct_of_span"], pct, 0.05) and
              close(a["work"]["time_us"]["compute"], kern_us, 0.5) and
              close(a["device_span_us"], span_us, 0.5),
              "%s: kernels %.3f us = %.2f %% of the device span %.3f us, README %s" %
              (name, a["work"]["time_us"]["compute"], a["compute_pct_of_span"],
               a["device_span_us"], busy[i]))
        check(a["bottleneck"] == "host-bound", "%s: %s" % (name, a["verdict"]))
        shares = sum(h["share_pct"] for h in a["host_ops"])
        check(shares <= 100.01 and not any("PyTorch Profiler" in h["name"] for h in a["host_ops"]),
              "%s: host self-time shares %.2f %% (top rows), envelope left out" % (name, shares))
        txt = open(os.path.join(tmp, name, "summary.txt")).read()
        check("Bottleneck: host-bound" in txt and "ProfilerStep#3" in txt, "%s: summary.txt" % name)
    a = json.load(open(os.path.join(tmp, "bf16cl", "summary.json")))["accelerator"]
    check("idle 79 %" in a["verdict"], "bf16cl: idle 79 %% of each step: %s" % a["verdict"])
    bert = os.path.join(H200, "torch_bert_base_fp16_infer.pt.trace.json.gz")
    if os.path.exists(bert):
        a = convert(bert, os.path.join(tmp, "bert")).get("accelerator") or {}
        check(a.get("device_lanes") == 1 and a.get("step_count") == 0 and
              a.get("work", {}).get("count", {}).get("compute") == 462,
              "bert: 1 lane, no steps, 462 kernels: %s" % {k: a.get(k) for k in ("device_lanes", "step_count")})
    ort = os.path.join(H200, "ort_resnet18_cpu_profile.json.gz")
    if os.path.exists(ort):
        check("accelerator" not in convert(ort, os.path.join(tmp, "ort")),
              "ONNX Runtime on the CPU: no accelerator section")


def test_diff(tmp):
    if not (os.path.exists(FP32) and os.path.exists(BF16)):
        print("SKIPPED: the H200 ResNet-50 traces are absent: diff verdict not checked")
        return
    pairs = [("traces", FP32, BF16)]
    folders = []
    for name, src in (("fold_fp32", FP32), ("fold_bf16", BF16)):
        f = os.path.join(tmp, name)
        convert(src, f, "--sqlite")
        folders.append(f)
    pairs.append(("folders", folders[0], folders[1]))
    for label, a, b in pairs:
        out = os.path.join(tmp, "diff_" + label)
        r = run("diff", a, b, out, "-q")
        check(r.returncode == 0, "diff %s: exit %d %s" % (label, r.returncode, r.stderr))
        d = json.load(open(os.path.join(out, "diff.json")))
        x = d.get("accel", {})
        check(x.get("verdict", "").startswith("device -52 %, step +20 %: host-bound"),
              "diff %s verdict: %s" % (label, x.get("verdict")))
        check(close(x.get("step_delta_pct", 0), 19.74, 0.005) and
              close(x.get("device_delta_pct", 0), -51.68, 0.005) and
              x.get("step_within_noise") is False and x.get("device_within_noise") is False,
              "diff %s: step %s %%, device %s %%, both beyond noise" %
              (label, x.get("step_delta_pct"), x.get("device_delta_pct")))
        check(d["a"]["steps"] == 3 and d["b"]["steps"] == 3 and
              close(d["a"]["total_us"], 60930.466, 0.0005) and close(d["b"]["total_us"], 72957.950, 0.0005),
              "diff %s: medians of the 3 host steps (%s, %s)" % (label, d["a"]["total_us"], d["b"]["total_us"]))
        txt = open(os.path.join(out, "diff.txt")).read()
        check("verdict: device -52 %, step +20 %: host-bound" in txt, "diff %s: diff.txt verdict" % label)
        html = open(os.path.join(out, "diff.html")).read()
        check("D.diff.accel.verdict" in html, "diff %s: diff.html shows the verdict" % label)


def fixture_events():
    """Two ranks. Rank 0 (host pid 100, GPU pid 0, streams 7 and 20) runs two steps of the same
    work: linear (nesting addmm), a copy, a collective on stream 20 and a kernel overlapping it;
    rank 1 (host pid 200, GPU pid 1) one step with one kernel, linked by a flow only."""
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "rank0 GPU"}},
          {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "rank1 GPU"}},
          {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": 0,
           "ts": 0, "dur": 2300}]

    def x(cat, name, pid, tid, ts, dur, corr=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
        if corr is not None:
            e["args"] = {"correlation": corr}
        ev.append(e)

    for k, (t0, length) in enumerate(((0, 1000), (1000, 1200))):
        c = 10 * k
        x("user_annotation", "ProfilerStep#%d" % (k + 1), 100, 1, t0, length)
        x("gpu_user_annotation", "ProfilerStep#%d" % (k + 1), 0, 7, t0 + 40, 880)
        x("cpu_op", "aten::linear", 100, 1, t0 + 10, 500)
        x("cuda_runtime", "cudaLaunchKernel", 100, 1, t0 + 20, 10, c + 1)
        x("cpu_op", "aten::addmm", 100, 1, t0 + 40, 260)
        x("cuda_runtime", "cudaLaunchKernel", 100, 1, t0 + 50, 10, c + 2)
        x("cuda_runtime", "cudaMemcpyAsync", 100, 1, t0 + 600, 20, c + 3)
        x("cuda_runtime", "cudaLaunchKernel", 100, 1, t0 + 700, 10, c + 4)
        x("cuda_runtime", "cudaLaunchKernel", 100, 1, t0 + 760, 10, c + 5)
        x("kernel", "gemm", 0, 7, t0 + 40, 200, c + 1)
        x("kernel", "addmm_kernel", 0, 7, t0 + 250, 200, c + 2)
        x("gpu_memcpy", "Memcpy HtoD", 0, 7, t0 + 630, 50, c + 3)
        x("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 20, t0 + 720, 200, c + 4)
        x("kernel", "relu", 0, 7, t0 + 800, 100, c + 5)
    x("user_annotation", "ProfilerStep#1", 200, 200, 0, 1000)
    x("cuda_runtime", "cudaLaunchKernel", 200, 200, 30, 10)
    x("kernel", "gemm", 1, 7, 50, 500)
    ev.append({"ph": "s", "cat": "ac2g", "name": "launch", "id": 9, "pid": 200, "tid": 200, "ts": 30})
    ev.append({"ph": "f", "cat": "ac2g", "name": "launch", "id": 9, "pid": 1, "tid": 7, "ts": 50, "bp": "e"})
    return {"traceEvents": ev, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2}}


def test_fixture(tmp):
    src = os.path.join(tmp, "fixture.json")
    json.dump(fixture_events(), open(src, "w"))
    s = convert(src, os.path.join(tmp, "fixture"), doc=True)
    a = s.get("accelerator")
    check(a is not None, "fixture: accelerator section")
    if a is None:
        return
    check(s["meta"].get("distributed.rank") == "0" and s["meta"].get("distributed.world_size") == "2",
          "fixture: rank and world size from distributedInfo: %s" % s["meta"])
    check(a["device_lanes"] == 3 and a["host_threads"] == 2, "fixture: 3 device lanes, 2 host threads: %s, %s"
          % (a["device_lanes"], a["host_threads"]))
    steps = a["steps"]
    check(len(steps) == 3, "fixture: 3 host steps (the GPU projections are no steps): %d" % len(steps))
    if len(steps) != 3:
        return
    # Rank 0, step 1 (by hand): work 200 + 200 + 50 + 200 + 100 = 750 us; busy = [40, 240] +
    # [250, 450] + [630, 680] + [720, 920] = 650; idle 350; compute (union 500) and comm (200)
    # overlap by 100 (relu inside the all-reduce); 5 launches of 60 us in all; delays 20, 200,
    # 30, 20, 40: median 30, max 200.
    s1 = steps[0]
    want = {"host_us": 1000.0, "device_us": 750.0, "busy_us": 650.0, "idle_us": 350.0, "launches": 5,
            "launch_us": 60.0, "launch_to_start_median_us": 30.0, "launch_to_start_max_us": 200.0}
    check(all(s1[k] == v for k, v in want.items()), "fixture step 1: %s, want %s" %
          ({k: s1[k] for k in want}, want))
    check(s1["work"]["time_us"] == {"compute": 500.0, "memcpy": 50.0, "memset": 0.0, "comm": 200.0} and
          s1["work"]["comm_overlap_us"] == 100.0, "fixture step 1 by kind: %s" % s1["work"])
    # Rank 1's step (starts at 0 too; sorted after rank 0's by device): the kernel linked by
    # its flow, 500 us, launched 20 us before it starts.
    r1 = [x for x in steps if x["device_us"] == 500.0]
    check(len(r1) == 1 and r1[0]["launches"] == 1 and r1[0]["launch_to_start_median_us"] == 20.0,
          "fixture: rank 1's step through its flow: %s" % r1)
    devs = {d["name"]: d for d in a["devices"]}
    check(devs.get("rank0 GPU", {}).get("step_device_us") == 750.0 and
          devs.get("rank1 GPU", {}).get("step_device_us") == 500.0 and a["imbalance_pct"] == 20.0,
          "fixture: per-rank device time per step 750 / 500, imbalance 20 %%: %s, %s" %
          ({k: v["step_device_us"] for k, v in devs.items()}, a["imbalance_pct"]))
    # Host self time: step 1 = 1000 - (500 + 20 + 10 + 10); linear = 500 - (10 + 260);
    # addmm = 260 - 10. Step 2 is 200 us longer, all of it outside operators.
    ops = {h["name"]: h for h in a["host_ops"]}
    check(ops["(steps, outside any operator)"]["self_us"] == 460.0 + 660.0 + (1000.0 - 10.0),
          "fixture: steps' own time %s" % ops["(steps, outside any operator)"])
    check(ops["aten::linear"]["self_us"] == 2 * 230.0 and ops["aten::addmm"]["self_us"] == 2 * 250.0 and
          ops["aten::linear"]["total_us"] == 1000.0, "fixture: linear %s, addmm %s" %
          (ops["aten::linear"], ops["aten::addmm"]))
    check("PyTorch Profiler (0)" not in ops and close(sum(h["share_pct"] for h in a["host_ops"]), 100, 0.05),
          "fixture: envelope left out, shares add to 100 %%: %s" % sum(h["share_pct"] for h in a["host_ops"]))
    kinds = {k["name"]: k["kind"] for k in a["kernels"]}
    check(kinds.get("ncclDevKernel_AllReduce_Sum_f32_RING_LL") == "comm" and
          kinds.get("Memcpy HtoD") == "memcpy" and kinds.get("gemm") == "compute",
          "fixture: kinds %s" % kinds)
    check(a["linked"] == 11 and a["launches"] == 11, "fixture: 11 of 11 linked: %s" % a["linked"])
    workbook(os.path.join(tmp, "fixture", "PerfDoc", "PerfAI_output.xlsx"), a)


def workbook(path, a):
    """The workbook's Accelerator sheet: the verdict, the steps with their device time."""
    try:
        import openpyxl
    except ImportError:
        print("SKIPPED: python3-openpyxl is not installed: the Accelerator sheet not checked")
        return
    wb = openpyxl.load_workbook(path, read_only=True)
    check("Accelerator" in wb.sheetnames, "workbook: Accelerator sheet in %s" % wb.sheetnames)
    if "Accelerator" not in wb.sheetnames:
        return
    rows = [r for r in wb["Accelerator"].iter_rows(values_only=True)]
    check(rows[1][0] == a["verdict"], "workbook: verdict %r" % (rows[1][0],))
    steps = [r for r in rows if r and isinstance(r[0], str) and r[0].startswith("ProfilerStep#")]
    check([(r[1], r[2]) for r in steps] == [(s["host_us"], s["device_us"]) for s in a["steps"]],
          "workbook: steps %s" % [(r[0], r[1], r[2]) for r in steps])


def test_merged(tmp):
    if not os.path.isdir(DUMP):
        print("SKIPPED: %s is absent: merged-dump counters not checked" % DUMP)
        return
    host = [{"ph": "X", "cat": "tpudnn", "name": "enable_profile", "pid": 1, "tid": 1, "ts": 1000000, "dur": 50},
            {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 1000200, "dur": 300},
            {"ph": "X", "cat": "cpu_op", "name": "late", "pid": 1, "tid": 1, "ts": 1000000 + 43e6, "dur": 10}]
    hp = os.path.join(tmp, "host43.json")
    json.dump({"traceEvents": host}, open(hp, "w"))
    counts = []
    for name, extra in (("alone", ()), ("merged", ("--trace_file", hp))):
        out = os.path.join(tmp, "dump_" + name)
        r = run(DUMP, out, "-q", "--json", "--disable_web", "--disable_doc", "--disable_perfetto", *extra)
        check(r.returncode == 0, "dump %s: exit %d %s" % (name, r.returncode, r.stderr))
        ev = json.load(open(os.path.join(out, "trace.json")))["traceEvents"]
        counts.append(sorted(e["args"].get(next(iter(e["args"]))) for e in ev if e.get("ph") == "C"))
        s = json.load(open(os.path.join(out, "summary.json")))
        check(("accelerator" in s) == (name == "merged"), "dump %s: accelerator section only when merged" % name)
    check(len(counts[0]) > 700 and counts[0] == counts[1],
          "merged dump keeps the derived counters: %d samples alone, %d merged" % (len(counts[0]), len(counts[1])))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_h200(tmp)
        test_diff(tmp)
        test_fixture(tmp)
        test_merged(tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("accel e2e: ok")


main()
