#!/usr/bin/python3
"""xlsx_check.py — reads PerfDoc/PerfAI_output.xlsx back with openpyxl and checks it.

  xlsx_check.py synthetic XLSX_GEN WORKDIR   workbooks of synthetic profiles (xlsx_gen):
        layout, row counts, values against tp_analyze, per-row arithmetic, spill sheets,
        determinism, sanitised strings, the Operators formulas (evaluated here and, when
        LibreOffice is installed, recalculated by LibreOffice after a ratio edit)
  xlsx_check.py real TPUPROF DUMP_DIR WORKDIR
        the real BM1688 dump through the CLI: sheet row counts and the reference numbers
        (PROVENANCE.txt), and the same numbers as summary.txt
  xlsx_check.py parts TPUPROF GENDUMP WORKDIR
        a generated dump whose sheets are written in several parts on several threads
        (stream.c, zip.c): the same bytes for --jobs 1 and 3, every zip member's CRC, every
        row there, and LibreOffice reads every sheet with the same cells as openpyxl

Must run under /usr/bin/python3 (Debian's python3-openpyxl). Exit 0 = pass, 1 = failure,
77 = skipped (printed loudly).
"""
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import openpyxl
from openpyxl.utils import get_column_letter

from checks import FAILS, check


def close(a, b, tol=1e-9):
    return isinstance(a, (int, float)) and abs(a - b) <= tol * max(1.0, abs(b))


TIU_HEADER = ["Engine Id", "Core Id", "Global Idx", "Cmd Id", "Function Type", "Function Name",
              "Alg Cycle", "Asic Cycle", "Start Cycle", "End Cycle", "Start Time(us)",
              "End Time(us)", "Duration(us)", "Avg Cycle Last 200", "Alg Ops", "uArch Ops",
              "uArch Rate", "Bank Conflict Ratio", "Initial Cycle Ratio", "Data Type",
              "des_cmd_id_dep"]
DMA_HEADER = ["Engine Id", "Core Id", "Global Idx", "Cmd Id", "Function Type", "Function Name",
              "DMA data size(B)", "Start Cycle", "End Cycle", "Asic Cycle", "Start Time(us)",
              "End Time(us)", "Duration(us)", "Stall Cycle", "DDR Bandwidth(GB/s)",
              "L2M Bandwidth(GB/s)", "Direction", "Data Type", "cmd_id_dep"]
HEADER_ROW = 4  # 1-based row of the command table header on engine sheets


def header(ws, row=HEADER_ROW):
    out = []
    for c in ws[row]:
        if c.value is None:
            break
        out.append(c.value)
    return out


def table(ws, row=HEADER_ROW):
    """Rows below the header as dicts (stops at the first row without Global Idx)."""
    h = header(ws, row)
    rows = []
    for r in ws.iter_rows(min_row=row + 1, values_only=True):
        if r[0] is None:
            break
        rows.append(dict(zip(h, r)))
    return h, rows


def summary_rows(wb):
    ws = wb["Engine Summary"]
    h = header(ws, 4)
    rows = {}
    for r in ws.iter_rows(min_row=5, values_only=True):
        if r[0] is None:
            break
        rows[r[0]] = dict(zip(h, r))
    return h, rows


def sheets_table(wb, width=8):
    ws = wb["Engine Summary"]
    out = []
    found = False
    for r in ws.iter_rows(values_only=True):
        if r[0] == "Sheet" and r[1] == "Engine":
            found = True
            continue
        if found:
            if r[0] is None:
                break
            out.append(r[:width])
    return out


def summary_figures(wb):
    """The Engine Summary's rows that carry numbers (per-core table, Overall, the
    per-Function-Type tables), in order, up to the Sheets table: what a row cap must not
    change. Note lines (text only) are left out."""
    out = []
    for r in wb["Engine Summary"].iter_rows(values_only=True):
        if r[0] == "Sheet" and r[1] == "Engine":
            break
        if any(isinstance(v, (int, float)) for v in r):
            out.append(tuple(r))
    return out


def notes_text(wb):
    return " ".join(str(r[0]) for r in wb["Engine Summary"].iter_rows(values_only=True) if r[0])


def check_cap(full_path, cap_path, cap, label):
    """A workbook written with --xlsx_rows `cap` against the same profile's uncapped one:
    the same totals everywhere, the first `cap` rows of each engine sheet, and the cut said
    on the sheet and in the Engine Summary."""
    full = openpyxl.load_workbook(full_path)
    wb = openpyxl.load_workbook(cap_path)
    check(summary_figures(wb) == summary_figures(full),
          "%s: Engine Summary figures equal with and without the cap" % label)
    engines = [n for n in full.sheetnames if re.match(r"(TIU|GDMA|SDMA|CDMA)_\d+$", n)]
    cut_names = [n for n in engines if len(table(full[n])[1]) > cap]
    want_names = list(full.sheetnames)
    if cut_names:
        want_names.insert(want_names.index(engines[0]), "Longest commands")
    check(wb.sheetnames == want_names, "%s: sheets %s, want %s" % (label, wb.sheetnames, want_names))
    if cut_names:
        # The 100 longest of each cut engine sheet over ALL its commands, longest first.
        _, lrows = table(wb["Longest commands"])
        for name in cut_names:
            kind, core = name.split("_")
            _, frows = table(full[name])
            best = sorted(frows, key=lambda r: (-r["Duration(us)"], r["Global Idx"]))[:100]
            got = [r for r in lrows if r["Engine"] == kind and r["Core Id"] == int(core)]
            check([r["Global Idx"] for r in got] == [r["Global Idx"] for r in best]
                  and [r["Rank"] for r in got] == list(range(1, len(best) + 1)),
                  "%s: Longest commands of %s are the %d longest of all" % (label, name, len(best)))
            check(all(r["On Sheet"] == (name if r["Global Idx"] <= cap else "-") for r in got),
                  "%s: Longest commands of %s say where each is listed" % (label, name))
    st = {s[0]: s for s in sheets_table(wb, 9)}
    cut = 0
    for name in wb.sheetnames:
        if not re.match(r"(TIU|GDMA|SDMA|CDMA)_\d+$", name):
            continue
        ws, wf = wb[name], full[name]
        # (Argument columns come from the rows shown, so a cut sheet may have fewer: compare
        # the cells that hold something.)
        def filled(cells):
            return [(c.column, c.value) for c in cells if c.value is not None]

        def set_values(rows):
            return [{k: v for k, v in r.items() if v is not None} for r in rows]
        for r in (1, 2):
            check(filled(ws[r]) == filled(wf[r]), "%s: %s totals row %d equal" % (label, name, r))
        _, rows = table(ws)
        _, frows = table(wf)
        n = len(frows)
        want = min(n, cap)
        check(len(rows) == want, "%s: %s shows %d rows, want %d" % (label, name, len(rows), want))
        check(set_values(rows) == set_values(frows[:want]),
              "%s: %s rows are the first %d in time" % (label, name, want))
        note = ws["A3"].value or ""
        if n > cap:
            cut += 1
            check(note.startswith("Showing the first %d of %d commands of core " % (cap, n))
                  and "--xlsx_rows all" in note, "%s: %s says it is cut: %r" % (label, name, note))
        else:
            check("Showing" not in note, "%s: %s is not cut" % (label, name))
        check(st.get(name, (None,) * 9)[5] == want and st[name][8] == n,
              "%s: Sheets table Rows / Track Records of %s: %s" % (label, name, st.get(name)))
    notes = notes_text(wb)
    if cut:
        check("Row cap: %d per-record sheet(s)" % cut in notes and "--xlsx_rows all" in notes,
              "%s: the Engine Summary says %d sheets are cut" % (label, cut))
    else:
        check("Row cap" not in notes, "%s: no cap note when nothing is cut" % label)
    return wb, full


def run_gen(gen, mode, out, *args, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    shutil.rmtree(out, ignore_errors=True)
    res = subprocess.run([gen, mode, out] + [str(a) for a in args], capture_output=True,
                         text=True, env=e)
    if res.returncode != 0:
        print(res.stderr)
        raise SystemExit("xlsx_gen %s failed with %d" % (mode, res.returncode))
    path = os.path.join(out, "PerfDoc", "PerfAI_output.xlsx")
    leftovers = [f for f in os.listdir(os.path.join(out, "PerfDoc")) if f != "PerfAI_output.xlsx"]
    check(not leftovers, "%s: no temporary files left in PerfDoc/ (%s)" % (mode, leftovers))
    return path, (json.loads(res.stdout) if res.stdout.strip().startswith("{") else None)


def check_engine_rows(ws, rows, kind, freq, core):
    prev = None
    for r in rows:
        gi = r["Global Idx"]
        check(prev is None or gi == prev + 1, "%s: Global Idx contiguous at %s" % (ws.title, gi))
        prev = gi
        check(r["Core Id"] == core, "%s: Core Id" % ws.title)
        check(r["Asic Cycle"] == r["End Cycle"] - r["Start Cycle"] + 1,
              "%s row %s: Asic Cycle = End - Start + 1" % (ws.title, gi))
        check(abs(r["Duration(us)"] - (r["End Time(us)"] - r["Start Time(us)"])) < 1.5e-3,
              "%s row %s: Duration = End - Start" % (ws.title, gi))
        if kind == "TIU":
            check(r["Engine Id"] == 0, "TIU Engine Id 0")
            # PerfDoc: End / Cmd Id for the first 199 rows (Cmd Id starts at 2 on core 1),
            # then (End[i] - Start[i-199]) / 200.
            if gi < 199:
                check(close(r["Avg Cycle Last 200"], r["End Cycle"] / r["Cmd Id"]),
                      "%s row %s: Avg Cycle Last 200 %s != End / Cmd Id" % (ws.title, gi, r["Avg Cycle Last 200"]))
        else:
            check(r["Engine Id"] == 1, "GDMA Engine Id 1")
            bw = r["DDR Bandwidth(GB/s)"]
            if r["Direction"] in ("DDR->LMEM", "LMEM->DDR", "DDR->DDR"):
                # bytes per ns at the engine's own clock (not bytes per cycle).
                want = r["DMA data size(B)"] / (r["Asic Cycle"] * 1000.0 / freq)
                check(close(bw, want, 1e-9), "%s row %s: DDR BW %s != %s" % (ws.title, gi, bw, want))
            elif r["Direction"] == "-":
                check(bw is None, "%s row %s: sys row has no bandwidth" % (ws.title, gi))


def synthetic(gen, work):
    os.makedirs(work, exist_ok=True)
    # 1. The BM1688-shaped profile with the real dump's command counts.
    path, exp = run_gen(gen, "engines", os.path.join(work, "engines"))
    wb = openpyxl.load_workbook(path)
    check(wb.sheetnames == ["Engine Summary", "TIU_0", "GDMA_0", "TIU_1", "GDMA_1"],
          "sheet names %s" % wb.sheetnames)
    counts = {("TIU", 0): 257, ("TIU", 1): 47, ("GDMA", 0): 145, ("GDMA", 1): 21}
    freqs = {t["kind"]: t["freq"] for t in exp["tracks"]}
    for (kind, core), n in counts.items():
        ws = wb["%s_%d" % (kind, core)]
        h, rows = table(ws)
        want = TIU_HEADER if kind == "TIU" else DMA_HEADER
        check(h[:len(want)] == want, "%s header %s" % (ws.title, h[:len(want)]))
        check(len(rows) == n, "%s has %d rows, want %d" % (ws.title, len(rows), n))
        check(ws.freeze_panes == "A5", "%s frozen below the header (%s)" % (ws.title, ws.freeze_panes))
        check(ws.auto_filter.ref == "A4:%s%d" % (get_column_letter(len(h)), 4 + n),
              "%s autofilter %s" % (ws.title, ws.auto_filter.ref))
        rules = {}
        for cf in ws.conditional_formatting:
            for rule in cf.rules:
                rules.setdefault(str(cf.sqref).split(":")[0], []).append(
                    (rule.type, rule.operator, tuple(rule.formula or ())))
        col = {name: get_column_letter(i + 1) + "5" for i, name in enumerate(h)}
        if kind == "TIU":
            check(rules.get(col["uArch Rate"]) == [("cellIs", "lessThan", ("0.5",)),
                                                   ("cellIs", "lessThan", ("0.75",))],
                  "uArch Rate highlight rules %s" % rules.get(col["uArch Rate"]))
            check(rules.get(col["Avg Cycle Last 200"]) == [("cellIs", "lessThan", ("200",))],
                  "Avg Cycle Last 200 rule")
            init = rules.get(col["Initial Cycle Ratio"], [])
            check(len(init) == 1 and ">0.01" in init[0][2][0], "Initial Cycle Ratio > 1 %% rule %s" % init)
            bank = rules.get(col["Bank Conflict Ratio"], [])
            check(len(bank) == 1 and ">0)" in bank[0][2][0], "Bank Conflict > 0 rule %s" % bank)
        else:
            check(rules.get(col["Stall Cycle"]) == [("cellIs", "greaterThan", ("0",))], "stall rule")
            ddr = rules.get(col["DDR Bandwidth(GB/s)"], [])
            # BM1688: 32 GB/s per core, red below 50 %, yellow below 75 %.
            check(len(ddr) == 2 and "16.0000" in ddr[0][2][0] and "24.0000" in ddr[1][2][0],
                  "DDR bandwidth rules against 32 GB/s: %s" % ddr)
        check(rules.get(col["Data Type"], [(None,)])[0][0] == "containsText", "FP32 rule")
        check(ws.column_dimensions["F"].width and ws.column_dimensions["F"].width > 8,
              "%s: Function Name column fitted" % ws.title)
        check_engine_rows(ws, rows, kind, freqs[kind], core)
        fmt = {c.value: ws.cell(row=5, column=i + 1).number_format
               for i, c in enumerate(ws[HEADER_ROW]) if c.value}
        check(fmt["Asic Cycle"] == "0" and fmt["Start Time(us)"] == "0.000",
              "%s number formats %s" % (ws.title, fmt))
        if kind == "GDMA":
            check(fmt["DDR Bandwidth(GB/s)"] == "0.00", "GB/s with 2 decimals")
        else:
            check(fmt["uArch Rate"] == "0.0%", "uArch Rate as a percentage")
            # uArch Rate: Alg Ops / uArch Ops from the cost model (core 0 of the fixture) or
            # the reader's arguments (core 1, every 5th command); "n/a" otherwise — never the
            # old 100.0 % placeholder.
            below = 0
            for r in rows:
                if isinstance(r.get("Alg Ops"), (int, float)):
                    check(close(r["uArch Rate"], r["Alg Ops"] / r["uArch Ops"]), "uArch from ops")
                    below += r["uArch Rate"] < 1
                else:
                    check(r["uArch Rate"] == "n/a" and r["Alg Ops"] == "n/a", "uArch n/a without data")
                if core == 0:
                    check(isinstance(r["Initial Cycle Ratio"], (int, float))
                          and close(r["Initial Cycle Ratio"],
                                    (((r["Global Idx"] - 1) % 3) * r["Asic Cycle"] // 40 if r["Function Name"] != "system.wait_msg" else 0)
                                    / (r["Asic Cycle"] + 1e-4)),
                          "%s row %s: Initial Cycle Ratio %s" % (ws.title, r["Global Idx"], r["Initial Cycle Ratio"]))
                    check(r["Data Type"] in ("FP16 -> FP32", "INT8 -> INT8"), "TIU Data Type A -> B")
            check(below > 0, "%s: some commands below 100 %% uArch rate" % ws.title)
        # Sheet summary block: whole-core totals.
        c = [x for x in exp["cores"] if x["core"] == core][0]
        want_cyc = c["tiu_cycle"] if kind == "TIU" else c["gdma_cycle"]
        check(ws["A2"].value == want_cyc, "%s A2 total cycles %s != %s" % (ws.title, ws["A2"].value, want_cyc))
    h, srow = summary_rows(wb)
    for c in exp["cores"]:
        r = srow[c["core"]]
        check(r["totalTiuCycle"] == c["tiu_cycle"], "summary totalTiuCycle core %d" % c["core"])
        check(r["totalGdmaCycle"] == c["gdma_cycle"], "summary totalGdmaCycle core %d" % c["core"])
        check(close(r["gdmaDdrAvgBandwidth(GB/s)"], c["gdma_ddr_gbps"]), "summary DDR BW")
        check(close(r["tiuUtilisation"], c["tiu_util"]), "summary TIU utilisation")
        check(close(r["Parallelism"], c["parallelism"]), "summary parallelism")
        check(close(r["totalTime(us)"], exp["total_time_ns"] / 1000.0), "summary total time")
    check("Overall" in srow, "summary has an Overall row")
    # PerfDoc's Overall: the busiest core's working cycles shown as its time in us, and
    # TiuWorkingRatio = that time / total time (sophgo-analysis.md §5.4).
    tiu_us = max(c["tiu_cycle"] for c in exp["cores"]) / freqs["TIU"]
    ov = srow["Overall"]
    check(close(ov["totalTiuCycle"], tiu_us, 1e-6), "Overall totalTiuCycle is the busiest core's "
          "time in us (%s, want %s)" % (ov["totalTiuCycle"], tiu_us))
    check(close(ov["TiuWorkingRatio"], tiu_us * 1000 / exp["total_time_ns"], 1e-5),
          "Overall TiuWorkingRatio = max TIU / total (%s)" % ov["TiuWorkingRatio"])
    gdma_us = max(c["gdma_cycle"] for c in exp["cores"]) / freqs["GDMA"]
    check(close(ov["Parallelism"], (tiu_us + gdma_us) * 1000 / exp["total_time_ns"], 1e-5),
          "Overall Parallelism = (max TIU + max GDMA) / total (%s)" % ov["Parallelism"])
    ws = wb["Engine Summary"]
    fmt_row = {c.value: i for i, c in enumerate(ws[4]) if c.value}
    check(ws.cell(row=4 + len(exp["cores"]) + 1, column=fmt_row["totalTiuCycle"] + 1).number_format
          == '0.000"(us)"', "Overall cycle cells tagged (us)")
    # Cost totals: core 0 has descriptors (the sums of its TIU sheet), core 1 none (n/a).
    _, rows0 = table(wb["TIU_0"])
    alg0 = sum(r["Alg Ops"] for r in rows0)
    uops0 = sum(r["uArch Ops"] for r in rows0)
    check(srow[0]["totalAlgOps"] == alg0 and srow[0]["totalUArchOps"] == uops0,
          "core 0 totalAlgOps/totalUArchOps = the TIU_0 column sums")
    check(close(srow[0]["uArchURate"], alg0 / uops0), "core 0 uArchURate = Σalg / Σuarch")
    check(srow[0]["totalAlgCycle"] == sum(r["Alg Cycle"] for r in rows0), "core 0 totalAlgCycle")
    check(srow[1]["uArchURate"] == "n/a" and srow[1]["totalAlgOps"] == "n/a",
          "core 1 without descriptors says n/a (%s)" % srow[1]["uArchURate"])
    check(close(ov["uArchURate"], alg0 / uops0), "Overall uArchURate over the cores with data")
    for r in list(srow.values()):
        check(0 <= r["Concurrency"] <= 1, "Concurrency within 0..100 %% (%s)" % r["Concurrency"])
    # Per-Function-Type tables: core 0's Overall row holds the TIU_0 totals; core 1 n/a.
    allrows = list(ws.iter_rows(values_only=True))
    for core, n in ((0, 257), (1, 47)):
        at = [i for i, r in enumerate(allrows) if r[0] == "TIU function types, core %d" % core]
        if not check(len(at) == 1, "function type table for core %d" % core):
            continue
        hdr = allrows[at[0] + 1]
        check(hdr[:3] == ("Function Type", "Instr Num", "Alg Ops"), "function type header %s" % (hdr[:3],))
        body = []
        for r in allrows[at[0] + 2:]:
            body.append(dict(zip(hdr, r)))
            if r[0] == "Overall":
                break
        ov = body[-1]
        check(ov["Instr Num"] == n and sum(b["Instr Num"] for b in body[:-1]) == n,
              "core %d function types count %d commands" % (core, n))
        if core == 0:
            check(ov["Alg Ops"] == alg0 and sum(b["Alg Ops"] for b in body[:-1]) == alg0,
                  "core 0 function types sum to totalAlgOps")
        else:
            check(ov["Alg Ops"] == "n/a", "core 1 function types say n/a")
    ws = wb["Engine Summary"]
    fmts = {c.value: ws.cell(row=5, column=i + 1).number_format for i, c in enumerate(ws[4]) if c.value}
    check(fmts["TiuWorkingRatio"] == "0.00%" and fmts["totalTime(us)"] == "0.000"
          and fmts["gdmaDdrAvgBandwidth(GB/s)"] == "0.00" and fmts["totalTiuCycle"] == "0",
          "summary number formats %s" % fmts)
    notes = " ".join(str(r[0]) for r in ws.iter_rows(values_only=True) if r[0])
    check("PerfDocParallelism" in notes and "raw GDMA cycles" in notes, "units note present")
    check(len(ws._charts) == 1, "one utilisation chart on the summary (%d)" % len(ws._charts))
    check(ws.freeze_panes == "B5", "summary header frozen")
    st = sheets_table(wb)
    check([s[0] for s in st] == ["TIU_0", "GDMA_0", "TIU_1", "GDMA_1"], "Sheets table %s" % st)
    props = wb.properties
    check(props.title and "synthetic-net" in props.title, "title property %s" % props.title)
    check(props.keywords == "BM1688", "arch in keywords")
    check(props.created == datetime.datetime(1980, 1, 1), "fixed creation time %s" % props.created)

    # 2. Determinism: same input, same bytes.
    path2, _ = run_gen(gen, "engines", os.path.join(work, "engines2"))
    with open(path, "rb") as a, open(path2, "rb") as b:
        check(a.read() == b.read(), "two runs give identical bytes")

    # 3. Spill: lower the row limit so sheets continue on "TIU_0 (2)".
    path, exp = run_gen(gen, "engines", os.path.join(work, "spill"), 257, 47, 145, 21,
                        env={"XLSX_GEN_MAX_ROWS": "100"})
    wb = openpyxl.load_workbook(path)
    check(wb.sheetnames == ["Engine Summary", "TIU_0", "TIU_0 (2)", "TIU_0 (3)", "GDMA_0",
                            "GDMA_0 (2)", "TIU_1", "GDMA_1"], "spill sheet names %s" % wb.sheetnames)
    for base, n in (("TIU_0", 257), ("GDMA_0", 145)):
        parts = [s for s in wb.sheetnames if s == base or s.startswith(base + " (")]
        idx = []
        for s in parts:
            ws = wb[s]
            check(ws.max_row <= 100, "%s within the 100-row limit (%d)" % (s, ws.max_row))
            _, rows = table(ws)
            idx += [r["Global Idx"] for r in rows]
        check(idx == list(range(1, n + 1)), "%s parts hold Global Idx 1..%d in order" % (base, n))
    check("continues on 'TIU_0 (2)'" in wb["TIU_0"]["A3"].value, "part note names the next sheet")
    st = sheets_table(wb)
    check(("TIU_0 (3)", "TIU", 0, 0, 3, 65, 193, 257) in [tuple(s) for s in st],
          "Sheets table lists part 3 with its range: %s" % st)
    notes = " ".join(str(r[0]) for r in wb["Engine Summary"].iter_rows(values_only=True) if r[0])
    check("continue on '<sheet> (2)'" in notes, "summary says sheets were split")

    # 3a. The layer sheet splits past the row limit too: 16 rows per sheet hold 13 layers, so
    #     2 cores x 20 layers take 4 parts, in the profile's order.
    path, _ = run_gen(gen, "layers", os.path.join(work, "layer-split"),
                      env={"XLSX_GEN_MAX_ROWS": "16", "XLSX_GEN_LAYERS": "20"})
    wb = openpyxl.load_workbook(path, read_only=True)
    parts = [n for n in wb.sheetnames if n.startswith("Layer by Layer Info")]
    check(parts == ["Layer by Layer Info"] + ["Layer by Layer Info (%d)" % k for k in (2, 3, 4)],
          "layer sheet parts %s" % parts)
    names = [r[4] for n in parts for r in wb[n].iter_rows(min_row=4, values_only=True)]
    check(len(names) == 40 and names[:5] == ["conv1", "relu1", "pool1", "fc", "conv1_1"]
          and names[20:22] == ["conv1", "relu1"], "layer parts hold the 40 layers in order: %s" % names[:22])
    res = subprocess.run([gen, "engines", os.path.join(work, "max-bad")], capture_output=True,
                         text=True, env=dict(os.environ, XLSX_GEN_MAX_ROWS="15"))
    check(res.returncode == 1, "XLSX_GEN_MAX_ROWS=15 is refused (%d)" % res.returncode)

    # 3b. Row cap (--xlsx_rows; XLSX_GEN_ROWS here): the first N commands of each engine and
    #     core, said on the sheet and in the Engine Summary; every total as without the cap.
    args = (300, 47, 145, 21, 7, 0)
    full, _ = run_gen(gen, "layers", os.path.join(work, "cap-all"), *args,
                      env={"XLSX_GEN_ROWS": "all"})
    dflt, _ = run_gen(gen, "layers", os.path.join(work, "cap-default"), *args)
    with open(full, "rb") as a, open(dflt, "rb") as b:
        check(a.read() == b.read(), "below the default cap the workbook is the uncapped one")
    capped, _ = run_gen(gen, "layers", os.path.join(work, "cap-40"), *args,
                        env={"XLSX_GEN_ROWS": "40"})
    wb, _ = check_cap(full, capped, 40, "cap 40")
    check(wb["Layer by Layer Info"]["A2"].value is None, "cap 40: 8 layers are not cut")
    # A cap below the layers per core cuts the layer sheet per core, and says so.
    capped, _ = run_gen(gen, "layers", os.path.join(work, "cap-2"), *args,
                        env={"XLSX_GEN_ROWS": "2"})
    wb, fwb = check_cap(full, capped, 2, "cap 2")
    _, lrows = table(wb["Layer by Layer Info"], 3)
    _, flrows = table(fwb["Layer by Layer Info"], 3)
    per_core = {}
    for r in flrows:
        per_core[r["Core Id"]] = per_core.get(r["Core Id"], 0) + 1
    want = [r for r in flrows if sum(1 for q in flrows[:flrows.index(r) + 1]
                                     if q["Core Id"] == r["Core Id"]) <= 2]
    check(lrows == want, "cap 2: the first 2 layers of each core (%d of %d rows)" % (len(lrows), len(flrows)))
    note = wb["Layer by Layer Info"]["A2"].value or ""
    check(note.startswith("Showing the first 2 layers of each core (%d of %d layers" % (len(want), len(flrows)))
          and "--xlsx_rows all" in note, "cap 2: layer sheet says it is cut: %r" % note)
    check("and the layer sheet" in notes_text(wb), "cap 2: summary names the layer sheet")
    res = subprocess.run([gen, "engines", os.path.join(work, "cap-bad")], capture_output=True,
                         text=True, env=dict(os.environ, XLSX_GEN_ROWS="0"))
    check(res.returncode == 1, "XLSX_GEN_ROWS=0 is refused (%d)" % res.returncode)

    # 4. Layers and SDMA.
    path, _ = run_gen(gen, "layers", os.path.join(work, "layers"), 30, 10, 20, 5, 7, 0)
    wb = openpyxl.load_workbook(path)
    check(wb.sheetnames[:2] == ["Engine Summary", "Layer by Layer Info"], "layer sheet second")
    check("SDMA_0" in wb.sheetnames and "SDMA_1" not in wb.sheetnames, "SDMA sheet when present")
    h, rows = table(wb["TIU_0"])
    check(h[4:6] == ["Layer Id", "Layer Name"], "layer columns after Cmd Id: %s" % h[:8])
    check(rows[0]["Layer Id"] == 10 and rows[0]["Layer Name"] == "conv1", "layer of command 0")
    h, rows = table(wb["Layer by Layer Info"], 3)
    check(len(rows) == 8 and rows[0]["Layer Type"] == "Conv2D", "layer rows")

    # 5. Strings from input are data: invalid UTF-8 and control characters are replaced with
    #    U+FFFD (one per maximal invalid subpart: the truncated "\xe2\x82" is one).
    path, _ = run_gen(gen, "bad", os.path.join(work, "bad"))
    wb = openpyxl.load_workbook(path)
    _, rows = table(wb["TIU_0"])
    check(rows[1]["Function Name"] == "bad\ufffd\ufffd name\ufffd \ufffd", "sanitised name %r" % rows[1]["Function Name"])
    _, rows = table(wb["GDMA_0"])
    check(rows[2]["note"] == '=HYPERLINK("x")\ufffd', "formula-like text stays text: %r" % rows[2]["note"])
    cell = [c for c in wb["GDMA_0"][HEADER_ROW + 3] if c.value == '=HYPERLINK("x")\ufffd']
    check(cell and cell[0].data_type == "s", "input text is a string cell, not a formula")

    # 6. Captures: Operators sheet with live what-if formulas.
    path, _ = run_gen(gen, "capture", os.path.join(work, "capture"), 4)
    check_operators(path, work)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("xlsx synthetic checks passed")
    return 0


# --- A small evaluator for the formulas the Operators sheet uses ------------------------------

TOKEN = re.compile(r'\s*(?:(\d+\.\d*|\d+)|(\$?[A-Z]{1,3}\$?\d+(?::\$?[A-Z]{1,3}\$?\d+)?)|'
                   r'([A-Z]+)\(|("[^"]*")|(<=|>=|<>|[-+*/(),=<>])|(TRUE|FALSE))')


def ref_cells(ref):
    ref = ref.replace("$", "")
    if ":" not in ref:
        return [ref]
    a, b = ref.split(":")
    ca, ra = re.match(r"([A-Z]+)(\d+)", a).groups()
    cb, rb = re.match(r"([A-Z]+)(\d+)", b).groups()
    assert ca == cb, "only single-column ranges are used"
    return ["%s%d" % (ca, r) for r in range(int(ra), int(rb) + 1)]


class Eval:
    def __init__(self, cells):
        self.cells = cells  # "A1" -> value or "=formula"
        self.memo = {}

    def value(self, name):
        if name in self.memo:
            return self.memo[name]
        v = self.cells.get(name)
        if isinstance(v, str) and v.startswith("="):
            v = self.formula(v[1:])
        self.memo[name] = v
        return v

    def formula(self, text):
        saved = getattr(self, "toks", None), getattr(self, "i", 0)
        try:
            return self.parse(text)
        finally:
            self.toks, self.i = saved

    def parse(self, text):
        self.toks = []
        pos = 0
        text = text.replace("TRUE", "TRUE ").replace("FALSE", "FALSE ")
        while pos < len(text):
            m = TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise ValueError("cannot parse %r at %d" % (text, pos))
            pos = m.end()
            self.toks.append(m.groups())
        self.i = 0
        v = self.compare()
        assert self.i == len(self.toks), "trailing tokens in %r" % text
        return v

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None,) * 6

    def op(self, s):
        t = self.peek()
        if t[4] == s:
            self.i += 1
            return True
        return False

    def compare(self):
        a = self.add()
        for o in ("<=", ">=", "<>", "=", "<", ">"):
            if self.op(o):
                b = self.add()
                a, b = (a or 0) if not isinstance(a, str) else a, (b or 0) if not isinstance(b, str) else b
                return {"<=": a <= b, ">=": a >= b, "<>": a != b, "=": a == b, "<": a < b,
                        ">": a > b}[o]
        return a

    def add(self):
        a = self.mul()
        while True:
            if self.op("+"):
                a = (a or 0) + (self.mul() or 0)
            elif self.op("-"):
                a = (a or 0) - (self.mul() or 0)
            else:
                return a

    def mul(self):
        a = self.atom()
        while True:
            if self.op("*"):
                a = (a or 0) * (self.atom() or 0)
            elif self.op("/"):
                a = (a or 0) / self.atom()
            else:
                return a

    def args(self):
        out = []
        while not self.op(")"):
            t = self.peek()
            if t[1] and ":" in t[1]:
                self.i += 1
                out.append([self.value(c) for c in ref_cells(t[1])])
            else:
                out.append(self.compare())
            self.op(",")
        return out

    def atom(self):
        t = self.peek()
        self.i += 1
        num, ref, fn, s, o, bl = t
        if num:
            return float(num)
        if bl:
            return bl == "TRUE"
        if s:
            return s[1:-1]
        if ref:
            return self.value(ref_cells(ref)[0])
        if o == "(":
            v = self.compare()
            assert self.op(")")
            return v
        if o == "-":
            return -self.atom()
        if fn == "IF":
            a = self.args()
            return a[1] if a[0] else a[2]
        if fn == "SUM":
            return sum(v for r in self.args() for v in r if isinstance(v, (int, float)) and not isinstance(v, bool))
        if fn == "SUMIF":
            rng, crit, vals = self.args()
            return sum(v or 0 for c, v in zip(rng, vals) if c == crit)
        raise ValueError("unsupported token %r" % (t,))


def sheet_cells(ws):
    return {c.coordinate: c.value for row in ws.iter_rows() for c in row if c.value is not None}


def find_label(cells, label):
    for k, v in cells.items():
        if v == label:
            return k
    raise KeyError(label)


def right_of(coord):
    col, row = re.match(r"([A-Z]+)(\d+)", coord).groups()
    return "%s%s" % (get_column_letter(openpyxl.utils.column_index_from_string(col) + 1), row)


def check_operators(path, work):
    wb = openpyxl.load_workbook(path)
    cached = openpyxl.load_workbook(path, data_only=True)
    check(wb.sheetnames == ["Engine Summary", "Operators", "T4242 main", "T4243 worker's pool"],
          "capture sheets %s" % wb.sheetnames)
    links = [c.hyperlink.location for row in wb["Engine Summary"].iter_rows() for c in row
             if c.hyperlink is not None]
    check("'T4243 worker''s pool'!A1" in links, "summary links quote sheet names: %s" % links)
    _, rows = table(wb["T4242 main"])
    check(len(rows) == 4 + 4 * 5 and rows[0]["Category"] == "step" and rows[1]["Depth"] == 1,
          "thread sheet rows: steps with nested operators")
    ws, wc = wb["Operators"], cached["Operators"]
    check([c.value for c in ws[3]][:6] == ["weight shape", "90% 4x1 perf ratio", "80% 4x1 perf ratio",
                                         "70% 4x1 perf ratio", "others", "ratio source"], "ratio header")
    shapes = [ws.cell(row=r, column=1).value for r in range(4, 7)]
    check(shapes == ["256x256", "256x1024", "1024x256"], "ratio table shapes in numeric order %s" % shapes)
    hdr = [c.value for c in ws[8]]
    check(hdr[:4] == ["operator type", "post op", "operator name", "input tensor name"] and
          hdr[12] == "operator latency mean(ms)" and hdr[15] == "aim to sparse latency(ms)",
          "operator header mirrors ops.csv: %s" % hdr)
    names = [ws.cell(row=r, column=3).value for r in range(9, 14)]
    check(names == ["fc1", "fc2", "act", "fc3", "sm"], "operators in execution order %s" % names)
    cells = sheet_cells(ws)
    ev = Eval(cells)
    # Every formula's cached value equals what the formula computes from the sheet.
    nform = 0
    for coord, v in cells.items():
        if isinstance(v, str) and v.startswith("="):
            nform += 1
            got, want = ev.value(coord), wc[coord].value
            check(close(got, want, 1e-9), "formula %s %s = %s, cached %s" % (coord, v, got, want))
    check(nform >= 11, "Operators sheet has live formulas (%d)" % nform)
    # fc1: measured mean of the 3 non-warm-up steps (40100, 40200, 40300 ns) = 0.0402 ms.
    check(close(wc["M9"].value, 0.0402), "fc1 mean latency %s" % wc["M9"].value)
    check(close(wc["P9"].value, 0.0402 / 4.0), "fc1 aim latency at 90% = M / 4")
    check(wc["P12"].value == wc["M12"].value, "fc3 (70% sparse already) keeps its latency")
    total = find_label(cells, "total aim to sparse latency(ms)")
    tot_cell = right_of(total)
    before = ev.value(tot_cell)
    # Edit the 256x256 ratio at 90 % and fc2's aim; totals must move accordingly.
    cells2 = dict(cells)
    cells2["B4"] = 2.0
    cells2["N10"] = 0.8
    ev2 = Eval(cells2)
    check(close(ev2.value("P9"), wc["M9"].value / 2.0), "edited ratio moves fc1's aim latency")
    check(close(ev2.value("O10"), 3.5), "aim 80% picks the 80% column for 1024x256 (3.5)")
    want = before + (wc["M9"].value / 2.0 - wc["P9"].value) + (wc["M10"].value / 3.5 - wc["P10"].value)
    check(close(ev2.value(tot_cell), want), "total aim latency follows the edits")
    libreoffice_recalc(path, work, wc["M9"].value, want, tot_cell)


def libreoffice_recalc(path, work, m9, want_total, tot_cell):
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if not soffice:
        print("SKIPPED: LibreOffice (libreoffice-calc-nogui) is not installed; the Operators "
              "formulas were checked by the Python evaluator only")
        return
    d = os.path.join(work, "lo")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    wb = openpyxl.load_workbook(path)
    ws = wb["Operators"]
    ws["B4"] = 2.0
    ws["N10"] = 0.8
    edited = os.path.join(d, "edited.xlsx")
    wb.save(edited)
    env = dict(os.environ, HOME=d)
    # Sheet 2 (Operators) to CSV; LibreOffice computes the formulas openpyxl saved without values.
    res = subprocess.run([soffice, "--headless", "--norestore", "-env:UserInstallation=file://" + d + "/profile",
                          "--convert-to", 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,2',
                          "--outdir", d, edited], capture_output=True, text=True, env=env, timeout=300)
    outs = glob.glob(os.path.join(d, "edited*.csv"))
    if not check(res.returncode == 0 and outs, "LibreOffice converted the edited workbook: %s %s" % (res.stdout, res.stderr)):
        return
    import csv
    with open(outs[0], newline="") as f:
        rows = list(csv.reader(f))
    col = openpyxl.utils.column_index_from_string(re.match(r"[A-Z]+", tot_cell).group()) - 1
    row = int(re.search(r"\d+", tot_cell).group()) - 1
    got = float(rows[row][col])
    check(abs(got - want_total) < 1e-6, "LibreOffice recalculated total %s, want %s" % (got, want_total))
    check(abs(float(rows[8][15]) - m9 / 2.0) < 1e-6, "LibreOffice recalculated fc1 aim latency")
    print("LibreOffice recalculation after a ratio edit: total aim latency %s ms" % got)


def lo_sheets(path, work):
    """{sheet name: rows as lists of strings} as LibreOffice reads the workbook, or None
    (SKIPPED printed) without LibreOffice."""
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if not soffice:
        print("SKIPPED: LibreOffice (libreoffice-calc-nogui) is not installed; the spliced "
              "sheets were read by openpyxl only")
        return None
    d = os.path.join(work, "lo-all")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    # Token 12 = -1: every sheet to its own BASENAME-SHEET.csv; token 9 false: values as
    # formatted would lose digits, so the raw values.
    res = subprocess.run([soffice, "--headless", "--norestore",
                          "-env:UserInstallation=file://" + d + "/profile", "--convert-to",
                          "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1",
                          "--outdir", d, path], capture_output=True, text=True,
                         env=dict(os.environ, HOME=d), timeout=600)
    if not check(res.returncode == 0, "LibreOffice converts the workbook: %s" % res.stderr[-300:]):
        return {}
    import csv
    base = os.path.splitext(os.path.basename(path))[0]
    out = {}
    for f in glob.glob(os.path.join(d, base + "-*.csv")):
        with open(f, newline="") as fh:
            out[os.path.basename(f)[len(base) + 1:-4]] = list(csv.reader(fh))
    return out


def parts(tpuprof, gendump, work):
    """Sheets written in parts on several threads and spliced into libxlsxwriter's zip."""
    import zipfile
    dump = os.path.join(work, "gen")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # 2 cores x 6000 commands: TIU and GDMA sheets of several 1024-row parts each.
    subprocess.run([gendump, "--arch", "BM1688", "--cores", "2", "--cmds", "6000", "--seed", "7",
                    "--quiet", dump], check=True)
    books = {}
    for j in (1, 3):
        out = os.path.join(work, "j%d" % j)
        res = subprocess.run([tpuprof, dump, out, "-q", "--jobs", str(j), "--disable_web",
                              "--disable_perfetto"], capture_output=True, text=True)
        check(res.returncode == 0, "tpuprof --jobs %d exit %d: %s" % (j, res.returncode, res.stderr))
        books[j] = os.path.join(out, "PerfDoc", "PerfAI_output.xlsx")
        if not check(os.path.exists(books[j]), "workbook written with --jobs %d" % j):
            return 1
    with open(books[1], "rb") as a, open(books[3], "rb") as b:
        check(a.read() == b.read(), "same workbook bytes for --jobs 1 and 3")
    path = books[3]
    with zipfile.ZipFile(path) as z:
        check(z.testzip() is None, "every member's CRC-32 matches its data")
        names = z.namelist()
        check(len(names) == len(set(names)), "no member twice")
    summary = json.load(open(os.path.join(work, "j3", "summary.json")))
    wb = openpyxl.load_workbook(path)
    spliced = 0
    for name in wb.sheetnames:
        m = re.match(r"(TIU|GDMA)_(\d)$", name)
        if not m:
            continue
        ws = wb[name]
        _, rows = table(ws)
        want = ws["E2"].value if m.group(1) == "TIU" else ws["L2"].value  # "records" totals
        check(len(rows) == want, "%s: %d rows, %s records" % (name, len(rows), want))
        check([r["Global Idx"] for r in rows] == list(range(1, len(rows) + 1)),
              "%s: Global Idx runs 1..%d without a gap or repeat" % (name, len(rows)))
        spliced += len(rows) > 1024
        check(ws.max_row == HEADER_ROW + len(rows), "%s: dimension covers the rows (%s)"
              % (name, ws.calculate_dimension()))
    check(spliced >= 2, "some sheets have several parts (%d)" % spliced)
    check(summary is not None, "summary.json read")
    lo = lo_sheets(path, work)
    if lo is None:
        return 1 if FAILS else 0
    for name in wb.sheetnames:
        ws = wb[name]
        got = lo.get(name)
        if not check(got is not None, "LibreOffice read sheet %s (%s)" % (name, sorted(lo)[:12])):
            continue
        want = [["" if v is None else v for v in r] for r in ws.iter_rows(values_only=True)]
        check(len(got) == len(want), "%s: LibreOffice %d rows, openpyxl %d" % (name, len(got), len(want)))
        bad = 0
        for r, (a, b) in enumerate(zip(got, want)):
            for c, v in enumerate(b):
                x = a[c] if c < len(a) else ""
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    # Percent formats keep their sign in LibreOffice's raw export.
                    f = float(x[:-1]) / 100 if x.endswith("%") else float(x) if x else None
                    ok = f is not None and abs(f - v) <= 1e-9 * max(1.0, abs(v))
                else:
                    ok = x == str(v)
                if not ok and bad < 3:
                    check(False, "%s!%s%d: LibreOffice %r, openpyxl %r" % (name, get_column_letter(c + 1), r + 1, x, v))
                bad += not ok
        check(bad == 0, "%s: every cell as openpyxl reads it (%d differ)" % (name, bad))
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("parts: ok")
    return 0


def real(tpuprof, dump, work):
    if not os.path.isdir(dump):
        print("SKIPPED: real dump %s is absent" % dump)
        return 77
    if not os.path.exists(tpuprof):
        print("SKIPPED: %s is not built yet" % tpuprof)
        return 77
    out = os.path.join(work, "real")
    shutil.rmtree(out, ignore_errors=True)
    res = subprocess.run([tpuprof, dump, out], capture_output=True, text=True)
    check(res.returncode == 0, "tpuprof exit %d: %s" % (res.returncode, res.stderr))
    path = os.path.join(out, "PerfDoc", "PerfAI_output.xlsx")
    if not check(os.path.exists(path), "workbook written by default"):
        return 1
    wb = openpyxl.load_workbook(path)
    for name, n in (("TIU_0", 257), ("TIU_1", 47), ("GDMA_0", 145), ("GDMA_1", 21)):
        check(name in wb.sheetnames, "sheet %s present (%s)" % (name, wb.sheetnames))
        if name in wb.sheetnames:
            _, rows = table(wb[name])
            check(len(rows) == n, "%s has %d rows, want %d" % (name, len(rows), n))
    _, s = summary_rows(wb)
    ref = {0: (1304643, 1077718, 21.86), 1: (91343, 155776, 14.10)}
    for core, (tiu, gdma, bw) in ref.items():
        r = s.get(core)
        if not check(r is not None, "summary row for core %d" % core):
            continue
        check(r["totalTiuCycle"] == tiu, "core %d totalTiuCycle %s" % (core, r["totalTiuCycle"]))
        check(r["totalGdmaCycle"] == gdma, "core %d totalGdmaCycle %s" % (core, r["totalGdmaCycle"]))
        check(round(r["gdmaDdrAvgBandwidth(GB/s)"], 2) == bw, "core %d DDR %s" % (core, r["gdmaDdrAvgBandwidth(GB/s)"]))
        check(round(r["totalTime(us)"], 3) == 2176.268, "total time %s" % r["totalTime(us)"])
    # TIU rows against the vendor's PerfAI_output.csv, command by command (joined on core and
    # Cmd Id): Avg Cycle Last 200 (the vendor divides by Cmd Id, which starts at 2 on core 1,
    # and prints whole cycles); the cost columns once the dump has cost data.
    ref_csv = os.path.join(os.path.dirname(dump), "reference", os.path.basename(dump), "PerfAI_output.csv")
    if os.path.exists(ref_csv):
        import csv
        vend = {(int(r["Core Id"]), int(r["Cmd Id"])): r for r in csv.DictReader(open(ref_csv))
                if r["Engine Id"] == "0"}
        seen = bad_avg = 0
        cost_rows = cost_bad = 0
        for core in (0, 1):
            _, rows = table(wb["TIU_%d" % core])
            for r in rows:
                v = vend.get((core, r["Cmd Id"]))
                if v is None:
                    continue
                seen += 1
                if abs(r["Avg Cycle Last 200"] - float(v["Avg Cycle Last 200"])) > 0.5:
                    bad_avg += 1
                    if bad_avg <= 3:
                        print("Avg Cycle Last 200 core %d cmd %d: %s vs %s" % (core, r["Cmd Id"], r["Avg Cycle Last 200"], v["Avg Cycle Last 200"]))
                if isinstance(r.get("Alg Ops"), (int, float)):
                    cost_rows += 1
                    ok = (r["Alg Ops"] == int(v["Alg Ops"]) and r["uArch Ops"] == int(v["uArch Ops"])
                          and r["Alg Cycle"] == int(v["Alg Cycle"])
                          and "%.1f%%" % (100 * r["uArch Rate"]) == v["uArch Rate"]
                          and "%.1f%%" % (100 * r["Initial Cycle Ratio"]) == v["Initial Cycle Ratio"]
                          and "%.1f%%" % (100 * r["Bank Conflict Ratio"]) == v["Bank Conflict Ratio"]
                          and r["Data Type"] == v["Data Type"])
                    cost_bad += not ok
        check(seen == 304, "all 304 TIU commands joined with the vendor's rows (%d)" % seen)
        check(bad_avg == 0, "Avg Cycle Last 200 equals the vendor's on every TIU row (%d differ)" % bad_avg)
        if cost_rows:
            check(cost_rows == 304 and cost_bad == 0,
                  "cost columns equal the vendor's on every TIU row (%d of %d differ)" % (cost_bad, cost_rows))
        else:
            print("SKIPPED: per-command Alg Ops / uArch Rate / Initial Cycle Ratio / Data Type vs "
                  "PerfAI_output.csv: no cost data in this dump (TIU descriptors not decoded in this build)")
    else:
        print("SKIPPED: %s not found; per-command comparison not run" % ref_csv)
    # Overall per the vendor (PerfWeb summary_data / PerfDoc Engine Summary).
    ov = s.get("Overall", {})
    check(round(ov.get("Parallelism", -1), 4) == 1.3264, "Overall Parallelism %s" % ov.get("Parallelism"))
    check(round(ov.get("TiuWorkingRatio", -1), 4) == 0.6661, "Overall TiuWorkingRatio %s" % ov.get("TiuWorkingRatio"))
    check(round(ov.get("totalTiuCycle", -1), 3) == 1449.603, "Overall totalTiuCycle (us) %s" % ov.get("totalTiuCycle"))
    check(all(0 <= r.get("Concurrency", -1) <= 1 for r in s.values()), "Concurrency never negative")
    if s.get(0, {}).get("uArchURate") == "n/a":
        print("SKIPPED: uArchURate 74.87 %/100.00 %/76.28 % check: no cost data in this dump "
              "(TIU descriptors not decoded in this build)")
    else:
        check([round(s[c]["uArchURate"], 4) for c in (0, 1)] == [0.7487, 1.0], "uArchURate per core")
        check(round(ov["uArchURate"], 4) == 0.7628, "Overall uArchURate")
    # The same numbers as summary.txt, row by row.
    txt = os.path.join(out, "summary.txt")
    if os.path.exists(txt):
        seen = 0
        for line in open(txt):
            cols = [c.strip() for c in line.split("|")]
            if cols[0] == "Overall":
                break  # only the first table (the reference Summary) has these columns
            if len(cols) == 13 and cols[0].isdigit():
                core = int(cols[0])
                r = s.get(core, {})
                seen += 1
                check("%.2f%%" % (100 * r.get("Parallelism", -1)) == cols[1], "summary.txt core %d parallelism" % core)
                check("%.3f" % r.get("totalTime(us)", -1) == cols[2], "summary.txt total time")
                check("%.2f%%" % (100 * r.get("TiuWorkingRatio", -1)) == cols[3], "summary.txt core %d TiuWorkingRatio" % core)
                check(r.get("totalTiuCycle") == int(cols[4]), "summary.txt core %d TIU" % core)
                check(r.get("totalGdmaCycle") == int(cols[6]), "summary.txt core %d GDMA" % core)
                check("%.2f" % r.get("gdmaDdrAvgBandwidth(GB/s)", -1) == cols[7], "summary.txt core %d DDR" % core)
                check("%.2f" % r.get("gdmaAvgDdrBurstLength", -1) == cols[9],
                      "summary.txt core %d burst length" % core)
        check(seen == 2, "summary.txt has the two core rows (%d)" % seen)
    else:
        check(False, "summary.txt written next to the workbook")
    # Row cap on the real dump (257 TIU commands on core 0): --xlsx_rows 100 cuts TIU_0 and
    # GDMA_0, keeps every total, and summary.txt / summary.json say so; -q prints nothing
    # (no libxlsxwriter warning, and stderr is not redirected any more); the workbook is the
    # same bytes for --jobs 1 and --jobs 2.
    out_cap = os.path.join(work, "real-cap")
    shutil.rmtree(out_cap, ignore_errors=True)
    res = subprocess.run([tpuprof, dump, out_cap, "-q", "--xlsx_rows", "100", "--jobs", "2"],
                         capture_output=True, text=True)
    check(res.returncode == 0 and res.stderr == "",
          "--xlsx_rows 100 -q: exit %d, stderr %r" % (res.returncode, res.stderr[:300]))
    check_cap(path, os.path.join(out_cap, "PerfDoc", "PerfAI_output.xlsx"), 100, "real cap 100")
    txt = open(os.path.join(out_cap, "summary.txt")).read()
    check(re.search(r"PerfDoc/PerfAI_output.xlsx: 2 per-command sheet\(s\)( and the layer sheet)? "
                    r"show only the first 100 commands", txt) is not None
          and "--xlsx_rows all" in txt, "summary.txt notes the cut workbook")
    js = json.load(open(os.path.join(out_cap, "summary.json")))
    check(any("--xlsx_rows all" in str(n) for n in js.get("notes", [])),
          "summary.json notes the cut workbook")
    plain_path = os.path.join(out, "summary.txt")
    plain = open(plain_path).read() if os.path.exists(plain_path) else ""
    check("--xlsx_rows" not in plain, "no cap note in summary.txt when nothing is cut")
    out_j1 = os.path.join(work, "real-cap-j1")
    shutil.rmtree(out_j1, ignore_errors=True)
    res = subprocess.run([tpuprof, dump, out_j1, "-q", "--xlsx_rows", "100", "--jobs", "1"],
                         capture_output=True, text=True)
    with open(os.path.join(out_cap, "PerfDoc", "PerfAI_output.xlsx"), "rb") as a, \
            open(os.path.join(out_j1, "PerfDoc", "PerfAI_output.xlsx"), "rb") as b:
        check(res.returncode == 0 and a.read() == b.read(), "same workbook bytes for --jobs 1 and 2")
    for bad in ("0", "-3", "x", "12k", ""):
        res = subprocess.run([tpuprof, dump, os.path.join(work, "real-bad"), "--xlsx_rows", bad],
                             capture_output=True, text=True)
        check(res.returncode == 1 and "--xlsx_rows" in res.stderr,
              "--xlsx_rows %r is a usage error (%d: %s)" % (bad, res.returncode, res.stderr[:200]))
    soffice = shutil.which("soffice")
    if soffice:
        d = os.path.join(work, "real-lo")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        res = subprocess.run([soffice, "--headless", "--norestore", "-env:UserInstallation=file://" + d + "/profile",
                              "--convert-to", "csv", "--outdir", d, path], capture_output=True, text=True,
                             env=dict(os.environ, HOME=d), timeout=300)
        csvs = glob.glob(os.path.join(d, "*.csv"))
        check(res.returncode == 0 and csvs, "LibreOffice opens the real workbook")
        if csvs:
            text = open(csvs[0]).read()
            check("1304643" in text and "2176.268" in text, "LibreOffice shows the summary numbers")
    else:
        print("SKIPPED: LibreOffice not installed; real workbook not opened in LibreOffice")
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("xlsx real-dump checks passed")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "synthetic":
        sys.exit(synthetic(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 5 and sys.argv[1] == "parts":
        sys.exit(parts(sys.argv[2], sys.argv[3], sys.argv[4]))
    if len(sys.argv) == 5 and sys.argv[1] == "real":
        sys.exit(real(sys.argv[2], sys.argv[3], sys.argv[4]))
    print(__doc__)
    sys.exit(2)
