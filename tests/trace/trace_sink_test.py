#!/usr/bin/python3
"""trace_sink_test.py — the trace driver's rules on generated Chrome traces, through the CLI
(`tpuprof TRACE OUT --json --sqlite`), counted in all three trace outputs: Perfetto (the
`tpuprof check` report), trace.json (flow events) and profile.db (the flow table).

  flows: one call launching 500 kernels keeps all 500 arrows; a flow that starts exactly at
         its producer's end, where the thread's next op starts, leaves the producer; a flow
         id used again after its flow ended pairs again.
  names: a name of 4 MB is cut at 65 536 bytes (at a character boundary, ending in "…") in
         all three trace outputs, which stay far below the name's size, with a note.
  ids:   profile.db's input_pid / input_tid are the trace's own: a pid 0, a negative tid and
         a thread whose overlapping slices take two lanes are each found by those ids; a
         text pid and tid ("Python", "worker") are found by their text, and a real pid 3 /
         tid 0 (the text pid's position and the text tid's missing number) only by theirs.
  scale: 200 000 counter series in one process and 50 000 threads convert (the driver's
         planning is linear in the tracks; no time limit is asserted, the run just has to
         finish), with every counter track and thread in Perfetto and profile.db.

Usage: trace_sink_test.py TPUPROF.
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for tracetest
from tracetest import check, failures

TPUPROF = sys.argv[1] if len(sys.argv) > 1 else "tpuprof"


def convert(tmp, name, events, *extra):
    """Writes {"traceEvents": events} and converts it; returns (exit code, out dir, stdout)."""
    src = os.path.join(tmp, name + ".json")
    with open(src, "w") as f:
        json.dump({"traceEvents": events}, f)
    out = os.path.join(tmp, name)
    r = subprocess.run([TPUPROF, src, out, "--json", "--sqlite", "--disable_web",
                        "--disable_doc", *extra], capture_output=True, text=True)
    check(r.returncode == 0, f"{name}: exit {r.returncode}: {r.stderr}")
    return r.returncode, out, r.stdout


def flows_of(out):
    """Flow counts per output: Perfetto (check report), trace.json ('s' and 'f'), profile.db;
    and the database's flows as (source name, target name) pairs."""
    c = subprocess.run([TPUPROF, "check", os.path.join(out, "perfetto.pftrace")],
                       capture_output=True, text=True)
    m = re.search(r"(\d+) flows", c.stdout)
    pf = int(m.group(1)) if c.returncode == 0 and m else None
    ev = json.load(open(os.path.join(out, "trace.json")))["traceEvents"]
    js = sum(1 for e in ev if e.get("ph") == "s")
    jf = sum(1 for e in ev if e.get("ph") == "f")
    db = sqlite3.connect(os.path.join(out, "profile.db"))
    pairs = db.execute("select a.name, b.name from flow f join slice a on a.id = f.slice_out"
                       " join slice b on b.id = f.slice_in order by f.id").fetchall()
    db.close()
    return pf, js, jf, pairs


def x(name, pid, tid, ts, dur, **args):
    e = {"ph": "X", "name": name, "cat": "op", "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def flow(ph, fid, pid, tid, ts, **kw):
    e = {"ph": ph, "name": "launch", "cat": "ac2g", "id": fid, "pid": pid, "tid": tid,
         "ts": ts}
    e.update(kw)
    return e


def test_flows(tmp):
    # One cudaGraphLaunch-like call (tid 1) launching 500 kernels on a stream (tid 2).
    n = 500
    ev = [x("graphLaunch", 1, 1, 0, 10)]
    for i in range(n):
        ev.append(flow("s", i + 1, 1, 1, 5))
        ev.append(x(f"kernel{i}", 1, 2, 20 + 3 * i, 2))
        ev.append(flow("f", i + 1, 1, 2, 20 + 3 * i, bp="e"))
    rc, out, _ = convert(tmp, "launch500", ev)
    if rc == 0:
        pf, js, jf, pairs = flows_of(out)
        check(pf == n and js == n and jf == n and len(pairs) == n and
              all(a == "graphLaunch" for a, _ in pairs) and
              len({b for _, b in pairs}) == n,
              f"500 launches: perfetto {pf}, trace.json s {js} f {jf}, db {len(pairs)}")

    # A producer (tid 1, [0, 10]) whose flow starts at its end, where the thread's next op
    # starts too; the consumer (tid 2) starts at that instant.
    ev = [x("producer", 1, 1, 0, 10), x("next_op", 1, 1, 10, 5), x("consumer", 1, 2, 10, 4),
          flow("s", 7, 1, 1, 10), flow("f", 7, 1, 2, 10, bp="e")]
    rc, out, _ = convert(tmp, "at_end", ev)
    if rc == 0:
        pf, js, jf, pairs = flows_of(out)
        check(pf == 1 and js == 1 and jf == 1 and pairs == [("producer", "consumer")],
              f"flow at the producer's end: perfetto {pf}, json {js}/{jf}, db {pairs}")

    # Flow id 3 used twice: a -> b, then (after b) c -> d.
    ev = [x("a", 1, 1, 0, 5), x("b", 1, 2, 10, 5), x("c", 1, 1, 20, 5), x("d", 1, 2, 30, 5),
          flow("s", 3, 1, 1, 1), flow("f", 3, 1, 2, 10, bp="e"),
          flow("s", 3, 1, 1, 21), flow("f", 3, 1, 2, 30, bp="e")]
    rc, out, _ = convert(tmp, "reused_id", ev)
    if rc == 0:
        pf, js, jf, pairs = flows_of(out)
        check(pf == 2 and js == 2 and jf == 2 and pairs == [("a", "b"), ("c", "d")],
              f"reused flow id: perfetto {pf}, json {js}/{jf}, db {pairs}")


def check_report(out):
    """The `tpuprof check` report of out/perfetto.pftrace as a dict of its counts."""
    c = subprocess.run([TPUPROF, "check", os.path.join(out, "perfetto.pftrace")],
                       capture_output=True, text=True)
    check(c.returncode == 0, f"tpuprof check {out}: {c.stdout} {c.stderr}")
    return {k: int(v) for v, k in re.findall(r"(\d+) (threads|counter tracks|slices)", c.stdout)}


def test_scale(tmp):
    n = 200000
    ev = [{"ph": "C", "name": f"series{i}", "pid": 1, "ts": i % 1000, "args": {"v": i % 7}}
          for i in range(n)]
    rc, out, _ = convert(tmp, "counters200k", ev, "-q")
    if rc == 0:
        rep = check_report(out)
        db = sqlite3.connect(os.path.join(out, "profile.db"))
        got = db.execute("select count(*) from track where type = 'counter'").fetchone()[0]
        db.close()
        check(rep.get("counter tracks") == n and got == n,
              f"200 000 counter series: perfetto {rep}, profile.db {got}")
    n = 50000
    ev = [x("op", 1, i + 1, i % 1000, 5) for i in range(n)]
    rc, out, _ = convert(tmp, "threads50k", ev, "-q")
    if rc == 0:
        rep = check_report(out)
        db = sqlite3.connect(os.path.join(out, "profile.db"))
        got = db.execute("select count(distinct tid) from thread").fetchone()[0]
        db.close()
        check(rep.get("threads") == n and rep.get("slices") == n and got == n,
              f"50 000 threads: perfetto {rep}, profile.db {got} distinct tids")


def test_long_name(tmp):
    # 4 MB of a 3-byte character after one ASCII byte: the cut must back up to a boundary.
    name = "a" + "\u20ac" * (4 * 1024 * 1024 // 3)
    ev = [x(name, 1, 1, 0, 5), x("short", 1, 1, 10, 5)]
    rc, out, stdout = convert(tmp, "long_name", ev)
    if rc:
        return
    check("strings longer than 65536 bytes cut" in stdout,
          f"long name: no note in the {len(stdout)}-character summary")
    for f in ("perfetto.pftrace", "trace.json", "profile.db"):
        size = os.path.getsize(os.path.join(out, f))
        check(size < 1024 * 1024, f"long name: {f} is {size} bytes")
    db = sqlite3.connect(os.path.join(out, "profile.db"))
    got = [r[0] for r in db.execute("select name from slice order by ts")]
    db.close()
    # The first 65 533 bytes without a split character, then U+2026 (3 bytes).
    want = name.encode()[:65536 - 3].decode("utf-8", errors="ignore") + "\u2026"
    check(len(got) == 2 and got[0] == want and got[1] == "short" and
          len(got[0].encode()) <= 65536, f"long name: db names {[len(g) for g in got]}")
    ev = json.load(open(os.path.join(out, "trace.json")))["traceEvents"]
    xs = [e["name"] for e in ev if e.get("ph") == "X"]
    check(xs and xs[0] == want, "long name: trace.json name not cut as profile.db's")


def test_input_ids(tmp):
    ev = [x("p0a", 0, 7, 0, 10), x("neg1", 5, -3, 0, 10), x("neg2", 5, -3, 20, 10),
          x("ov1", 1, 1, 0, 10), x("ov2", 1, 1, 5, 10), x("txt", "Python", 1, 0, 10),
          x("w1", "Python", "worker", 0, 10), x("w2", "Python", "worker", 5, 10),
          x("real3", 3, 0, 0, 10)]
    rc, out, _ = convert(tmp, "ids", ev, "-q")
    if rc:
        return
    db = sqlite3.connect(os.path.join(out, "profile.db"))

    def names(pid, tid):
        return sorted(r[0] for r in db.execute(
            "select s.name from slice s join track k on k.id = s.track_id join thread t on"
            " t.utid = k.utid where t.input_pid = ? and t.input_tid = ?", (pid, tid)))

    keys = [(0, 7), (5, -3), (1, 1), ("Python", "worker"), ("Python", 1), (3, 0)]
    got = {k: names(*k) for k in keys}
    ptext = db.execute("select typeof(input_pid), count(*) from process where"
                       " input_pid = 'Python'").fetchall()
    lanes = db.execute("select count(*) from thread where input_pid = 1 and input_tid = 1"
                       ).fetchone()[0]
    viewer = db.execute("select pid from process where input_pid = 0").fetchone()
    txt = db.execute("select s.name from slice s join track k on k.id = s.track_id join"
                     " process p on p.upid = k.upid where p.name = 'pid Python'").fetchall()
    db.close()
    want = {(0, 7): ["p0a"], (5, -3): ["neg1", "neg2"], (1, 1): ["ov1", "ov2"],
            ("Python", "worker"): ["w1", "w2"], ("Python", 1): ["txt"], (3, 0): ["real3"]}
    check(got == want and lanes == 2 and viewer and viewer[0] != 0 and
          sorted(txt) == [("txt",), ("w1",), ("w2",)] and ptext == [("text", 1)],
          f"input ids: {got}, lanes {lanes}, viewer pid {viewer}, text pid {txt} {ptext}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_flows(tmp)
        test_input_ids(tmp)
        test_long_name(tmp)
        test_scale(tmp)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("trace_sink_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
