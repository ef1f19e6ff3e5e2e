#!/usr/bin/python3
"""test_trace.py TPUPROF SHARED_DIR — end-to-end tests of Chrome-trace JSON inputs.

Converts the three real traces of SHARED_DIR/testdata/traces with every output and checks what
came out against facts read independently from the JSON with Python's json module (event counts
per phase, an exact timestamp), validates the Perfetto trace with `tpuprof check`, and checks
the exit code and `path@0xOFFSET` message of malformed and truncated files. Prints SKIPPED
loudly for inputs that are absent.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

TPUPROF, SHARED = sys.argv[1], sys.argv[2]
TRACES = os.path.join(SHARED, "testdata", "traces")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([TPUPROF, *args], capture_output=True, text=True)


def events_of(path):
    with open(path) as f:
        d = json.load(f)
    return d if isinstance(d, list) else d["traceEvents"]


def test_real(tmp):
    for name in ("pytorch_kineto_alexnet_cuda.json", "onnxruntime_resnet_profile.json",
                 "mxnet_mnist_cnn_profile.json"):
        path = os.path.join(TRACES, name)
        if not os.path.exists(path):
            print("SKIPPED: %s is absent" % path)
            continue
        ev = events_of(path)
        out = os.path.join(tmp, name)
        r = run(path, out, "--json", "--sqlite", "-q")
        check(r.returncode == 0, "%s: exit %d: %s" % (name, r.returncode, r.stderr))
        for f in ("summary.txt", "summary.json", "result.html", "perfetto.pftrace",
                  "trace.json", "profile.db", "PerfDoc/PerfAI_output.xlsx"):
            check(os.path.getsize(os.path.join(out, f)) > 0, "%s: %s written" % (name, f))
        c = run("check", os.path.join(out, "perfetto.pftrace"))
        check(c.returncode == 0, "%s: tpuprof check: %s" % (name, c.stdout + c.stderr))
        # Slices: X + B/E pairs + i/I + b/e pairs, as Python counts them.
        want = sum(1 for e in ev if e.get("ph") in ("X", "i", "I")) + \
            sum(1 for e in ev if e.get("ph") == "E") + sum(1 for e in ev if e.get("ph") == "e")
        db = sqlite3.connect(os.path.join(out, "profile.db"))
        got = db.execute("select count(*) from slice").fetchone()[0]
        check(got == want, "%s: %d slices in profile.db, want %d" % (name, got, want))
        counters = sum(len(e.get("args", {})) for e in ev if e.get("ph") == "C")
        got = db.execute("select count(*) from counter").fetchone()[0]
        check(got == counters, "%s: %d counter values, want %d" % (name, got, counters))
        # One exact timestamp: the longest X/B event's duration in ns, from Python's view.
        xs = [e for e in ev if e.get("ph") == "X"]
        if xs:
            longest = max(xs, key=lambda e: e.get("dur", 0))
            got = db.execute("select max(dur) from slice").fetchone()[0]
            check(got == int(longest["dur"]) * 1000,
                  "%s: longest slice %s ns, want %s µs" % (name, got, longest["dur"]))
        # Trace JSON output round-trip: earliest event re-based to 0.
        tj = events_of(os.path.join(out, "trace.json"))
        ts = [e["ts"] for e in tj if e.get("ph") == "X"]
        check(min(ts) >= 0, "%s: trace.json times re-based" % name)
        db.close()


def test_bad(tmp):
    cases = [
        ('[{"ph":"X","ts":1,"dur":1},{"ph":X}]', "@0x21: bad JSON in trace event: unexpected character"),
        ('{"notatrace": 1, "traceEvents": 5}', "@0x20: \"traceEvents\" is not an array"),
        ('[{"ph":"X","ts":1,"du', "@0x1: trace truncated before its first complete event"),
    ]
    for i, (text, msg) in enumerate(cases):
        p = os.path.join(tmp, "bad%d.json" % i)
        with open(p, "w") as f:
            f.write(text)
        r = run(p, os.path.join(tmp, "bad_out"))
        check(r.returncode == 2, "bad%d: exit %d" % (i, r.returncode))
        check(r.stderr.strip() == "tpuprof: " + p + msg, "bad%d: message %r" % (i, r.stderr))
    # A real trace cut in the middle converts, with a note saying so.
    path = os.path.join(TRACES, "mxnet_mnist_cnn_profile.json")
    if os.path.exists(path):
        with open(path, "rb") as f:
            data = f.read()
        p = os.path.join(tmp, "cut.json")
        with open(p, "wb") as f:
            f.write(data[:len(data) // 2])
        r = run(p, os.path.join(tmp, "cut_out"))
        check(r.returncode == 0, "cut: exit %d %s" % (r.returncode, r.stderr))
        check("note: trace truncated at byte" in r.stdout, "cut: truncation note")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_real(tmp)
        test_bad(tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("trace e2e: ok")


main()
