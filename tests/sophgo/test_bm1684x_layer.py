#!/usr/bin/python3
"""test_bm1684x_layer.py — the layer table, the per-Function summary and the what-if table of the
real BM1684X dump (`--vendor_files`: summary.csv, layer.csv, mac_util.csv) against the vendor's
own files (../shared/testdata/sophgo/reference/bm1684x_blazeface/layer/, `tpu_profile.py --arch
BM1684X --format layer`) and the figures of the dump's PROVENANCE.txt.

usage: test_bm1684x_layer.py TPUPROF SHARED_DIR OUTDIR

Two groups of cells:
  - in every group, the differences docs/vendor-files.md lists (vendor quirks, float sums in
    another row order) pass;
  - strict: every column that needs neither the TIU cost model, the conv/pool descriptor fields
    nor the GDMA AXI counters equals the vendor's, cell by cell (layers joined by LayerID,
    Functions by name), except the vendor quirks docs/vendor-files.md lists;
  - descriptor (kh, kw, strides, padding) and AXI (s2lBytes and what derives from it) columns:
    checked when the reader keeps those fields, else reported as SKIPPED (loudly);
  - cost: AlgOps, uArchOps, uArchRate, the theoretical TIU times, ActualTops and the order of the
    Function rows, which need the BM1684X cost model: checked when the dump's commands carry
    cost figures, else reported as SKIPPED (loudly).
It prints how many cells of each file agree. Exit 0 pass, 1 fail, 77 (ctest SKIP) when the
data is absent.
"""
import csv
import os
import subprocess
import sys
import unittest

TPUPROF, SHARED, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
DUMP = os.path.join(SHARED, "testdata", "sophgo", "bm1684x_blazeface")
REF = os.path.join(SHARED, "testdata", "sophgo", "reference", "bm1684x_blazeface", "layer")

# The kernel, strides and padding come from the conv / pool commands' descriptor fields
# (des_opd1_h, ...), which the BM1684X reader keeps once its descriptor decoding lands.
GEO = {"kh", "kw", "KStrideH", "KStrideW", "Padding"}
# S2L and what derives from it need the loads' AXI read counters (pmu.d0_ar_bytes,
# pmu.d1_ar_bytes), which the BM1684X reader keeps once its PMU fields land.
AXI = {"s2lBytes", "gdmaPTheoTime(us)", "ddrRate", "LoadAvgBandwidth(GiB/s)"}
COST = {"AlgOps", "AlgOpsRatio", "uArchOps", "uArchOpsRatio", "uArchRate", "tiuPTheoTime(us)",
        "ActualTops"}
# (file, column) -> rows (None: all) that docs/vendor-files.md lists as differing on purpose or
# not yet written.
LISTED = {
    ("layer.csv", "DataType"): {"293", "296", "308"}, ("layer.csv", "PeakTops"): {"296", "308"},
    ("summary.csv", "PeakTops"): {"Cast"},
    ("summary.csv", "DataTypes"): None, ("summary.csv", "LayerTypes"): None,
    ("summary.csv", "gdmaTime(us)"): {"Others", "Overall"},
    # With the cost model and the PMU counters (their groups below): the TIU time at the peak
    # of the layers whose PeakTops differs (DataType above), and float sums in row order.
    ("layer.csv", "tiuPTheoTime(us)"): {"296", "308"},
    ("summary.csv", "tiuPTheoTime(us)"): {"Conv", "Cast", "Overall"},
    ("summary.csv", "gdmaPTheoTime(us)"): {"Others", "Overall"},
    ("summary.csv", "totalTime(us)"): {"Others"},
}


def rows(path, key):
    with open(path, newline="", encoding="utf-8") as f:
        return {r[key]: r for r in csv.DictReader(f)}


class Converted:
    done = False

    @classmethod
    def vendor(cls):
        if not cls.done:
            subprocess.run(["rm", "-rf", OUT], check=True)
            p = subprocess.run([TPUPROF, DUMP, OUT, "-q", "--vendor_files", "--disable_perfetto"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise AssertionError(f"tpuprof exit {p.returncode}: {p.stderr}")
            cls.done = True
        return os.path.join(OUT, "vendor")


def group_of(col):
    return "cost" if col in COST else "geo" if col in GEO else "axi" if col in AXI else "strict"


def compare(fname, key, group):
    """(cells compared, cells equal, [unexpected differences]) for the columns of group
    ('strict', 'geo', 'axi' or 'cost')."""
    ref = rows(os.path.join(REF, fname), key)
    got = rows(os.path.join(Converted.vendor(), fname), key)
    n = same = 0
    bad = []
    for k, r in ref.items():
        g = got.get(k)
        if g is None:
            bad.append(f"{fname}: row {k} missing")
            continue
        for col, v in r.items():
            if group_of(col) != group:
                continue
            n += 1
            if g[col] == v:
                same += 1
                continue
            listed = LISTED.get((fname, col), "no")
            if listed is None or (listed != "no" and k in listed):
                continue
            bad.append(f"{fname} {key}={k} {col}: vendor {v!r}, tpuprof {g[col]!r}")
    print(f"{fname} ({group}): {same} of {n} cells equal the vendor's")
    return n, same, bad


def has_cost():
    got = rows(os.path.join(Converted.vendor(), "summary.csv"), "Function")
    return got["Overall"]["AlgOps"] != "0"


class LayerTables(unittest.TestCase):
    def test_strict_layer(self):
        n, same, bad = compare("layer.csv", "LayerID", "strict")
        self.assertEqual(bad, [])
        self.assertEqual(n, 183 * 32)  # 46 columns: 5 cost-model, 5 descriptor, 4 AXI ones

    def test_strict_summary(self):
        n, same, bad = compare("summary.csv", "Function", "strict")
        self.assertEqual(bad, [])
        got = rows(os.path.join(Converted.vendor(), "summary.csv"), "Function")["Overall"]
        # PROVENANCE.txt's Overall figures.
        self.assertEqual((got["totalTime(us)"], got["Parallelism"], got["Concurrency"]),
                         ("181.176", "107.264%", "28.615%"))
        self.assertEqual((got["tiuCycles"], got["gdmaCycles"], got["weightBytes"],
                          got["l2sBytes"], got["s2sBytes"], got["PeakTops"]),
                         ("45990", "148346", "547464", "1170432", "620288", "16.0"))

    def test_whatif(self):
        """mac_util.csv: the origin row as the vendor's; the 100 % concurrency row at the
        longer engine (docs/vendor-files.md), then each Function at the peak never below it."""
        with open(os.path.join(REF, "mac_util.csv"), newline="", encoding="utf-8") as f:
            ref = list(csv.reader(f))
        with open(os.path.join(Converted.vendor(), "mac_util.csv"), newline="",
                  encoding="utf-8") as f:
            got = list(csv.reader(f))
        self.assertEqual(got[0], ref[0])
        self.assertEqual(len(got), len(ref))
        self.assertEqual(got[1], ref[1])  # origin: 181.176 us, 28.615 %, macUtil 2.146
        self.assertEqual(got[2][0], "100% Concurrency")
        self.assertAlmostEqual(float(got[2][2]), 148.346, places=9)  # GDMA, the longer engine
        self.assertEqual(got[2][5], ref[2][5])
        for r in got[3:]:
            self.assertGreaterEqual(float(r[2]), 148.346 - 1e-9)
            self.assertEqual(r[3], "100.0")
        same = sum(a == b for x, y in zip(ref, got) for a, b in zip(x, y))
        print(f"mac_util.csv: {same} of {sum(len(x) for x in ref)} cells equal the vendor's")

    def test_descriptor_columns(self):
        got = rows(os.path.join(Converted.vendor(), "layer.csv"), "LayerID")
        if all(r["kh"] == "0" for r in got.values()):
            print("SKIPPED: kh, kw, KStrideH, KStrideW, Padding: this build keeps no BM1684X "
                  "conv/pool descriptor fields")
            self.skipTest("no BM1684X descriptor fields")
        n, same, bad = compare("layer.csv", "LayerID", "geo")
        self.assertEqual(bad, [])

    def test_other_outputs(self):
        """The same tables in summary.json, summary.txt, the workbook and result.html."""
        import json
        import re
        import zipfile
        Converted.vendor()
        with open(os.path.join(OUT, "summary.json")) as f:
            lt = json.load(f)["layer_table"]
        self.assertEqual(lt["layers_total"], 183)
        self.assertEqual(lt["layers"][0]["layer_id"], 26)  # 9954 TIU cycles, the longest
        self.assertEqual(lt["overall"]["tiu_cycles"], 45990)
        self.assertEqual(lt["overall"]["total_us"], 181.176)
        self.assertEqual([w["case"] for w in lt["what_if"]][:2], ["origin", "overlap_100pct"])
        self.assertEqual(lt["what_if"][1]["total_us"], 148.346)
        with open(os.path.join(OUT, "summary.txt")) as f:
            txt = f.read()
        for title in ("Layer table (183 layers", "Layer functions", "What if"):
            self.assertIn(title, txt)
        with zipfile.ZipFile(os.path.join(OUT, "PerfDoc", "PerfAI_output.xlsx")) as z:
            wb = z.read("xl/workbook.xml").decode()
        self.assertIn('name="Layer Table"', wb)
        self.assertIn('name="What If"', wb)
        with open(os.path.join(OUT, "result.html"), encoding="utf-8") as f:
            page = f.read()
        m = re.search(r'<script type="application/json" id="tp-data">(.*?)</script>', page, re.S)
        lt = json.loads(m.group(1))["analysis"]["ltab"]
        self.assertEqual(lt["n"], 183)
        self.assertEqual([f[0] for f in lt["funcs"]][-1], "Overall")
        self.assertEqual(lt["whatif"][0][5], 181.176)

    def test_axi_columns(self):
        got = rows(os.path.join(Converted.vendor(), "layer.csv"), "LayerID")
        if got["44"]["s2lBytes"] != "128":  # 112 bytes moved, 128 read
            print("SKIPPED: s2lBytes and what derives from it: this build keeps no BM1684X GDMA "
                  "AXI read counters")
            self.skipTest("no BM1684X AXI counters")
        for fname, key in (("layer.csv", "LayerID"), ("summary.csv", "Function")):
            n, same, bad = compare(fname, key, "axi")
            self.assertEqual(bad, [])

    def test_cost_columns(self):
        if not has_cost():
            print("SKIPPED: cost-model columns (AlgOps, uArchOps, uArchRate, theoretical TIU "
                  "times, ActualTops): the BM1684X TIU cost model is not in this build")
            self.skipTest("no BM1684X cost model")
        for fname, key in (("layer.csv", "LayerID"), ("summary.csv", "Function")):
            n, same, bad = compare(fname, key, "cost")
            self.assertEqual(bad, [])
        with open(os.path.join(REF, "summary.csv"), newline="") as f:
            want = [r["Function"] for r in csv.DictReader(f)]
        got = list(rows(os.path.join(Converted.vendor(), "summary.csv"), "Function"))
        self.assertEqual(got, want)


if __name__ == "__main__":
    if not os.path.isdir(DUMP) or not os.path.isdir(REF):
        print(f"SKIPPED: the real BM1684X dump or its vendor outputs are absent ({DUMP}, {REF})")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v"])
