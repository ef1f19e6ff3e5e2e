#!/usr/bin/python3
"""trace_outputs_test.py — end-to-end test of the three trace writers on the fixture profile
(tests/fixtures/c/sink_fixture.h), written by the trace_fixture_write tool:

  * perfetto: protoc decodes both files (plain and compressed); the plain file's text form
    equals the reviewed golden tests/golden/trace_fixture/perfetto.txtpb;
  * trace.json: parsed with Python's json module; event counts, metadata, nesting, flows,
    exact 3-decimal microsecond timestamps, strings with quotes/backslashes/newlines/control
    bytes round-trip exactly; equals the golden tests/golden/trace_fixture/trace.json;
  * profile.db: the README queries run verbatim in the sqlite3 shell and return the rows the
    fixture implies.

Usage: trace_outputs_test.py TRACE_FIXTURE_WRITE. Goldens are rewritten only with
TP_UPDATE_GOLDEN=1 (then review the diff). Exit 77 = skipped (printed loudly).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for tracetest
from tracetest import check, failures

SRC = os.environ.get("TP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("TP_SHARED_DIR", os.path.join(SRC, "..", "shared"))
GOLDEN = os.path.join(SRC, "tests", "golden", "trace_fixture")
UPDATE = os.environ.get("TP_UPDATE_GOLDEN") == "1"


def golden(name, text):
    path = os.path.join(GOLDEN, name)
    if UPDATE:
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print("updated golden", path)
        return
    if not os.path.exists(path):
        check(False, f"golden {path} missing (run with TP_UPDATE_GOLDEN=1 and review)")
        return
    with open(path, encoding="utf-8", newline="\n") as f:
        want = f.read()
    if want != text:
        import difflib
        diff = difflib.unified_diff(want.splitlines(), text.splitlines(), "golden", "actual",
                                    lineterm="", n=2)
        print("\n".join(list(diff)[:60]))
    check(want == text, f"{name} differs from the golden")


def perfetto(out):
    proto = os.path.join(SHARED, "perfetto", "perfetto_trace.proto")
    if not shutil.which("protoc") or not os.path.exists(proto):
        print("SKIPPED: protoc or shared/perfetto/perfetto_trace.proto absent: "
              "Perfetto golden not compared")
        return False
    texts = {}
    for name in ("perfetto_plain.pftrace", "perfetto.pftrace"):
        with open(os.path.join(out, name), "rb") as f:
            r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I",
                                os.path.dirname(proto), proto], stdin=f,
                               capture_output=True)
        check(r.returncode == 0, f"protoc cannot decode {name}: {r.stderr.decode()[:300]}")
        texts[name] = r.stdout.decode("utf-8", "replace")
    plain = texts["perfetto_plain.pftrace"]
    # Wire-type mistakes show up as bare numbered fields ("47: 7").
    check(not re.search(r"^\s*\d+: ", plain, re.M), "unknown/mis-typed fields in the plain trace")
    check("compressed_packets" in texts["perfetto.pftrace"], "compressed file has no chunk")
    check(plain.count("type: TYPE_SLICE_BEGIN") == 14, "14 slice begins")
    check(plain.count("type: TYPE_SLICE_END") == 14, "14 slice ends")
    # Two flows, the second reusing id 1 after the first ended, in the current fixed64 fields
    # 47/48 (flow_ids / terminating_flow_ids), never in the deprecated varint fields 36/42
    # (src/writers/perfetto/perfetto.c put_flow).
    check(re.findall(r"^\s*(?:terminating_)?flow_ids: (\d+)", plain, re.M) == ["1"] * 4 and
          plain.count("terminating_flow_ids:") == 2, "2 flows with id 1")
    check(not re.search(r"^\s*(?:terminating_)?flow_ids_old: ", plain, re.M),
          "no deprecated varint flow ids")
    check("pid: 0\n" not in plain and "tid: 0\n" not in plain, "no pid/tid 0")
    golden("perfetto.txtpb", plain)
    check_absolute_times(out, plain)
    return True


def check_absolute_times(out, plain):
    """The Perfetto timestamps are deltas on each sequence's incremental clock (snapshot value
    0 = trace time 0) and packets put their timestamp after the event: summing the deltas per
    sequence, in file order, and pairing BEGIN/END per sequence must give exactly the slices
    (begin ns, duration ns) that trace.json writes as absolute times from the same model."""
    clock, open_, got = {}, {}, []
    for pkt in re.split(r"^packet \{$", plain, flags=re.M)[1:]:
        seq = re.search(r"^  trusted_packet_sequence_id: (\d+)$", pkt, re.M)
        ts = re.search(r"^  timestamp: (\d+)$", pkt, re.M)
        typ = re.search(r"^    type: (TYPE_\w+)$", pkt, re.M)
        if "clock_snapshot {" in pkt and seq:
            clock[seq.group(1)] = 0
        if not (seq and ts and typ):
            continue
        k = seq.group(1)
        check(k in clock, f"event on sequence {k} before its clock snapshot")
        clock[k] = clock.get(k, 0) + int(ts.group(1))
        if typ.group(1) == "TYPE_SLICE_BEGIN":
            open_.setdefault(k, []).append(clock[k])
        elif typ.group(1) == "TYPE_SLICE_END":
            b = open_[k].pop()
            got.append((b, clock[k] - b))
    with open(os.path.join(out, "trace.json"), encoding="utf-8") as f:
        xs = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    want = sorted((round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in xs)
    check(sorted(got) == want and len(got) == 14,
          f"Perfetto delta timestamps resolve to {sorted(got)}, trace.json has {want}")


def chrome(out):
    path = os.path.join(out, "trace.json")
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    doc = json.loads(raw)
    check(doc.get("displayTimeUnit") == "ns", "displayTimeUnit ns")
    ev = doc["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X"]
    check(len(xs) == 14, f"14 X events, got {len(xs)}")
    check(len([e for e in ev if e["ph"] == "C"]) == 9, "9 counter samples")
    s = [e for e in ev if e["ph"] == "s"]
    fl = [e for e in ev if e["ph"] == "f"]
    check(len(s) == 2 and len(fl) == 2, "2 flow starts and ends")
    check(all(e.get("bp") == "e" for e in fl), "flow ends bind to the enclosing slice")
    check(sorted(e["id"] for e in s) == sorted(e["id"] for e in fl), "flow ids pair up")
    for e in ev:
        check(e["pid"] != 0 and e["tid"] != 0, f"pid/tid 0 in {e}")
    meta = {(e["name"], e["pid"], e["tid"]): e["args"] for e in ev if e["ph"] == "M"}
    procs = {a["name"] for (n, _, _), a in meta.items() if n == "process_name"}
    check(procs == {"BM1688 device 0", 'app "quoted" (pid 4242)'}, f"process names {procs}")
    threads = {a["name"] for (n, _, _), a in meta.items() if n == "thread_name"}
    check("main\tthread" in threads and "Core 0 GDMA" in threads, f"thread names {threads}")
    check(any(n == "process_sort_index" for (n, _, _) in meta), "process_sort_index")
    check(any(n == "thread_sort_index" for (n, _, _) in meta), "thread_sort_index")
    names = {e["name"] for e in xs}
    for want in ("MatMul\n<\x01>", "launch\\kernel", "conv.normal", "mm.normal", "tensorLd"):
        check(want in names, f"slice name {want!r} round-trips")
    op = next(e for e in xs if e["name"] == "MatMul\n<\x01>")
    check(op["args"]["attr.path"] == "C:\\tmp\\x</script>", "backslashes and </ round-trip")
    check(op["args"]["flops"] == 1048576 and op["args"]["delta"] == -3, "integer args")
    check(op["args"]["weight_sparse_ratio"] == 0.25, "real args")
    check("</script>" not in raw, "</ is escaped for HTML embedding")
    # Timestamps: microseconds with exactly three decimals, never exponents.
    for m in re.finditer(r'"(ts|dur)":([^,}]*)', raw):
        check(re.fullmatch(r"-?\d+\.\d{3}", m.group(2)) is not None, f"ts format {m.group(0)}")
    ld = next(e for e in xs if e["name"] == "tensorLd" and e["ts"] == 0.05)
    check(raw.count('"ts":0.050,"dur":0.350') == 1 and ld["dur"] == 0.35, "ns-exact us")
    check(ld["args"]["DDR Bandwidth(GB/s)"] == 23.339, "bandwidth arg")
    # Nesting on every thread: intervals either nest or are disjoint.
    by_tid = {}
    for e in xs:
        by_tid.setdefault((e["pid"], e["tid"]), []).append((round(e["ts"] * 1000),
                                                            round((e["ts"] + e["dur"]) * 1000)))
    for key, iv in by_tid.items():
        iv.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for b, e in iv:
            while stack and stack[-1] <= b:
                stack.pop()
            check(not stack or e <= stack[-1], f"partial overlap on {key}: [{b},{e})")
            stack.append(e)
    golden("trace.json", raw)


def sqlite(out):
    db = os.path.join(out, "profile.db")
    if not shutil.which("sqlite3"):
        print("SKIPPED: sqlite3 shell absent: README queries not run through the CLI")
        import sqlite3
        run = lambda q: [tuple(str(c) for c in r) for r in sqlite3.connect(db).execute(q)]
    else:
        def run(q):
            r = subprocess.run(["sqlite3", "-bail", "-separator", "|", db, q],
                               capture_output=True, text=True)
            check(r.returncode == 0 and not r.stderr, f"sqlite3 failed on {q}: {r.stderr}")
            return [tuple(line.split("|")) for line in r.stdout.splitlines()]
    # README query 1, verbatim: "mm.normal" in double quotes is not a column, so SQLite
    # reads it as a string literal.
    rows = run('select * from slice s where s.name="mm.normal" order by dur desc')
    check([(r[5], r[2]) for r in rows] == [("mm.normal", "500"), ("mm.normal", "100")],
          f"query 1 rows {rows}")
    # README query 2: DMA commands with DDR bandwidth between 5 and 20 GB/s. The fixture has
    # 40.5545, 23.339 and 10.0392 (512 B in 51 cycles at 1 GHz).
    rows = run("select s.name, s.ts, a.real_value from slice s join args a on "
               "s.arg_set_id = a.arg_set_id where a.key = 'debug.DDR Bandwidth(GB/s)' and "
               "a.real_value between 5 and 20")
    check(rows == [("tensorSt", "950", "10.0392")], f"query 2 rows {rows}")
    # README query 3: uArch Rate is a string "x.x%"; CAST takes its numeric prefix.
    rows = run("select s.name, a.display_value from slice s join args a on "
               "s.arg_set_id = a.arg_set_id where a.key = 'debug.uArch Rate' and "
               "CAST(a.display_value AS DOUBLE) < 40")
    check(rows == [("arith.add", "37.5%")], f"query 3 rows {rows}")
    # Perfetto-style joins and key spelling.
    rows = run("select t.name, count(*) from slice s join thread_track tt on s.track_id = tt.id "
               "join thread t using(utid) group by t.name")
    check(rows == [("main\tthread", "4")], f"thread_track join {rows}")
    rows = run("select key, value_type, string_value from args where key like 'debug.attr%'")
    check(rows == [("debug.attr_path", "string", "C:\\tmp\\x</script>")], f"sanitised key {rows}")
    rows = run("select value_type, int_value, display_value from args "
               "where key = 'debug.delta'")
    check(rows == [("int", "-3", "-3")], f"int arg {rows}")
    rows = run("select count(*) from flow f join slice a on a.id = f.slice_out "
               "join slice b on b.id = f.slice_in")
    check(rows == [("2",)], f"flows {rows}")
    rows = run("select s.depth, p.ts, p.category from slice s join slice p "
               "on s.parent_id = p.id where s.name = 'launch\\kernel'")
    check(rows == [("2", "100", "op")], f"parent {rows}")
    rows = run("select count(*) from counter c join counter_track t on c.track_id = t.id")
    check(rows == [("9",)], f"counters {rows}")
    rows = run("explain query plan select * from slice s where s.name='mm.normal'")
    check(any("slice_name" in " ".join(r) for r in rows), f"query 1 uses the name index {rows}")
    rows = run("explain query plan select s.name from slice s join args a on "
               "s.arg_set_id = a.arg_set_id where a.key = 'debug.DDR Bandwidth(GB/s)' and "
               "a.real_value between 5 and 20")
    check(any("arg_value_key_real (key_id=? AND real_value>? AND real_value<?)" in " ".join(r)
              for r in rows), f"query 2 uses the (key, real_value) index {rows}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 1
    out = tempfile.mkdtemp(prefix="tp_trace_outputs.")
    try:
        r = subprocess.run([sys.argv[1], out])
        check(r.returncode == 0, "trace_fixture_write failed")
        if r.returncode == 0:
            perfetto(out)
            chrome(out)
            sqlite(out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("trace outputs: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
