#!/usr/bin/python3
"""test_global_idx.py — the Global Idx of every output equals the vendor's on the real BM1688
dump in ../shared/testdata/sophgo/bm1688_resnet50.

The vendor numbers each engine's commands from 1 (tiuRegInfo_<core>.txt,
tdmaRegInfo_<core>.txt, PerfAI_output.csv in reference/bm1688_resnet50/). tpuprof converts the
dump with --json --sqlite (and the default PerfAI_output.xlsx); for every command of both
cores and both engines, the command that trace.json, profile.db (an SQL query on the args
view) and the workbook's engine sheets show under a Global Idx must be the vendor's command of
that Global Idx: the same Cmd Id and the same Start Cycle.

usage: test_global_idx.py TPUPROF SHARED_DIR OUTDIR
Exit 0 equal, 1 otherwise, 77 (ctest SKIP) when the shared dump is absent.
"""
import csv
import json
import os
import re
import sqlite3
import subprocess
import sys

from sgtest import Checks

DUMP = "bm1688_resnet50"
check = Checks()


def vendor(ref):
    """(core, 'TIU'|'GDMA', Global Idx) -> (Cmd Id, Start Cycle), from the register-info
    files; PerfAI_output.csv must agree with them."""
    out = {}
    for eng, pre in (("TIU", "tiuRegInfo"), ("GDMA", "tdmaRegInfo")):
        for core in (0, 1):
            text = open(os.path.join(ref, f"{pre}_{core}.txt"), encoding="utf-8").read()
            for block in text.split("__")[1:]:
                kv = dict(re.findall(r"^\t([^:\n]+): (.*)$", block, re.M))
                if "Global Idx" in kv:
                    out[(core, eng, int(kv["Global Idx"]))] = (int(kv["Cmd Id"]),
                                                               int(kv["Start Cycle"]))
    rows = 0
    with open(os.path.join(ref, "PerfAI_output.csv"), newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            eng = {"0": "TIU", "1": "GDMA"}.get(r["Engine Id"])
            if eng:
                rows += 1
                key = (int(r["Core Id"]), eng, int(r["Global Idx"]))
                check(out.get(key, (None,))[0] == int(r["Cmd Id"]),
                      f"reference: PerfAI_output.csv {key} Cmd Id {r['Cmd Id']}")
    check(rows == len(out), f"reference: {rows} csv rows, {len(out)} register-info records")
    return out


def from_trace(path):
    d = json.load(open(path))
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    out = {}
    for e in d["traceEvents"]:
        m = re.match(r"Core (\d+) (TIU|GDMA)$", names.get((e.get("pid"), e.get("tid")), ""))
        a = e.get("args", {})
        if e.get("ph") == "X" and m and "Global Idx" in a:
            out[(int(m.group(1)), m.group(2), a["Global Idx"])] = (a.get("Cmd Id", 0),
                                                                   a["Start Cycle"])
    return out


def from_db(path):
    c = sqlite3.connect(path)
    q = """SELECT t.core, t.name, g.int_value, s.cmd_id, sc.int_value
           FROM slice s JOIN track t ON s.track_id = t.id
           JOIN args g ON g.arg_set_id = s.arg_set_id AND g.key = 'debug.Global Idx'
           JOIN args sc ON sc.arg_set_id = s.arg_set_id AND sc.key = 'debug.Start Cycle'
           WHERE t.name IN ('TIU', 'GDMA')"""
    return {(core, eng, gi): (cmd or 0, start) for core, eng, gi, cmd, start in c.execute(q)}


def from_xlsx(path):
    import openpyxl
    wb = openpyxl.load_workbook(path, read_only=True)
    out = {}
    for ws in wb.worksheets:
        m = re.match(r"(TIU|GDMA)_(\d+)", ws.title)
        if not m:
            continue
        rows = ws.iter_rows(values_only=True)
        head = None
        for r in rows:
            if r and "Global Idx" in r:
                head = list(r)
                break
        check(head is not None, f"xlsx: sheet {ws.title} has no Global Idx column")
        if head is None:
            continue
        gi, ci, st = head.index("Global Idx"), head.index("Cmd Id"), head.index("Start Cycle")
        for r in rows:
            if r[gi] is None:
                break
            out[(int(m.group(2)), m.group(1), int(r[gi]))] = (int(r[ci] or 0), int(r[st]))
    return out


def main():
    tpuprof, shared, outdir = sys.argv[1:4]
    src = os.path.join(shared, "testdata", "sophgo", DUMP)
    ref = os.path.join(shared, "testdata", "sophgo", "reference", DUMP)
    if not os.path.isfile(os.path.join(src, "global.profile")) or not os.path.isdir(ref):
        print(f"SKIPPED: {src} or {ref} absent: Global Idx not compared with the vendor's",
              file=sys.stderr)
        return 77
    out = os.path.join(outdir, DUMP)
    r = subprocess.run([tpuprof, src, out, "--json", "--sqlite", "-q", "--disable_web",
                        "--disable_perfetto", "--disable_summary"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr)
        print(f"FAIL: tpuprof exited {r.returncode}")
        return 1
    want = vendor(ref)
    check(len(want) == 257 + 47 + 145 + 21, f"reference: {len(want)} commands, 470 expected")
    for name, got in (("trace.json", from_trace(os.path.join(out, "trace.json"))),
                      ("profile.db", from_db(os.path.join(out, "profile.db"))),
                      ("PerfAI_output.xlsx",
                       from_xlsx(os.path.join(out, "PerfDoc", "PerfAI_output.xlsx")))):
        check(set(got) == set(want),
              f"{name}: Global Idx keys differ: ours only {sorted(set(got) - set(want))[:5]}, "
              f"vendor only {sorted(set(want) - set(got))[:5]}")
        for k in sorted(set(got) & set(want)):
            check(got[k] == want[k], f"{name}: {k}: ours (Cmd Id, Start Cycle) {got[k]}, "
                                     f"vendor {want[k]}")
        print(f"{name}: {len(got)} commands by Global Idx")
    return check.exit_code("OK: Global Idx of trace.json, profile.db and the workbook equal the "
                           "vendor's")


if __name__ == "__main__":
    sys.exit(main())
