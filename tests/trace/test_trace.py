#!/usr/bin/python3
"""test_trace.py TPUPROF SHARED_DIR — end-to-end tests of Chrome-trace JSON inputs.

Converts the three real traces of SHARED_DIR/testdata/traces with every output and checks what
came out against facts read independently from the JSON with Python's json module (event counts
per phase, an exact timestamp), validates the Perfetto trace with `tpuprof check`, and checks
the exit code and `path@0xOFFSET` message of malformed and truncated files; reads the gzip'd
H200 traces (as .json.gz, under another name and on standard input) and checks cut, garbled
and bomb gzip files; lays a Chrome trace and a capture made here next to the real BM1688 dump
(--trace_file). Prints SKIPPED loudly for inputs that are absent.
"""
import gzip
import json
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for tracetest
from tracetest import check, failures, pb_varint

TPUPROF, SHARED = sys.argv[1], sys.argv[2]
TRACES = os.path.join(SHARED, "testdata", "traces")


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
        # Flows: s/f pairs of one cat and id (an f after its s), drawn when both ends bind to a
        # slice; every drawn flow is in all three trace outputs.
        starts = {(e.get("cat"), str(e.get("id"))) for e in ev if e.get("ph") == "s"}
        pairs = sum(1 for e in ev if e.get("ph") == "f" and (e.get("cat"), str(e.get("id"))) in starts)
        m = re.search(r"(\d+) flows", c.stdout)
        pf_flows = int(m.group(1)) if m else -1
        # Slices: X + B/E pairs + i/I + b/e pairs, as Python counts them.
        want = sum(1 for e in ev if e.get("ph") in ("X", "i", "I")) + \
            sum(1 for e in ev if e.get("ph") == "E") + sum(1 for e in ev if e.get("ph") == "e")
        db = sqlite3.connect(os.path.join(out, "profile.db"))
        got = db.execute("select count(*) from slice").fetchone()[0]
        check(got == want, "%s: %d slices in profile.db, want %d" % (name, got, want))
        db_flows = db.execute("select count(*) from flow").fetchone()[0]
        check(db_flows == pf_flows and db_flows <= pairs and (db_flows > 0) == (pairs > 0),
              "%s: %d flows in profile.db, %d in perfetto, %d s/f pairs" % (name, db_flows, pf_flows, pairs))
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


def slices_in_text(ev):
    """Slices as Python counts them: X + i/I + B/E pairs + b/e pairs."""
    return sum(1 for e in ev if e.get("ph") in ("X", "i", "I", "E", "e"))


def db_slices(out):
    db = sqlite3.connect(os.path.join(out, "profile.db"))
    n = db.execute("select count(*) from slice").fetchone()[0]
    db.close()
    return n


def same_outputs(a, b):
    """The files of two output directories, byte for byte (the lock file aside)."""
    names = lambda d: sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d)
                             for f in fs if f != ".tpuprof.lock")
    if names(a) != names(b):
        return False
    return all(open(os.path.join(a, f), "rb").read() == open(os.path.join(b, f), "rb").read()
               for f in names(a))


def test_gzip(tmp):
    """gzip'd traces (.json.gz, another name, standard input) read as their text; a cut, a
    garbled and a bomb gzip are exit 2 with path@0xOFFSET and leave no output."""
    h200 = os.path.join(TRACES, "h200")
    names = ("torch_resnet50_fp32_bs64.pt.trace.json.gz", "torch_resnet50_bf16cl_bs64.pt.trace.json.gz",
             "torch_bert_base_fp16_infer.pt.trace.json.gz", "ort_resnet18_cpu_profile.json.gz")
    first = None
    for name in names:
        path = os.path.join(h200, name)
        if not os.path.exists(path):
            print("SKIPPED: %s is absent" % path)
            continue
        text = gzip.decompress(open(path, "rb").read())
        ev = json.loads(text)
        ev = ev if isinstance(ev, list) else ev["traceEvents"]
        out = os.path.join(tmp, "gz_" + name)
        r = run(path, out, "--sqlite", "--json", "-q")
        check(r.returncode == 0, "%s: exit %d %s" % (name, r.returncode, r.stderr))
        got, want = db_slices(out), slices_in_text(ev)
        check(got == want, "%s: %d slices in profile.db, want %d (the gunzipped JSON's)" % (name, got, want))
        # The text itself converts to the same files.
        plain = os.path.join(tmp, name[:-3])
        open(plain, "wb").write(text)
        out_plain = os.path.join(tmp, "plain_" + name)
        r = run(plain, out_plain, "--sqlite", "--json", "-q")
        check(r.returncode == 0 and same_outputs(out, out_plain), "%s: gzip and text give the same outputs" % name)
        first = first or (path, out)
    if first is None:
        return
    path, out = first
    data = open(path, "rb").read()
    # Under a name that says nothing, and on standard input.
    other = os.path.join(tmp, "trace.bin")
    open(other, "wb").write(data)
    r = run(other, os.path.join(tmp, "gz_other"), "--sqlite", "--json", "-q")
    check(r.returncode == 0 and same_outputs(out, os.path.join(tmp, "gz_other")),
          "gzip under another name: exit %d %s" % (r.returncode, r.stderr))
    r = subprocess.run([TPUPROF, "-", os.path.join(tmp, "gz_stdin"), "--sqlite", "--json", "-q"],
                       input=data, capture_output=True)
    check(r.returncode == 0 and same_outputs(out, os.path.join(tmp, "gz_stdin")),
          "gzip on stdin: exit %d %s" % (r.returncode, r.stderr))
    plain = gzip.decompress(data)
    r = subprocess.run([TPUPROF, "-", os.path.join(tmp, "text_stdin"), "--sqlite", "--json", "-q"],
                       input=plain, capture_output=True)
    check(r.returncode == 0 and same_outputs(out, os.path.join(tmp, "text_stdin")),
          "text on stdin: exit %d %s" % (r.returncode, r.stderr))
    # Cut, garbled (a byte of the deflate data changed), trailing junk, a bomb: exit 2, no output.
    bomb = gzip.compress(b"[" + b" " * (160 << 20), 6)  # 160 KiB, stopped near 90 MB
    bad = {"cut.json.gz": (data[:len(data) // 2], "@0x%x: gzip data cut short" % (len(data) // 2)),
           "garbled.json.gz": (data[:len(data) // 3] + bytes([data[len(data) // 3] ^ 0xff]) + data[len(data) // 3 + 1:],
                               "gzip data corrupt"),
           "junk.json.gz": (data + b"junk", "not another gzip member"),
           "bomb.json.gz": (bomb, "refusing a decompression bomb")}
    for name, (content, msg) in bad.items():
        p = os.path.join(tmp, name)
        open(p, "wb").write(content)
        o = os.path.join(tmp, "out_" + name)
        r = run(p, o)
        check(r.returncode == 2 and r.stderr.startswith("tpuprof: " + p + "@0x") and msg in r.stderr,
              "%s: exit %d %r" % (name, r.returncode, r.stderr))
        check(not os.path.exists(o) or not any(f != ".tpuprof.lock" for f in os.listdir(o)),
              "%s: nothing written" % name)
    # gzip that holds something else: says what was recognised.
    p = os.path.join(tmp, "zip.json.gz")
    open(p, "wb").write(gzip.compress(b"PK\x03\x04 not json"))
    r = run(p, os.path.join(tmp, "out_zip"))
    check(r.returncode == 2 and "it is gzip data, and the text it holds starts with 'P'" in r.stderr,
          "gzip of something else: exit %d %r" % (r.returncode, r.stderr))


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
    # Output folders (profile.db) compare like their inputs: the two folders converted from
    # the dump and its slowed copy rank the same layers first, with the same deltas; a dump
    # against its own folder changes nothing; mixed inputs work.
    folders = []
    for name, src in (("out_a", DUMP), ("out_b", slowed)):
        f = os.path.join(tmp, name)
        r = run(src, f, "--sqlite", "-q", "--disable_web", "--disable_doc", "--disable_perfetto")
        check(r.returncode == 0, "convert %s: %s" % (name, r.stderr))
        folders.append(f)
    for label, a, b in (("folders", folders[0], folders[1]), ("dump vs folder", DUMP, folders[1]),
                        ("folder vs dump", folders[0], slowed)):
        o = os.path.join(tmp, "d_" + label.replace(" ", "_"))
        r = run("diff", a, b, o, "-q")
        check(r.returncode == 0, "diff %s: exit %d %s" % (label, r.returncode, r.stderr))
        f = json.load(open(os.path.join(o, "diff.json")))
        fk = [(l["key"], l["delta_us"]) for l in f["layers"]]
        dk = [(l["key"], l["delta_us"]) for l in layers]
        check(fk[:2] == dk[:2], "%s ranks %s first like the inputs (%s)" % (label, fk[:2], dk[:2]))
        check(sorted(fk) == sorted(dk), "%s: every layer delta as between the inputs" % label)
        check(f["total_delta_us"] == d["total_delta_us"], "%s: total change %s vs %s" %
              (label, f["total_delta_us"], d["total_delta_us"]))
        check([(c["key"], c["delta_us"]) for c in f["cmd_types"]] ==
              [(c["key"], c["delta_us"]) for c in d["cmd_types"]], "%s: command types" % label)
        check(f["engines"] == d["engines"], "%s: engines %s vs %s" % (label, f["engines"],
                                                                     d["engines"]))
    o = os.path.join(tmp, "d_self")
    r = run("diff", DUMP, folders[0], o, "-q")
    f = json.load(open(os.path.join(o, "diff.json")))
    check(r.returncode == 0 and f["total_delta_us"] == 0 and
          all(l["delta_us"] == 0 and l["status"] == "both" for k in
              ("layers", "op_types", "cmd_types") for l in f[k]) and
          len(f["layers"]) == len(layers), "dump vs its own output folder: nothing changed")
    check(f["b"]["source"] == "tpuprof-output: sophgo-bmprofile", "source %s" % f["b"]["source"])
    # A folder without profile.db is refused with a message that says what to do.
    bare = os.path.join(tmp, "bare")
    r = run(DUMP, bare, "-q", "--disable_web", "--disable_doc", "--disable_perfetto")
    r = run("diff", bare, DUMP, os.path.join(tmp, "d4"))
    check(r.returncode == 2 and "without profile.db" in r.stderr and "--sqlite" in r.stderr,
          "output folder without profile.db: exit %d %s" % (r.returncode, r.stderr))
    # Something that is not a tpuprof database: path-named error, exit 2.
    junk = os.path.join(tmp, "junk")
    os.makedirs(junk, exist_ok=True)
    open(os.path.join(junk, "profile.db"), "wb").write(b"not a database" * 100)
    r = run("diff", junk, DUMP, os.path.join(tmp, "d5"))
    check(r.returncode == 2 and os.path.join(junk, "profile.db") in r.stderr,
          "junk profile.db: exit %d %s" % (r.returncode, r.stderr))


def test_correlation_flows(tmp):
    """The Kineto trace with its s/f flow events removed: the runtime -> kernel / memcpy
    launch links come back from args.correlation, in profile.db, trace.json and Perfetto."""
    src = os.path.join(TRACES, "pytorch_kineto_alexnet_cuda.json")
    if not os.path.isfile(src):
        print("SKIPPED: %s is absent: correlation flow test not run" % src)
        return
    d = json.load(open(src))
    d["traceEvents"] = [e for e in d["traceEvents"] if e.get("ph") not in ("s", "f")]
    path = os.path.join(tmp, "kineto_noflow.json")
    json.dump(d, open(path, "w"))
    xs = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    runtime = {}
    for e in xs:
        c = e.get("args", {}).get("correlation")
        if c is not None and (e["cat"].endswith("_runtime") or e["cat"].endswith("_driver")):
            runtime.setdefault(int(c), e["ts"])
    want = sum(1 for e in xs if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset") and
               int(e["args"].get("correlation", -1)) in runtime and
               runtime[int(e["args"]["correlation"])] <= e["ts"])
    out = os.path.join(tmp, "kineto_noflow")
    r = run(path, out, "--json", "--sqlite", "-q", "--disable_web", "--disable_doc")
    check(r.returncode == 0, "kineto without flows: %s" % r.stderr)
    db = sqlite3.connect(os.path.join(out, "profile.db"))
    got = db.execute("select count(*) from flow").fetchone()[0]
    # Every flow goes from a runtime call to a device activity of the same correlation.
    bad = db.execute(
        "select count(*) from flow f join slice a on a.id = f.slice_out join slice b on "
        "b.id = f.slice_in join args x on x.arg_set_id = a.arg_set_id and "
        "x.key = 'debug.correlation' join args y on y.arg_set_id = b.arg_set_id and "
        "y.key = 'debug.correlation' where x.int_value != y.int_value").fetchone()[0]
    db.close()
    c = run("check", os.path.join(out, "perfetto.pftrace"))
    m = re.search(r"(\d+) flows", c.stdout)
    tj = json.load(open(os.path.join(out, "trace.json")))
    tj_flows = sum(1 for e in tj["traceEvents"] if e.get("ph") == "f")
    check(want > 50 and got == want and bad == 0 and m and int(m.group(1)) == want and
          tj_flows == want, "correlation flows: db %d (bad %d), perfetto %s, trace.json %d, want %d"
          % (got, bad, m.group(1) if m else None, tj_flows, want))


def test_diff_trace_folder(tmp):
    """A Chrome trace against its own output folder: every operator matched, nothing changed."""
    src = os.path.join(TRACES, "pytorch_kineto_alexnet_cuda.json")
    if not os.path.isfile(src):
        print("SKIPPED: %s is absent: trace folder diff not run" % src)
        return
    f = os.path.join(tmp, "kineto_out")
    r = run(src, f, "--sqlite", "-q", "--disable_web", "--disable_doc", "--disable_perfetto")
    check(r.returncode == 0, "convert kineto: %s" % r.stderr)
    o = os.path.join(tmp, "d_kineto")
    r = run("diff", src, f, o, "-q")
    check(r.returncode == 0, "diff kineto vs folder: %s" % r.stderr)
    d = json.load(open(os.path.join(o, "diff.json")))
    # Host operators (37 names: kernels and runtime calls are no operators) and the device
    # work, ranked as command types ("kernel <name>", "memcpy <name>", ...).
    check(len(d["ops"]) > 30 and all(x["delta_us"] == 0 and x["status"] == "both" and
                                     x["a_count"] == x["b_count"] for x in d["ops"] + d["op_types"]),
          "kineto vs its folder: %d ops, all unchanged" % len(d["ops"]))
    check(len(d["cmd_types"]) > 10 and all(x["delta_us"] == 0 and x["status"] == "both" and
                                           x["key"].split(" ")[0] in ("kernel", "memcpy", "memset")
                                           for x in d["cmd_types"]),
          "kineto vs its folder: %d device rows, all unchanged" % len(d["cmd_types"]))
    check(d["total_delta_us"] == 0, "kineto total unchanged")


def pb_fields(b):
    """Top-level protobuf wire fields of b: (field, wire type, value)."""
    i = 0
    while i < len(b):
        k, i = pb_varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = pb_varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        elif w == 2:
            n, i = pb_varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % w)
        yield f, w, v


def perfetto_slices(path):
    """Decodes a .pftrace with protoc (after inflating its compressed_packets chunks into a
    plain Trace) and returns [(track name, slice name, begin ns, end ns)], resolving interned
    names, incremental clocks (clock 64) and per-sequence default tracks."""
    proto = os.path.join(SHARED, "perfetto", "perfetto_trace.proto")
    import zlib
    plain = bytearray()
    for f, w, v in pb_fields(open(path, "rb").read()):
        chunk = [x for x in pb_fields(v) if x[0] == 50]
        if chunk:
            plain += zlib.decompress(chunk[0][2])
        else:
            n = len(v)
            plain += b"\x0a"
            while True:
                c, n = n & 0x7F, n >> 7
                plain.append(c | (0x80 if n else 0))
                if not n:
                    break
            plain += v
    r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", os.path.dirname(proto),
                        proto], input=bytes(plain), capture_output=True)
    check(r.returncode == 0, "protoc: %s" % r.stderr[:300])
    # Protobuf text format into nested dicts (every field a list).
    tokens = re.findall(r'(\w+) \{|\}|(\w+): ("(?:[^"\\]|\\.)*"|\S+)', r.stdout.decode())
    root, stack = {}, []
    cur = root
    for open_name, name, val in tokens:
        if open_name:
            node = {}
            cur.setdefault(open_name, []).append(node)
            stack.append(cur)
            cur = node
        elif name:
            cur.setdefault(name, []).append(val.strip('"'))
        else:
            cur = stack.pop()
    tracks, names, clock, default_track, open_ = {}, {}, {}, {}, {}
    out = []
    for pk in root.get("packet", []):
        seq = pk.get("trusted_packet_sequence_id", ["0"])[0]
        for td in pk.get("track_descriptor", []):
            nm = td.get("name", [""])[0]
            for th in td.get("thread", []):
                nm = th.get("thread_name", [nm])[0]
            tracks[td["uuid"][0]] = nm
        for cs in pk.get("clock_snapshot", []):
            for c in cs.get("clocks", []):
                if c["clock_id"][0] == "64":
                    clock[seq] = int(c["timestamp"][0])
        for dflt in pk.get("trace_packet_defaults", []):
            for ted in dflt.get("track_event_defaults", []):
                default_track[seq] = ted["track_uuid"][0]
        for idata in pk.get("interned_data", []):
            for en in idata.get("event_names", []):
                names[(seq, en["iid"][0])] = en["name"][0]
        if "track_event" not in pk:
            continue
        clock[seq] = clock.get(seq, 0) + int(pk.get("timestamp", ["0"])[0])
        te = pk["track_event"][0]
        track = te.get("track_uuid", [default_track.get(seq)])[0]
        kind = te.get("type", [""])[0]
        if kind == "TYPE_SLICE_BEGIN":
            nm = te["name"][0] if "name" in te else names.get((seq, te.get("name_iid", ["?"])[0]), "?")
            open_.setdefault(track, []).append((nm, clock[seq]))
        elif kind == "TYPE_SLICE_END":
            nm, t0 = open_[track].pop()
            out.append((tracks.get(track, "?"), nm, t0, clock[seq]))
    return out


def test_trace_file(tmp):
    """--trace_file on the real BM1688 dump (no tail meta: the first-tpudnn-event fallback of
    sophgo-cdm.md §10): the host slices and the device commands land at the expected ns in the
    decoded Perfetto trace."""
    proto = os.path.join(SHARED, "perfetto", "perfetto_trace.proto")
    if not os.path.isdir(DUMP) or not shutil.which("protoc") or not os.path.exists(proto):
        print("SKIPPED: BM1688 dump, protoc or perfetto_trace.proto absent: --trace_file test not run")
        return
    host = [
        {"ph": "X", "cat": "cpu_op", "name": "PyTorch Profiler (0)", "pid": 1, "tid": 1,
         "ts": 1000000, "dur": 10000},
        {"ph": "X", "cat": "tpudnn", "name": "enable_profile", "pid": 1, "tid": 1,
         "ts": 1000100, "dur": 50},
        {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1,
         "ts": 1000200.5, "dur": 300},
        {"ph": "X", "cat": "tpudnn", "name": "tpudnnConv2d", "pid": 1, "tid": 1,
         "ts": "1000210", "dur": 20},
        {"ph": "X", "cat": "tpudnn", "name": "disable_profile", "pid": 1, "tid": 1,
         "ts": 1003000, "dur": 10},
    ]
    hp = os.path.join(tmp, "host.json")
    json.dump({"traceEvents": host}, open(hp, "w"))
    out = os.path.join(tmp, "merged")
    r = run(DUMP, out, "--trace_file", hp, "-q", "--disable_doc", "--disable_web")
    check(r.returncode == 0, "--trace_file: exit %d %s" % (r.returncode, r.stderr))
    sl = perfetto_slices(os.path.join(out, "perfetto.pftrace"))
    by = {}
    for tr, nm, t0, t1 in sl:
        by.setdefault(nm, []).append((tr, t0, t1))
    # Host time 0 = 1000000 µs; the device starts where enable_profile (the first tpudnn
    # event) ends: 150 µs.
    check(by.get("aten::conv2d") == [("cpu op", 200500, 500500)], "cpu op at 200.5 µs: %s" % by.get("aten::conv2d"))
    check(by.get("tpudnnConv2d") == [("tpudnn op", 210000, 230000)], "tpudnn op at 210 µs: %s" % by.get("tpudnnConv2d"))
    for gone in ("enable_profile", "disable_profile", "PyTorch Profiler (0)"):
        check(gone not in by, "%s dropped" % gone)
    tiu = [t0 for tr, nm, t0, t1 in sl if tr == "TIU"]
    check(min(tiu) == 150000, "first TIU command at 150 µs: %s" % min(tiu))
    # Every device command moved by exactly 150 µs against a conversion without the trace.
    plain = os.path.join(tmp, "plain")
    run(DUMP, plain, "-q", "--disable_doc", "--disable_web")
    base = sorted((tr, nm, t0) for tr, nm, t0, t1 in perfetto_slices(os.path.join(plain, "perfetto.pftrace")))
    moved = sorted((tr, nm, t0 - 150000) for tr, nm, t0, t1 in sl if tr not in ("cpu op", "tpudnn op"))
    check(base == moved, "device slices shifted by 150 µs (%d vs %d slices)" % (len(base), len(moved)))
    r = run(DUMP, os.path.join(tmp, "m2"), "--trace_file", os.path.join(tmp, "nope.json"), "-q")
    check(r.returncode == 2, "missing trace file: exit %d" % r.returncode)


def test_trace_file_capture(tmp):
    """--trace_file with a libtpuprof capture (recorded here by tests/support/py_capture.py with
    the build's Python package) on the real BM1688 dump: the capture's threads and the device's
    engines in one Perfetto trace; the device placed where the capture's first runtime call
    (enable_profile) ends, every device command moved by that much against a plain conversion,
    and every capture slice at the ns of the capture converted alone."""
    proto = os.path.join(SHARED, "perfetto", "perfetto_trace.proto")
    if not os.path.isdir(DUMP) or not shutil.which("protoc") or not os.path.exists(proto):
        print("SKIPPED: BM1688 dump, protoc or perfetto_trace.proto absent: capture --trace_file test not run")
        return
    maker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support", "py_capture.py")
    r = subprocess.run([sys.executable, maker, os.path.dirname(os.path.abspath(TPUPROF)),
                        os.path.join(tmp, "pycap")], capture_output=True, text=True)
    if r.returncode == 77:
        print(r.stdout.strip() + " (capture --trace_file test not run)")
        return
    check(r.returncode == 0, "py_capture.py: exit %d %s" % (r.returncode, r.stderr[-500:]))
    if r.returncode:
        return
    cap = r.stdout.strip().splitlines()[-1]
    alone, merged = os.path.join(tmp, "cap_alone"), os.path.join(tmp, "cap_merged")
    r = run(cap, alone, "-q", "--disable_doc", "--disable_web")
    check(r.returncode == 0, "capture alone: exit %d %s" % (r.returncode, r.stderr))
    r = run(DUMP, merged, "--trace_file", cap, "-q", "--disable_doc", "--disable_web")
    check(r.returncode == 0, "--trace_file CAPTURE: exit %d %s" % (r.returncode, r.stderr))
    summ = json.load(open(os.path.join(merged, "summary.json")))
    meta = summ.get("metadata", {})
    meta = dict(meta) if isinstance(meta, list) else meta
    check(meta.get("host_trace.alignment") == "first tpudnn event",
          "aligned by the first runtime call: %s" % meta.get("host_trace.alignment"))
    check(any("host capture" in n and "merged" in n and "2 threads" in n for n in summ.get("notes", [])),
          "merge note: %s" % summ.get("notes"))
    sl = perfetto_slices(os.path.join(merged, "perfetto.pftrace"))
    threads = ("host loop", "decoder")
    host = sorted(x for x in sl if x[0] in threads)
    want = sorted(x for x in perfetto_slices(os.path.join(alone, "perfetto.pftrace")) if x[0] in threads)
    names = {(tr, nm) for tr, nm, t0, t1 in host}
    for tr, nm in [("host loop", "resnet50"), ("host loop", "preprocess"), ("host loop", "input.norm"),
                   ("host loop", "input.norm.sub"), ("host loop", "prob"), ("host loop", "bmrt_launch_tensor"),
                   ("host loop", "enable_profile"), ("decoder", "decode")]:
        check((tr, nm) in names, "capture slice %s on thread %s in the merged trace" % (nm, tr))
    check(len(want) > 20 and host == want,
          "capture slices at their own ns (%d merged vs %d alone)" % (len(host), len(want)))
    enable_end = [t1 for tr, nm, t0, t1 in host if nm == "enable_profile"]
    check(len(enable_end) == 1, "one enable_profile: %s" % enable_end)
    # The device starts where enable_profile ends: every device command moved by that much.
    plain = os.path.join(tmp, "plain_cap")
    run(DUMP, plain, "-q", "--disable_doc", "--disable_web")
    base = sorted((tr, nm, t0) for tr, nm, t0, t1 in perfetto_slices(os.path.join(plain, "perfetto.pftrace")))
    dev = [x for x in sl if x[0] not in threads]
    off = enable_end[0] if enable_end else 0
    moved = sorted((tr, nm, t0 - off) for tr, nm, t0, t1 in dev)
    check(len(base) > 500 and base == moved,
          "device slices moved by enable_profile's end, %d ns (%d vs %d slices)" % (off, len(base), len(moved)))
    tiu = [t0 for tr, nm, t0, t1 in dev if tr == "TIU"]
    tiu0 = [t0 for tr, nm, t0 in base if tr == "TIU"]
    check(tiu and tiu0 and min(tiu) == off + min(tiu0) and off > 0,
          "first TIU command %s ns after enable_profile's end" % (min(tiu0) if tiu0 else None))

def step_trace(path, steps, conv_us):
    """A PyTorch-like trace: ProfilerStep#i annotations of the given µs durations, each holding
    an aten::conv2d of conv_us µs and an aten::relu of 10 µs."""
    ev, t = [], 1000000
    for i, d in enumerate(steps):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i, "pid": 1,
                   "tid": 1, "ts": t, "dur": d})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1,
                   "ts": t + 1, "dur": conv_us})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1,
                   "ts": t + 2 + conv_us, "dur": 10})
        t += d + 50
    json.dump({"traceEvents": ev}, open(path, "w"))


def test_diff_steps(tmp):
    """Noise-aware diff of two traces with several steps: medians, spreads, within noise."""
    a, b = os.path.join(tmp, "steps_a.json"), os.path.join(tmp, "steps_b.json")
    step_trace(a, [1000, 1040, 980, 1010, 990], 300)
    step_trace(b, [1005, 1030, 995, 1000, 1020], 360)
    out = os.path.join(tmp, "diff_steps")
    r = run("diff", a, b, out, "-q")
    check(r.returncode == 0, "diff steps: exit %d %s" % (r.returncode, r.stderr))
    d = json.load(open(os.path.join(out, "diff.json")))
    check(d["noise_aware"] is True and d["a"]["steps"] == 5 and d["b"]["steps"] == 5, "5 steps each")
    check(d["a"]["total_us"] == 1000.0 and d["b"]["total_us"] == 1005.0, "medians 1000 / 1005 µs")
    check(d["a"]["spread_us"] == 30.0 and d["within_noise"] is True, "spread 30 µs, within noise")
    ops = {o["key"]: o for o in d["ops"]}
    check(ops["aten::conv2d"]["delta_us"] == 60.0 and d["ops"][0]["key"] == "aten::conv2d",
          "conv2d +60 µs per step, ranked first")
    check(ops["aten::relu"]["delta_us"] == 0.0, "relu unchanged")
    txt = open(os.path.join(out, "diff.txt")).read()
    check("within noise" in txt and "median of 5 steps" in txt, "diff.txt says within noise")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_real(tmp)
        test_bad(tmp)
        test_gzip(tmp)
        test_diff(tmp)
        test_trace_file(tmp)
        test_trace_file_capture(tmp)
        test_diff_steps(tmp)
        test_diff_trace_folder(tmp)
        test_correlation_flows(tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("trace e2e: ok")


main()
