#!/usr/bin/python3
"""test_burst.py — the DDR burst-length figures against the vendor's on the real PerfAI dumps in
../shared/testdata/sophgo (BM1688, CV184X, BM1690).

The vendor's GdmaAvgDdrBurstLength / SdmaAvgDdrBurstLength (profile_data.js summary_data,
per core and Overall) and PerfDoc's avgDdrBurstLength are Σ gmem_bl_sum / Σ gmem_xact_cnt over
the DMA records whose Direction names DDR (sys records have none), 0 without transactions
(sophgo-costmodel.md §5 items 9-10). For each dump this checks tpuprof's summary.json
(per core and Overall, and the sums behind them against the vendor's tdmaRegInfo_<core>.txt),
summary.txt's columns and the workbook's (Engine Summary, GDMA_<core> totals).

usage: test_burst.py TPUPROF SHARED_DIR OUTDIR
Exit 0 equal, 1 otherwise, 77 (ctest SKIP) when the shared dumps are absent.
"""
import ast
import json
import os
import re
import subprocess
import sys

from sgtest import Checks

DUMPS = ["bm1688_resnet50", "cv184x_blazeface", "bm1690_blazeface_cdm"]
# Records the vendor counts and tpuprof does not: BM1690's PMU records without a descriptor,
# which the vendor labels DDR->LMEM by default (docs/vendor-files.md lists the difference).
UNLABELLED = {"bm1690_blazeface_cdm": "unknown"}
check = Checks(shown=1 << 30)


def vendor_summary(ref):
    """{core id or 'Overall': {column: value}} of profile_data.js's summary table."""
    text = open(os.path.join(ref, "profile_data.js"), encoding="utf-8").read()
    head = ast.literal_eval(re.search(r"summary_header\s*=\s*(\[.*?\])", text).group(1))
    rows = ast.literal_eval(re.search(r"summary_data\s*=\s*(\[\[.*?\]\])", text).group(1))
    return {r[0]: dict(zip(head, r)) for r in rows}


def vendor_sums(ref, core, skip_type):
    """{engine id: [Σ gmem_bl_sum, Σ gmem_xact_cnt]} over the DDR records of tdmaRegInfo."""
    path = os.path.join(ref, f"tdmaRegInfo_{core}.txt")
    out = {}
    for block in open(path, encoding="utf-8").read().split("__TDMA_REG_INFO__")[1:]:
        kv = dict(re.findall(r"^\t([^:\n]+): (.*)$", block, re.M))
        if kv.get("Function Type", "").endswith("_sys") or kv.get("Function Type") == skip_type:
            continue
        if "DDR" in kv.get("Direction", "") and kv.get("DMA data size(B)", "").isnumeric():
            s = out.setdefault(kv["Engine Id"], [0, 0])
            s[0] += int(kv["gmem_bl_sum"])
            s[1] += int(kv["gmem_xact_cnt"])
    return out


def txt_table(path):
    """summary.txt's reference table: {CoreId: {column: cell}}."""
    lines = open(path, encoding="utf-8").read().splitlines()
    i = next(k for k, l in enumerate(lines) if l.strip().startswith("CoreId |"))
    head = [c.strip() for c in lines[i].split("|")]
    out = {}
    for l in lines[i + 2:]:
        if l.startswith("="):
            break
        if "|" in l:
            cells = [c.strip() for c in l.split("|")]
            out[cells[0]] = dict(zip(head, cells))
    return out


def xlsx_figures(path):
    import openpyxl
    wb = openpyxl.load_workbook(path, read_only=True)
    rows = list(wb["Engine Summary"].iter_rows(values_only=True))
    i = next(k for k, r in enumerate(rows) if r[0] == "CoreId")
    head = list(rows[i])
    summ = {}
    for r in rows[i + 1:]:
        if r[0] is None:
            break
        summ[str(r[0])] = dict(zip(head, r))
    sheets = {}
    for name in wb.sheetnames:
        if re.match(r"GDMA_\d+$", name):
            t = list(wb[name].iter_rows(min_row=1, max_row=2, values_only=True))
            sheets[name] = dict(zip(t[0], t[1]))
    return summ, sheets


def check_dump(tpuprof, shared, outdir, dump):
    src = os.path.join(shared, "testdata", "sophgo", dump)
    ref = os.path.join(shared, "testdata", "sophgo", "reference", dump)
    out = os.path.join(outdir, dump)
    r = subprocess.run([tpuprof, src, out, "-q", "--disable_web", "--disable_perfetto"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        check(False, f"{dump}: tpuprof exited {r.returncode}: {r.stderr.strip()}")
        return
    vend = vendor_summary(ref)
    js = json.load(open(os.path.join(out, "summary.json")))
    txt = txt_table(os.path.join(out, "summary.txt"))
    summ, sheets = xlsx_figures(os.path.join(out, "PerfDoc", "PerfAI_output.xlsx"))
    cores = [(str(c["core"]), c) for c in js["cores"]] + [("Overall", js["overall"])]
    for cid, c in cores:
        v = vend[cid]
        for eng, col in (("gdma", "GdmaAvgDdrBurstLength"), ("sdma", "SdmaAvgDdrBurstLength")):
            want = float(v[col])
            got = c[f"{eng}_avg_ddr_burst_length"]
            check(round(got, 2) == want, f"{dump} core {cid}: summary.json {col} {got}, "
                                         f"vendor {v[col]!r}")
            check(txt[cid][col] == "%.2f" % want,
                  f"{dump} core {cid}: summary.txt {col} {txt[cid][col]!r}, vendor {v[col]!r}")
            xk = f"{eng}AvgDdrBurstLength"
            if xk in summ[cid]:
                check(round(summ[cid][xk], 2) == want,
                      f"{dump} core {cid}: xlsx {xk} {summ[cid][xk]}, vendor {v[col]!r}")
            elif eng == "gdma":
                check(False, f"{dump}: xlsx Engine Summary has no {xk}")
        if cid == "Overall":
            continue
        sheet = sheets.get(f"GDMA_{cid}")
        check(sheet is not None and round(sheet["avgDdrBurstLength"], 2)
              == float(v["GdmaAvgDdrBurstLength"]),
              f"{dump} core {cid}: GDMA_{cid} avgDdrBurstLength {sheet and sheet.get('avgDdrBurstLength')}")
        # The sums behind the figure, record by record against the vendor's files.
        sums = vendor_sums(ref, cid, UNLABELLED.get(dump))
        for eid, name in (("1", "GDMA"), ("3", "SDMA")):
            e = c["engines"].get(name)
            if eid not in sums and not e:
                continue
            want = sums.get(eid, [0, 0])
            got = [e["ddr_burst_length_sum"], e["ddr_xact_count"]] if e else None
            check(got == want, f"{dump} core {cid} {name}: (Σ gmem_bl_sum, Σ gmem_xact_cnt) "
                               f"{got}, vendor {want}")
    print(f"{dump}: burst length per core and Overall equal the vendor's "
          f"({len(cores)} rows)")


def main():
    tpuprof, shared, outdir = sys.argv[1:4]
    have = [d for d in DUMPS
            if os.path.isdir(os.path.join(shared, "testdata", "sophgo", "reference", d))]
    if not have:
        print(f"SKIPPED: no reference dumps under {shared}/testdata/sophgo: burst length not "
              "compared with the vendor's", file=sys.stderr)
        return 77
    for d in DUMPS:
        if d not in have:
            print(f"SKIPPED: {d} absent", file=sys.stderr)
            continue
        check_dump(tpuprof, shared, outdir, d)
    return check.exit_code("OK")


if __name__ == "__main__":
    sys.exit(main())
