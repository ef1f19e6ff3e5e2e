#!/usr/bin/python3
"""refcheck.py — compares tpuprof with the vendor profiler command by command on the real
Sophgo dumps in ../shared/testdata/sophgo (specs/sophgo-costmodel.md).

For every dump folder listed in DUMPS that has a reference/<dump>/ folder, it runs
`tpuprof DUMP OUT --json` and joins our per-slice arguments with the reference's
tiuRegInfo_<core>.txt / tdmaRegInfo_<core>.txt records by (core, engine, Cmd Id):
  TIU: Alg Ops, uArch Ops, Alg Cycle, uArch Rate, Initial Cycle Ratio, Bank Conflict Ratio,
       every des_* field (and no des_* field the reference does not have), Data Type
       (PerfAI_output.csv), Function Name / Type;
  DMA: every decoded descriptor field, Direction, Data Type, the byte / bandwidth / transaction
       fields and the burst-length fields.
It also checks the per-core and overall uArchURate (sum Alg Ops / sum uArch Ops) against the
figures in EXPECT. Deliberate differences are listed in DELIBERATE (every dump) and
DELIBERATE_ON (one dump) with their reason.

usage: refcheck.py TPUPROF SHARED_DIR OUTDIR
Exit 0 all equal, 1 mismatches, 77 (ctest SKIP) when the shared test data is absent.
"""
import csv
import json
import os
import re
import subprocess
import sys

# (dump folder, expected uArchURate per core, overall) — PROVENANCE.txt of each dump.
DUMPS = [
    ("bm1688_resnet50", ["74.87%", "100.00%"], "76.28%"),
    ("cv184x_blazeface", ["69.27%"], "69.27%"),
    ("bm1690_blazeface_cdm", ["19.66%"], "19.66%"),
]
# Dumps whose reader is still on another branch: while tpuprof cannot read them they are
# reported as NOT COMPARED (loudly) instead of failing; once it can, they are compared like
# the others. Remove an entry when its reader is merged.
PENDING = {
}

# Reference keys we do not compare, each with its reason.
DELIBERATE = {
    # Printed by the vendor for every record with no value or a placeholder.
    "Sim Power(W)": "always 0 in the vendor's output: no power model",
    "Engine Id": "implied by the track",
    "Core Id": "implied by the track",
    "funcName": "blank in the vendor's output", "layer_ID": "blank", "index": "blank",
    "mask_data_format": "blank for classes without it",
    "index_shape": "a constant placeholder string in the vendor's output",
    "src_shape": "a constant placeholder string", "dst_shape": "a constant placeholder string",
    "from_addr": "same information as Direction", "to_addr": "same information as Direction",
    "Start Cycle": "timing: checked by the bmprofile timeline tests",
    "End Cycle": "timing", "Asic Cycle": "timing",
}

# Reference keys not compared on one dump, each with its reason.
DELIBERATE_ON = {
    "bm1690_blazeface_cdm": {
        "Global Idx": "the vendor's BM1690 printer numbers from 0, its others and tpuprof from 1 "
                      "(docs/vendor-files.md)",
    },
}

# Reference records not compared, each with its reason.
SKIP_FUNCTION_TYPE = {
    "unknown": "PMU records with no descriptor (BM1690: the profiler's init handshake and "
               "records outside every command section): names compared, fields not; the "
               "vendor labels them DDR->LMEM with cmd_type 31, tpuprof leaves them without "
               "direction or decoded fields (src/readers/sophgo/cdm/cdm_reader.c header)",
}
# tdmaRegInfo "Engine Id" -> our track (BM1690: GDMA 1, SDMA 3; bm1690_defs.py EngineType).
DMA_ENGINE = {"1": "GDMA", "3": "SDMA"}

TIU_COST = ["Alg Ops", "uArch Ops", "Alg Cycle", "uArch Rate", "Initial Cycle Ratio",
            "Bank Conflict Ratio"]


def order_of(keys, wanted):
    """The keys in `wanted` in the order they appear in `keys`, cmd_id_dep left out (the
    trace writers put the dependency first, whatever the reader's order)."""
    return [k for k in keys if k in wanted and k not in ("des_cmd_id_dep", "cmd_id_dep")]


def parse_reg(path, tag):
    """Records of a tiuRegInfo / tdmaRegInfo file as dicts (first occurrence of a key wins)."""
    text = open(path, encoding="utf-8", errors="replace").read()
    recs = []
    for block in text.split(tag)[1:]:
        rec = {}
        for line in block.splitlines():
            m = re.match(r"^\t([^:]+): ?(.*)$", line)
            if m and m.group(1) not in rec:
                rec[m.group(1)] = m.group(2).strip()
        recs.append(rec)
    return recs


def num(v):
    if isinstance(v, (int, float)):
        return v
    try:
        return int(v)
    except (TypeError, ValueError):
        try:
            return float(v)
        except (TypeError, ValueError):
            return v


def same(a, b):
    a, b = num(a), num(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        # Both sides round to 4 decimals: equal up to the binary representation.
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return str(a) == str(b)


def ours(trace):
    """(core, 'TIU'|'GDMA'|'SDMA', cmd_id, k) -> args of our slices, k = how many earlier
    slices (in time order) of that track had the same Cmd Id: ids repeat on BM1690, whose
    profiler-inserted records restart them (the reference is joined the same way)."""
    d = json.load(open(trace))
    names = {}
    for e in d["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    out = {}
    seen = {}
    for e in sorted((e for e in d["traceEvents"] if e.get("ph") == "X"),
                    key=lambda e: (e.get("ts", 0), e.get("args", {}).get("Global Idx", 0))):
        m = re.match(r"Core (\d+) (TIU|GDMA|SDMA)$", names.get((e["pid"], e["tid"]), ""))
        if not m or "Cmd Id" not in e.get("args", {}):
            continue
        a = dict(e["args"])
        a.setdefault("Function Name", e.get("name"))
        k3 = (int(m.group(1)), m.group(2), int(a["Cmd Id"]))
        n = seen.get(k3, 0)
        seen[k3] = n + 1
        out[k3 + (n,)] = a
    return out


def check_dump(tpuprof, shared, outdir, dump, expect_core, expect_all):
    src = os.path.join(shared, "testdata", "sophgo", dump)
    ref = os.path.join(shared, "testdata", "sophgo", "reference", dump)
    out = os.path.join(outdir, dump)
    r = subprocess.run([tpuprof, src, out, "--json", "-q", "--disable_web", "--disable_doc",
                        "--disable_perfetto", "--disable_summary"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        if dump in PENDING:
            print(f"NOT COMPARED: {dump}: tpuprof cannot read it yet ({r.stderr.strip()}); "
                  f"waiting for {PENDING[dump]}")
            return 0
        print(f"{dump}: tpuprof failed ({r.returncode}): {r.stderr.strip()}")
        return 1
    got = ours(os.path.join(out, "trace.json"))
    csvrows = {}
    cpath = os.path.join(ref, "PerfAI_output.csv")
    if os.path.exists(cpath):
        nseen = {}
        for row in csv.DictReader(open(cpath, encoding="utf-8")):
            eng = "TIU" if row["Engine Id"] == "0" else DMA_ENGINE.get(row["Engine Id"], "GDMA")
            k3 = (int(row["Core Id"]), eng, int(row["Cmd Id"]))
            n = nseen.get(k3, 0)
            nseen[k3] = n + 1
            csvrows[k3 + (n,)] = row
    bad = 0
    checked = {"TIU": 0, "GDMA": 0, "SDMA": 0}
    fields = {"TIU": 0, "GDMA": 0, "SDMA": 0}
    skipped = 0
    sums = {}

    def miss(key, what, want, have):
        nonlocal bad
        bad += 1
        if bad <= 40:
            print(f"{dump} core {key[0]} {key[1]} cmd {key[2]}: {what}: "
                  f"reference {want!r}, tpuprof {have!r}")

    cores = sorted(int(m.group(1)) for f in os.listdir(ref)
                   for m in [re.match(r"tiuRegInfo_(\d+)\.txt$", f)] if m)
    for core in cores:
        for eng, fname, tag in (("TIU", f"tiuRegInfo_{core}.txt", "__TIU_REG_INFO__"),
                                ("GDMA", f"tdmaRegInfo_{core}.txt", "__TDMA_REG_INFO__")):
            path = os.path.join(ref, fname)
            if not os.path.exists(path):
                continue
            rseen = {}
            for rec in parse_reg(path, tag):
                if "Cmd Id" not in rec:
                    continue
                if eng != "TIU":
                    eng = DMA_ENGINE.get(rec.get("Engine Id"), "GDMA")
                k3 = (core, eng, int(rec["Cmd Id"]))
                n = rseen.get(k3, 0)
                rseen[k3] = n + 1
                key = k3 + (n,)
                a = got.get(key)
                if a is None:
                    miss(key, "command", "present", "missing")
                    continue
                checked[eng] += 1
                for k in ("Function Name", "Function Type"):
                    if not same(rec.get(k), a.get(k)):
                        miss(key, k, rec.get(k), a.get(k))
                if rec.get("Function Type") in SKIP_FUNCTION_TYPE:
                    skipped += 1
                    continue
                if eng == "TIU":
                    s = sums.setdefault(core, [0, 0])
                    s[0] += int(a.get("Alg Ops", 0))
                    s[1] += int(a.get("uArch Ops", 0))
                    for k in TIU_COST:
                        if not same(rec.get(k), a.get(k)):
                            miss(key, k, rec.get(k), a.get(k))
                    for k, v in rec.items():
                        if k.startswith("des_"):
                            fields[eng] += 1
                            if not same(v, a.get(k)):
                                miss(key, k, v, a.get(k))
                    for k in a:
                        if k.startswith("des_") and k not in rec:
                            miss(key, k, "absent", a[k])
                    des = {k for k in rec if k.startswith("des_")}
                    if order_of(rec, des) != order_of(a, des):
                        miss(key, "des_* order", order_of(rec, des), order_of(a, des))
                    row = csvrows.get(key)
                    if row and not same(row["Data Type"], a.get("Data Type")):
                        miss(key, "Data Type", row["Data Type"], a.get("Data Type"))
                else:
                    # The decoded fields come first in the record, up to "Engine Id".
                    regs = []
                    for k in rec:
                        if k == "Engine Id":
                            break
                        regs.append(k)
                    if order_of(rec, set(regs)) != order_of(a, set(regs)):
                        miss(key, "field order", order_of(rec, set(regs)),
                             order_of(a, set(regs)))
                    for k, v in rec.items():
                        if k in DELIBERATE or k in DELIBERATE_ON.get(dump, {}) or k in (
                                "Function Name", "Function Type", "Cmd Id") or v == "":
                            continue
                        fields[eng] += 1
                        if not same(v, a.get(k)):
                            miss(key, k, v, a.get(k))
    for eng in ("TIU", "GDMA", "SDMA"):
        if checked[eng] or eng != "SDMA":
            print(f"{dump}: {checked[eng]} {eng} commands compared, {fields[eng]} decoded/PMU "
                  f"fields")
    if skipped:
        print(f"{dump}: {skipped} reference records with names compared only: "
              f"{'; '.join(SKIP_FUNCTION_TYPE.values())}")
    tot = [0, 0]
    for i, core in enumerate(cores):
        s = sums.get(core, [0, 0])
        tot[0] += s[0]
        tot[1] += s[1]
        rate = f"{s[0] / s[1] * 100:.2f}%" if s[1] else "0.00%"
        print(f"{dump}: core {core} uArchURate {rate} (reference {expect_core[i]})")
        if rate != expect_core[i]:
            bad += 1
    rate = f"{tot[0] / tot[1] * 100:.2f}%" if tot[1] else "0.00%"
    print(f"{dump}: overall uArchURate {rate} (reference {expect_all})")
    if rate != expect_all:
        bad += 1
    if checked["TIU"] == 0:
        print(f"{dump}: no TIU command compared")
        bad += 1
    print(f"{dump}: {bad} mismatches")
    return 1 if bad else 0


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    tpuprof, shared, outdir = sys.argv[1:]
    base = os.path.join(shared, "testdata", "sophgo")
    if not os.path.isdir(base):
        print(f"SKIPPED: {base} is absent; the reference comparison did not run")
        return 77
    rc = 0
    ran = 0
    for dump, exp_core, exp_all in DUMPS:
        if not os.path.isdir(os.path.join(base, "reference", dump)) or \
                not os.path.isdir(os.path.join(base, dump)):
            print(f"SKIPPED: {dump}: dump or reference folder absent")
            continue
        ran += 1
        rc |= check_dump(tpuprof, shared, outdir, dump, exp_core, exp_all)
    if not ran:
        print("SKIPPED: no dump with a reference folder")
        return 77
    return rc


if __name__ == "__main__":
    sys.exit(main())
