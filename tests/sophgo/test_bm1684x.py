#!/usr/bin/python3
"""test_bm1684x.py — tpuprof on the real BM1684X dump against the vendor's own outputs.

usage: test_bm1684x.py TPUPROF SHARED_DIR OUTDIR

The dump is ../shared/testdata/sophgo/bm1684x_blazeface; the vendor's outputs (tpu_profile.py
--arch BM1684X --format layer) are in ../shared/testdata/sophgo/reference/bm1684x_blazeface/
layer/ and their figures in the dump's PROVENANCE.txt. Checked, command by command against
instruction.csv (90 TIU, 160 GDMA rows):
  - timeline (specs/sophgo-bmprofile.md §9.1): every command's Start and End Cycle.
Exit 0 all equal, 1 on a difference, 77 (ctest SKIP, printed loudly) when the data is absent.
"""
import csv
import json
import os
import subprocess
import sys
import unittest

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
            subprocess.run(["rm", "-rf", OUT], check=True)
            p = subprocess.run([TPUPROF, DUMP, OUT, "--json", "--disable_web", "--disable_doc",
                                "--disable_perfetto", "-q"], capture_output=True, text=True)
            if p.returncode != 0:
                raise AssertionError(f"tpuprof exit {p.returncode}: {p.stderr}")
            with open(os.path.join(OUT, "trace.json")) as f:
                trace = json.load(f)
            names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
                     if e.get("name") == "thread_name"}
            cls.lanes = {}
            for e in trace["traceEvents"]:
                if e.get("ph") == "X":
                    cls.lanes.setdefault(names[(e["pid"], e["tid"])], []).append(e["args"])
            with open(os.path.join(OUT, "summary.json")) as f:
                cls.summary = json.load(f)
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
            if want not in [(a["Start Cycle"], a["End Cycle"]) for a in cands]:
                bad.append(f"{r['Inst ID']}: vendor {want}, ours "
                           f"{[(a['Start Cycle'], a['End Cycle']) for a in cands]}")
        self.assertEqual(bad, [], f"{len(bad)} commands differ, first: {bad[:5]}")


if __name__ == "__main__":
    if not os.path.isdir(DUMP) or not os.path.isdir(REF):
        print(f"SKIPPED: the real BM1684X dump or its vendor outputs are absent ({DUMP}, {REF})")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v"])
