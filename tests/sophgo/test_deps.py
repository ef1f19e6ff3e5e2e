#!/usr/bin/python3
"""test_deps.py — the dependency property on every real and generated Sophgo dump: no command
starts before the command it waits on ends (src/analysis/deps_check.h), or, where the input
itself records it so, a summary note that says so.

usage: test_deps.py TPUPROF GENDUMP SHARED_DIR WORKDIR

Each dump is converted with --json; from the trace, independently of the reader's check, every
TIU command with des_cmd_id_dep waits on the GDMA command of its core with that Cmd Id, every
GDMA command with cmd_id_dep on the TIU command (ids that occur twice are not checked). Dumps:
generated BM1688 (2 cores), BM1684X, BM1684 (3 seeds), cdm BM1690 (modes 1 and 2:
descriptors) and every real dump in SHARED_DIR/testdata/sophgo (SKIPPED loudly when absent); the cdm generator writes no
dependencies, so its dumps only show that nothing is noted. The real BM1688 resnet50 dump
records 63 of 375 TIU commands starting up to a few dozen ns before the GDMA load they wait on
ends (the vendor's own timeline, which tpuprof reproduces to the ns, §9.2): its note must give
that count; every other dump has no violation and no note. Also: the real BM1684X dump has the
246 dependencies its PROVENANCE.txt counts.
"""
import os
import subprocess
import sys
import unittest

from sgtest import convert

TPUPROF, GENDUMP, SHARED, WORK = sys.argv[1:5]
REAL = os.path.join(SHARED, "testdata", "sophgo")
RECORDED = {"bm1688_resnet50": 63, "cv184x_blazeface": 111}  # as the input records them




def violations(trace):
    """(checked, violated) from the trace's TIU and GDMA slices."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
             if e.get("name") == "thread_name"}
    lanes = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("TIU", "GDMA"):
            lane = names[(e["pid"], e["tid"])]
            lanes.setdefault((e["pid"], lane), []).append(e)
    checked = bad = 0
    for (pid, lane), evs in lanes.items():
        eng = "TIU" if lane.endswith("TIU") else "GDMA"
        partner = lanes.get((pid, lane[:-len(eng)] + ("GDMA" if eng == "TIU" else "TIU")), [])
        ends = {}
        for e in partner:
            ends.setdefault(e["args"].get("Cmd Id"), []).append(e["ts"] + e["dur"])
        key = "des_cmd_id_dep" if eng == "TIU" else "cmd_id_dep"
        for e in evs:
            # BM1690 writes a flag in bit 20 above the partner's id (the trace shows the
            # whole register)
            dep = e["args"].get(key, 0) & 0xFFFFF
            if not dep or len(ends.get(dep, [])) != 1:
                continue
            checked += 1
            # trace times are µs with 3 decimals: compare in ns
            if round(e["ts"] * 1000) < round(ends[dep][0] * 1000):
                bad += 1
    return checked, bad


class Deps(unittest.TestCase):
    def check(self, name, dump):
        trace, summary = convert(TPUPROF, dump, os.path.join(WORK, name))
        notes = summary.get("notes", [])
        checked, bad = violations(trace)
        note = [n for n in notes if n.startswith("dependencies:")]
        want = RECORDED.get(name, 0)
        self.assertEqual(bad, want, f"{name}: {bad} of {checked} dependencies violated")
        if want:
            self.assertEqual(len(note), 1, name)
            self.assertIn(f"{want} of {checked} commands start before", note[0])
        else:
            self.assertEqual(note, [], name)
        return checked

    def gen(self, name, *args):
        d = os.path.join(WORK, "in-" + name)
        subprocess.run(["rm", "-rf", d], check=True)
        subprocess.run([GENDUMP, *args, d], check=True, capture_output=True)
        return self.check(name, d)

    def test_generated(self):
        self.assertGreater(self.gen("gen-bm1688", "--arch", "BM1688", "--cores", "2", "--cmds",
                                    "20000", "--seed", "5"), 10000)
        self.assertGreater(self.gen("gen-bm1684x", "--arch", "BM1684X", "--cmds", "3000",
                                    "--seed", "6"), 1000)
        for seed in (1, 2, 3):
            self.assertGreater(self.gen("gen-bm1684-%d" % seed, "--arch", "BM1684", "--cmds",
                                        "3000", "--seed", str(seed)), 2900)
        self.gen("gen-cdm1", "--format", "cdm", "--arch", "BM1690", "--cores", "2", "--cmds",
                 "2000", "--mode", "1", "--seed", "7")
        # (the cdm generator writes no cmd_id_dep: nothing to check, and no note)
        self.gen("gen-cdm2", "--format", "cdm", "--arch", "BM1690", "--cores", "2", "--cmds",
                 "2000", "--mode", "2", "--seed", "8")

    def test_real(self):
        if not os.path.isdir(REAL):
            print(f"\nSKIPPED: real dumps not found at {REAL}", file=sys.stderr)
            self.skipTest("real dumps absent")
        dumps = [d for d in sorted(os.listdir(REAL)) if d != "reference"
                 and os.path.isdir(os.path.join(REAL, d))]
        self.assertTrue(dumps)
        for d in dumps:
            with self.subTest(dump=d):
                checked = self.check(d, os.path.join(REAL, d))
                if d == "bm1684x_blazeface":
                    self.assertEqual(checked, 246)
                if d == "bm1690_blazeface_cdm":
                    self.assertGreater(checked, 200)


if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=[sys.argv[0], "-v"])
