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
import shutil
import sqlite3
import struct
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


DUMP = os.path.join(SHARED, "testdata", "sophgo", "bm1688_resnet50")


def slow_dump(tmp, slow):
    """Copies the BM1688 dump and, in the copy's iter0.profile, adds slow[layer] cycles to the
    end time of every TIU PMU record of core 0 that belongs to that layer (records are 32
    bytes: u32 start, u32 end, u64 with the 16-bit 0-based inst_id; the first MONITOR_BD block,
    type 3, is core 0 — specs/sophgo-bmprofile.md §4.5). Returns the copy's path."""
    out = os.path.join(tmp, "slowed")
    shutil.copytree(DUMP, out)
    os.chmod(out, 0o755)
    ref = os.path.join(tmp, "ref")
    r = run(DUMP, ref, "--sqlite", "-q", "--disable_web", "--disable_doc", "--disable_perfetto")
    check(r.returncode == 0, "reference conversion: %s" % r.stderr)
    db = sqlite3.connect(os.path.join(ref, "profile.db"))
    tiu = db.execute("select t.id from track t join track p on t.parent_id = p.id "
                     "where t.name = 'TIU' and p.name = 'Core 0'").fetchone()[0]
    cmds = {}
    for layer, cmd in db.execute(
            "select l.int_value, c.int_value from slice s "
            "join args l on l.arg_set_id = s.arg_set_id and l.key = 'debug.Layer Id' "
            "join args c on c.arg_set_id = s.arg_set_id and c.key = 'debug.Cmd Id' "
            "where s.track_id = ?", (tiu,)):
        if layer in slow:
            cmds[cmd - 1] = slow[layer]  # Cmd Id = inst_id + 1
    db.close()
    path = os.path.join(out, "iter0.profile")
    os.chmod(path, 0o644)
    data = bytearray(open(path, "rb").read())
    off, seen_bd, changed = 0, False, 0
    while off + 8 <= len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        if btype == 3 and not seen_bd:
            seen_bd = True
            for rec in range(off + 8, off + 8 + blen - 31, 32):
                start, end, word = struct.unpack_from("<IIQ", data, rec)
                if start == 0 or end == 0:
                    break
                if (word & 0xFFFF) in cmds:
                    struct.pack_into("<I", data, rec + 4, end + cmds[word & 0xFFFF])
                    changed += 1
        off += 8 + blen
    open(path, "wb").write(data)
    check(changed == len(cmds) and changed >= 4, "slowed %d TIU records of %d" % (changed, len(cmds)))
    return out


def pick_layers(tmp):
    """The two layers with the most TIU commands on core 0 (ties: lower layer id)."""
    ref = os.path.join(tmp, "pick")
    run(DUMP, ref, "--sqlite", "-q", "--disable_web", "--disable_doc", "--disable_perfetto")
    db = sqlite3.connect(os.path.join(ref, "profile.db"))
    rows = db.execute(
        "select l.int_value, count(*) from slice s join track t on s.track_id = t.id "
        "join track p on t.parent_id = p.id "
        "join args l on l.arg_set_id = s.arg_set_id and l.key = 'debug.Layer Id' "
        "where t.name = 'TIU' and p.name = 'Core 0' group by l.int_value "
        "order by count(*) desc, l.int_value limit 2").fetchall()
    db.close()
    return [r[0] for r in rows]


def test_diff(tmp):
    if not os.path.isdir(DUMP):
        print("SKIPPED: %s is absent: diff test not run" % DUMP)
        return
    big, small = pick_layers(tmp)
    # Slow the second layer more, so the ranking cannot come from the original order.
    slowed = slow_dump(tmp, {big: 40000, small: 90000})
    out = os.path.join(tmp, "diff")
    r = run("diff", DUMP, slowed, out)
    check(r.returncode == 0, "diff: exit %d %s" % (r.returncode, r.stderr))
    d = json.load(open(os.path.join(out, "diff.json")))
    layers = d["layers"]
    want = ["(layer %d, core 0)" % small, "(layer %d, core 0)" % big]
    got = [layers[0]["label"], layers[1]["label"]]
    check(all(w in g for w, g in zip(want, got)), "diff ranks %s first, got %s" % (want, got))
    check(layers[0]["delta_us"] > layers[1]["delta_us"] > 0, "slowed layers grew")
    check(all(l["delta_us"] == 0 for l in layers[2:]), "no other layer changed: %s" %
          [l for l in layers[2:] if l["delta_us"] != 0][:3])
    check(all(l["status"] == "both" for l in layers), "every layer matched")
    # Their command type grew by the added cycles (at the 900 MHz TIU clock, truncated per command).
    cmd = d["cmd_types"][0]
    check(cmd["key"].startswith("TIU ") and cmd["delta_us"] > 0, "TIU command type first: %s" % cmd)
    txt = open(os.path.join(out, "diff.txt")).read()
    check("total change:" in txt and ("layer %d, core 0" % small) in txt, "diff.txt")
    html = open(os.path.join(out, "diff.html")).read()
    check("<script type=\"application/json\" id=\"diff-data\">" in html and "http" not in
          html.replace("http://www.w3.org/2000/svg", "").replace("http-equiv", ""),
          "diff.html self-contained")
    # --fail-if-slower: same input never trips; a slower B above the limit exits 4.
    r = run("diff", DUMP, DUMP, os.path.join(tmp, "same"), "--fail-if-slower", "0", "-q")
    check(r.returncode == 0, "same input: exit %d" % r.returncode)
    r = run("diff", DUMP, slowed, os.path.join(tmp, "d2"), "--fail-if-slower", "0", "-q")
    grew = d["total_delta_pct"] > 0
    check(r.returncode == (4 if grew else 0), "fail-if-slower: exit %d (grew %s)" % (r.returncode, grew))
    r = run("diff", DUMP, slowed, os.path.join(tmp, "d3"), "--fail-if-slower", "1000", "-q")
    check(r.returncode == 0, "fail-if-slower 1000: exit %d" % r.returncode)
    r = run("diff", DUMP)
    check(r.returncode == 1, "diff with one input: exit %d" % r.returncode)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_real(tmp)
        test_bad(tmp)
        test_diff(tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("trace e2e: ok")


main()
