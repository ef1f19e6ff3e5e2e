#!/usr/bin/python3
"""test_bm1684x.py — tpuprof on the real BM1684X dump against the vendor's own outputs.

usage: test_bm1684x.py TPUPROF SHARED_DIR OUTDIR

The dump is ../shared/testdata/sophgo/bm1684x_blazeface; the vendor's outputs (tpu_profile.py
--arch BM1684X --format layer) are in ../shared/testdata/sophgo/reference/bm1684x_blazeface/
layer/ and their figures in the dump's PROVENANCE.txt. Checked, command by command against
instruction.csv (90 TIU, 160 GDMA rows):
  - timeline (specs/sophgo-bmprofile.md §9.1): every command's start and end, in cycles (the
    vendor's legacy EndCycle is the end tick, tpuprof's End Cycle the last cycle: Start Cycle
    + Asic Cycle = EndCycle) and in µs on the trace;
  - records (§8.2): the 3 GDMA records the firmware ran outside the net's command stream are on
    a lane of their own without a layer, and a summary note says so; the engine lanes hold the
    vendor's 90 TIU and 160 GDMA commands, each with the vendor's cycle count (1684x Cycle =
    EndCycle - StartCycle);
  - decoded descriptors: every GDMA command's direction (from its addresses; the vendor's
    "const->ddr" constant fills count as LMEM->DDR stores, as its summary's l2sBytes does) and
    name (dma.tensor / dma.matrix), so the DDR byte split per direction is the vendor's
    (DDR->LMEM 2 150 032, LMEM->DDR 1 084 416 + 86 016 constant fills, DDR->DDR 620 288: the
    first and last are net_stat.sim's S2L and S2S, its L2S leaves the fills out);
  - layers: every command's Layer ID, the nodes after a global layer's parallel blocks
    included;
  - cost model (specs/sophgo-costmodel.md §3.14): every TIU command's Alg Ops, uArch Ops,
    uArch Rate and Opd0/Res Dtype, every command's Alg cycle (the simulator's, net_stat.sim,
    as the vendor pairs its items with the node lines) and GDMA operand types;
  - summary (PROVENANCE.txt): totalTime 181.176 µs, TIU 45 990 / GDMA 148 346 cycles,
    Parallelism 107.264 %, Concurrency 28.615 % (the vendor's formula: summary.json
    perfdoc_concurrency_pct), uArch rate 16.446 % of AlgOps 177 563 433 / uArchOps
    1 079 672 833.
Exit 0 all equal, 1 on a difference, 77 (ctest SKIP, printed loudly) when the data is absent.
"""
import csv
import json
import os
import sys
import unittest

from sgtest import convert

TPUPROF, SHARED, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
DUMP = os.path.join(SHARED, "testdata", "sophgo", "bm1684x_blazeface")
REF = os.path.join(SHARED, "testdata", "sophgo", "reference", "bm1684x_blazeface", "layer")


def vendor_rows():
    with open(os.path.join(REF, "instruction.csv"), newline="") as f:
        return list(csv.DictReader(f))


class Converted:
    """The dump converted once with --json: per lane, the slices' arguments."""
    lanes = None
    summary = None

    @classmethod
    def get(cls):
        if cls.lanes is None:
            trace, cls.summary = convert(TPUPROF, DUMP, OUT)
            names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
                     if e.get("name") == "thread_name"}
            cls.lanes = {}
            for e in trace["traceEvents"]:
                if e.get("ph") == "X":
                    cls.lanes.setdefault(names[(e["pid"], e["tid"])], []).append(e["args"])
        return cls


class RealBM1684X(unittest.TestCase):
    def engine_cmds(self, lane):
        """Cmd Id -> the slices of that id on a lane."""
        by = {}
        for a in Converted.get().lanes.get(lane, []):
            by.setdefault(a["Cmd Id"], []).append(a)
        return by

    def test_timeline(self):
        """§9.1: every command starts and ends where the vendor's instruction.csv says (the
        GDMA records after the firmware's first NODE_SET's end, TIU re-anchored on the first
        net GDMA record's end)."""
        lanes = {"TIU": self.engine_cmds("Core 0 TIU"), "GDMA": self.engine_cmds("Core 0 GDMA")}
        bad = []
        rows = vendor_rows()
        self.assertEqual(len(rows), 250)
        for r in rows:
            eng, n = r["Inst ID"].split("-")
            cands = lanes[eng].get(int(n) + 1, [])
            want = (int(r["StartCycle"]), int(r["EndCycle"]))
            # The vendor's EndCycle is start + cycles, its 1684x Cycle End - Start: the
            # trace's End Cycle and Asic Cycle are the same numbers.
            ours = [(a["Start Cycle"], a["Start Cycle"] + a["Asic Cycle"]) for a in cands]
            if ours != [want] or [a["End Cycle"] for a in cands] != [want[1]]:
                bad.append(f"{r['Inst ID']}: vendor {want}, ours {ours}")
            elif [a["Asic Cycle"] for a in cands] != [int(r["1684x Cycle"])]:
                bad.append(f"{r['Inst ID']}: {cands[0]['Asic Cycle']} cycles, vendor "
                           f"{r['1684x Cycle']}")
        self.assertEqual(bad, [], f"{len(bad)} commands differ, first: {bad[:5]}")

    def vendor_pairs(self):
        """(vendor row, our slice arguments) for every instruction.csv row."""
        got = {}
        for lane, eng in (("Core 0 TIU", "TIU"), ("Core 0 GDMA", "GDMA")):
            for a in Converted.get().lanes[lane]:
                got[(eng, a["Cmd Id"] - 1)] = a
        for r in vendor_rows():
            eng, n = r["Inst ID"].split("-")
            yield r, got[(eng, int(n))]

    def test_directions_and_names(self):
        """GDMA direction and name from the decoded descriptor, as the vendor has them."""
        dirs = {"ddr->lmem": "DDR->LMEM", "lmem->ddr": "LMEM->DDR", "ddr->ddr": "DDR->DDR",
                "const->ddr": "LMEM->DDR"}
        split, bad = {}, []
        for r, a in self.vendor_pairs():
            if r["EngineId"] != "2":
                continue
            if a.get("Direction") != dirs[r["Direction"]] or a["Function Name"] != r["Inst Function"]:
                bad.append((r["Inst ID"], r["Direction"], r["Inst Function"], a.get("Direction"),
                            a["Function Name"]))
            self.assertEqual(a["DMA data size(B)"], int(r["DMA data size(B)"]), r["Inst ID"])
            split[a["Direction"]] = split.get(a["Direction"], 0) + a["DMA data size(B)"]
        self.assertEqual(bad, [])
        self.assertEqual(split, {"DDR->LMEM": 2150032, "LMEM->DDR": 1084416 + 86016,
                                 "DDR->DDR": 620288})
        with open(os.path.join(DUMP, "net_stat.sim")) as f:
            summary = [ln for ln in f if ln.startswith("GDMA SUMMARY")][0]
        self.assertIn("dr[0] S2L:2150032|dr[1] L2S:1084416|dr[2] S2S:620288", summary)

    def test_cost(self):
        """The cost model's figures and the operand types, command by command."""
        bad = []
        for r, a in self.vendor_pairs():
            want = {"Opd0 Dtype": r["Opd0 Dtype"], "Res Dtype": r["Res Dtype"],
                    "Alg Cycle": int(r["Alg cycle"])}
            if r["EngineId"] == "0":
                want.update({"Alg Ops": int(r["Alg Ops"]), "uArch Ops": int(r["uArch Ops"]),
                             "uArch Rate": r["uArch Rate"]})
            got = {k: a.get(k) for k in want}
            if got != want:
                bad.append((r["Inst ID"], want, got))
        self.assertEqual(bad, [], f"{len(bad)} commands differ, first: {bad[:3]}")
        tiu = Converted.get().summary["overall"]["engines"]["TIU"]
        self.assertEqual((tiu["total_alg_ops"], tiu["total_uarch_ops"]), (177563433, 1079672833))
        self.assertEqual(round(tiu["uarch_rate_pct"], 3), 16.446)

    def test_layers(self):
        """Every command joined to the vendor's layer."""
        bad = [(r["Inst ID"], r["Layer ID"], a.get("Layer Id")) for r, a in self.vendor_pairs()
               if str(a.get("Layer Id", "-")) != r["Layer ID"]]
        self.assertEqual(bad, [])

    def test_trace_times(self):
        """The trace's times are the vendor's cycles at 1000 MHz, start and end."""
        got = {}
        for lane, eng in (("Core 0 TIU", "TIU"), ("Core 0 GDMA", "GDMA")):
            for a in Converted.get().lanes[lane]:
                got[(eng, a["Cmd Id"] - 1)] = a
        with open(os.path.join(OUT, "trace.json")) as f:
            ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"
                  and e["cat"] in ("TIU", "GDMA")]
        times = {(e["cat"], e["args"]["Cmd Id"] - 1): (e["ts"], e["ts"] + e["dur"]) for e in ev}
        for r in vendor_rows():
            eng, n = r["Inst ID"].split("-")
            ts, te = times[(eng, int(n))]
            self.assertAlmostEqual(ts, int(r["StartCycle"]) / 1000, places=3, msg=r["Inst ID"])
            self.assertAlmostEqual(te, int(r["EndCycle"]) / 1000, places=3, msg=r["Inst ID"])

    def test_records(self):
        """§8.2: the net's commands on the engine lanes, the firmware's own 3 GDMA records on
        a lane of their own, without a layer, and a note."""
        c = Converted.get()
        self.assertEqual(len(c.lanes["Core 0 TIU"]), 90)
        self.assertEqual(len(c.lanes["Core 0 GDMA"]), 160)
        outside = c.lanes["Core 0 GDMA outside the net"]
        self.assertEqual(sorted((a["Cmd Id"], a["Start Cycle"]) for a in outside),
                         [(1, 10960), (1, 221486), (2, 224032)])
        self.assertTrue(all("Layer Id" not in a for a in outside))
        # Cycles printed as on the engine lanes (End Cycle = start + Asic Cycle), the
        # vendor's html: the first runs from 10.960 to 18.084 us at 1000 MHz.
        self.assertTrue(all(a["End Cycle"] - a["Start Cycle"] == a["Asic Cycle"]
                            for a in outside), outside)
        self.assertIn((10960, 18084), [(a["Start Cycle"], a["End Cycle"]) for a in outside])
        notes = " ".join(c.summary.get("notes", []))
        self.assertIn("3 GDMA records ran outside the net's command stream", notes)

    def test_summary(self):
        """The Overall row of the vendor's summary.csv (PROVENANCE.txt)."""
        s = Converted.get().summary
        core = s["cores"][0]
        self.assertEqual(s["total_time_us"], 181.176)
        self.assertEqual(core["total_tiu_cycle"], 45990)
        self.assertEqual(core["total_gdma_cycle"], 148346)
        self.assertEqual(round(core["parallelism_pct"], 3), 107.264)
        self.assertEqual(round(core["perfdoc_concurrency_pct"], 3), 28.615)


if __name__ == "__main__":
    if not os.path.isdir(DUMP) or not os.path.isdir(REF):
        print(f"SKIPPED: the real BM1684X dump or its vendor outputs are absent ({DUMP}, {REF})")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v"])
