#!/usr/bin/python3
"""trace_cli_test.py — the trace outputs through the real CLI:

  1. the real BM1688 dump ($TP_SHARED_DIR/testdata/sophgo/bm1688_resnet50) converted with
     `tpuprof IN OUT --json --sqlite`: `tpuprof check` accepts perfetto.pftrace; the three
     outputs agree on slice and flow counts; the README queries run verbatim in the sqlite3
     shell and return what an independent computation over trace.json (Python) says — the
     slowest conv.normal and its duration, the DMA commands with DDR bandwidth in [5, 20],
     the TIU commands with uArch Rate < 40 %; the per-core TIU/GDMA record counts equal the
     reference converter's (PROVENANCE.txt);
  2. a small generated dump (tpuprof-gendump, 2 cores x 14 commands): its Perfetto trace,
     decompressed in Python and decoded by protoc, equals the reviewed golden
     tests/golden/gendump_small/perfetto.txtpb (TP_UPDATE_GOLDEN=1 rewrites it).

Usage: trace_cli_test.py TPUPROF GENDUMP. Exit 77 = everything skipped (printed loudly).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for tracetest
from tracetest import check, failures, pb_varint

SRC = os.environ.get("TP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("TP_SHARED_DIR", os.path.join(SRC, "..", "shared"))
UPDATE = os.environ.get("TP_UPDATE_GOLDEN") == "1"


def sql(db, q):
    r = subprocess.run(["sqlite3", "-bail", "-separator", "|", db, q], capture_output=True,
                       text=True)
    check(r.returncode == 0 and not r.stderr, f"sqlite3 failed on {q}: {r.stderr}")
    return [tuple(line.split("|")) for line in r.stdout.splitlines()]


def real_dump(tpuprof, tmp):
    src = os.path.join(SHARED, "testdata", "sophgo", "bm1688_resnet50")
    if not os.path.isdir(src):
        print(f"SKIPPED: {src} is absent: real-dump trace checks not run")
        return False
    if not shutil.which("sqlite3"):
        print("SKIPPED: sqlite3 shell absent (scripts/deps.sh test): real-dump checks not run")
        return False
    out = os.path.join(tmp, "real")
    r = subprocess.run([tpuprof, src, out, "--json", "--sqlite", "--disable_doc",
                        "--disable_web", "-q"], capture_output=True, text=True)
    check(r.returncode == 0, f"tpuprof failed: {r.stderr}")
    if r.returncode:
        return True
    r = subprocess.run([tpuprof, "check", os.path.join(out, "perfetto.pftrace")],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"tpuprof check rejects the real trace: {r.stderr}")
    m = re.search(r"(\d+) slices .* (\d+) flows", r.stdout)
    check(m is not None, f"check output {r.stdout}")
    with open(os.path.join(out, "trace.json"), encoding="utf-8") as f:
        ev = json.load(f)["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X"]
    db = os.path.join(out, "profile.db")
    n_sql = int(sql(db, "select count(*) from slice")[0][0])
    if m:
        check(int(m.group(1)) == len(xs) == n_sql,
              f"slice counts: perfetto {m.group(1)}, json {len(xs)}, sqlite {n_sql}")
        flows_json = len([e for e in ev if e["ph"] == "f"])
        flows_sql = int(sql(db, "select count(*) from flow")[0][0])
        check(int(m.group(2)) == flows_json == flows_sql,
              f"flow counts: perfetto {m.group(2)}, json {flows_json}, sqlite {flows_sql}")
    # Record counts per core and engine as the reference converter wrote them.
    rows = sql(db, "select t.core, t.name, count(*) from slice s join track t on "
                   "s.track_id = t.id where t.name in ('TIU', 'GDMA') group by 1, 2")
    check(sorted(rows) == [("0", "GDMA", "145"), ("0", "TIU", "257"), ("1", "GDMA", "21"),
                           ("1", "TIU", "47")], f"records per core {rows}")

    # README query 1 on conv.normal: the slowest one and its duration, against trace.json.
    convs = sorted(((round(e["dur"] * 1000), round(e["ts"] * 1000)) for e in xs
                    if e["name"] == "conv.normal"), key=lambda x: (-x[0], x[1]))
    rows = sql(db, 'select ts, dur from slice s where s.name="conv.normal" order by dur desc')
    check(len(rows) == len(convs) > 0, f"conv.normal count {len(rows)} vs {len(convs)}")
    if rows and convs:
        check((int(rows[0][1]), int(rows[0][0])) == convs[0],
              f"slowest conv.normal: sqlite {rows[0]} json {convs[0]}")
        print(f"slowest conv.normal: ts {convs[0][1]} ns, dur {convs[0][0]} ns")
    # README query 2.
    want = sorted((e["name"], round(e["ts"] * 1000)) for e in xs
                  if 5 <= e.get("args", {}).get("DDR Bandwidth(GB/s)", -1) <= 20)
    rows = sql(db, "select s.name, s.ts from slice s join args a on "
                   "s.arg_set_id = a.arg_set_id where a.key = 'debug.DDR Bandwidth(GB/s)' "
                   "and a.real_value between 5 and 20")
    got = sorted((n, int(t)) for n, t in rows)
    check(got == want and len(want) > 0, f"query 2: {len(got)} rows, json says {len(want)}")
    print(f"DMA commands with 5 <= DDR GB/s <= 20: {len(want)}")
    # README query 3.
    want = sorted((e["name"], round(e["ts"] * 1000)) for e in xs
                  if "uArch Rate" in e.get("args", {}) and
                  float(e["args"]["uArch Rate"].rstrip("%")) < 40)
    rows = sql(db, "select s.name, s.ts from slice s join args a on "
                   "s.arg_set_id = a.arg_set_id where a.key = 'debug.uArch Rate' and "
                   "CAST(a.display_value AS DOUBLE) < 40")
    got = sorted((n, int(t)) for n, t in rows)
    check(got == want, f"query 3: {len(got)} rows, json says {len(want)}")
    print(f"TIU commands with uArch Rate < 40 %: {len(want)}")
    return True


def perfetto_text(path, proto):
    """The trace's packets with compressed chunks expanded, as protoc text."""
    data = open(path, "rb").read()
    plain = bytearray()
    pos = 0

    while pos < len(data):
        start = pos
        check(data[pos] == 0x0A, "top-level record is not Trace.packet")
        n, p = pb_varint(data, pos + 1)
        body = data[p:p + n]
        pos = p + n
        if body[:2] == b"\x92\x03":  # compressed_packets (field 50, LEN)
            zn, q = pb_varint(body, 2)
            plain += zlib.decompress(body[q:q + zn])
        else:
            plain += data[start:pos]
    r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I",
                        os.path.dirname(proto), proto], input=bytes(plain),
                       capture_output=True)
    check(r.returncode == 0, f"protoc: {r.stderr.decode()[:300]}")
    return r.stdout.decode("utf-8", "replace")


def gendump_golden(tpuprof, gendump, tmp):
    proto = os.path.join(SHARED, "perfetto", "perfetto_trace.proto")
    if not shutil.which("protoc") or not os.path.exists(proto):
        print("SKIPPED: protoc or perfetto_trace.proto absent: gendump golden not compared")
        return False
    dump = os.path.join(tmp, "gen")
    out = os.path.join(tmp, "gen-out")
    r = subprocess.run([gendump, "--arch", "BM1688", "--cores", "2", "--cmds", "14", "--seed",
                        "7", "--quiet", dump], capture_output=True, text=True)
    check(r.returncode == 0, f"gendump failed: {r.stderr}")
    r = subprocess.run([tpuprof, dump, out, "--disable_doc", "--disable_web",
                        "--disable_summary", "-q"], capture_output=True, text=True)
    check(r.returncode == 0, f"tpuprof on the generated dump failed: {r.stderr}")
    if failures:
        return True
    r = subprocess.run([tpuprof, "check", os.path.join(out, "perfetto.pftrace")],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"tpuprof check: {r.stderr}")
    text = perfetto_text(os.path.join(out, "perfetto.pftrace"), proto)
    check(not re.search(r"^\s*\d+: ", text, re.M), "unknown/mis-typed fields")
    golden = os.path.join(SRC, "tests", "golden", "gendump_small", "perfetto.txtpb")
    if UPDATE:
        os.makedirs(os.path.dirname(golden), exist_ok=True)
        with open(golden, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print("updated golden", golden)
    elif not os.path.exists(golden):
        check(False, f"{golden} missing (TP_UPDATE_GOLDEN=1, then review)")
    else:
        want = open(golden, encoding="utf-8").read()
        if want != text:
            import difflib
            print("\n".join(list(difflib.unified_diff(want.splitlines(), text.splitlines(),
                                                      "golden", "actual", lineterm=""))[:60]))
        check(want == text, "generated dump's Perfetto trace differs from the golden")
    return True


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 1
    tmp = tempfile.mkdtemp(prefix="tp_trace_cli.")
    try:
        ran = real_dump(sys.argv[1], tmp)
        ran = gendump_golden(sys.argv[1], sys.argv[2], tmp) or ran
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    if not ran:
        return 77
    print("trace outputs through the CLI: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
