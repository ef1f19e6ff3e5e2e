#!/usr/bin/python3
"""test_cost_kept.py — the TIU cost figures reach the traces at every dump size.

usage: test_cost_kept.py TPUPROF GENDUMP WORKDIR

A generated 2 x 200 000-command BM1688 dump (iter0.profile 46.8 MB: 1.46 M records by its
bytes / 32, 400 000 by its PMU records) is converted
  1. at default settings: --detail auto counts the PMU records, so every per-command detail is
     kept (no "large dump: per-command details" note) and every TIU command the cost model
     covers carries Alg Ops, uArch Ops, Alg Cycle and uArch Rate;
  2. with --detail none: the same four figures on the same commands, equal to 1.'s (shared
     argument sets, one per distinct cost entry), and nothing else per command.
"""
import os
import subprocess
import sys
import unittest

from sgtest import convert

TPUPROF, GENDUMP, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
DUMP = os.path.join(WORK, "gen-2x200k")
COST = ("Alg Ops", "uArch Ops", "Alg Cycle", "uArch Rate")


def tiu_args(out, *extra):
    trace, summary = convert(TPUPROF, DUMP, out, *extra)
    return [e["args"] for e in trace["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") == "TIU"], summary


class CostKept(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isdir(DUMP):
            subprocess.run([GENDUMP, "--arch", "BM1688", "--cores", "2", "--cmds", "200000",
                            "--seed", "1", DUMP], check=True, capture_output=True)
        cls.auto, cls.auto_sum = tiu_args(os.path.join(WORK, "auto"))
        cls.none, cls.none_sum = tiu_args(os.path.join(WORK, "none"), "--detail", "none")

    def covered(self, summary):
        return sum(c["engines"]["TIU"]["cost_commands"] for c in summary["cores"])

    def test_default_keeps_detail(self):
        notes = " ".join(self.auto_sum.get("notes", []))
        self.assertNotIn("per-command details", notes)
        with_cost = [a for a in self.auto if "uArch Rate" in a]
        self.assertGreater(len(with_cost), 100000)
        self.assertEqual(len(with_cost), self.covered(self.auto_sum))
        self.assertTrue(all(k in a for a in with_cost for k in COST))

    def test_none_keeps_cost(self):
        self.assertEqual(len(self.none), len(self.auto))
        self.assertEqual(self.covered(self.none_sum), self.covered(self.auto_sum))
        self.assertEqual(sum("uArch Rate" in a for a in self.none), self.covered(self.none_sum))
        for a, b in zip(self.none, self.auto):
            self.assertEqual([a.get(k) for k in COST], [b.get(k) for k in COST], a["Cmd Id"])


if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=[sys.argv[0], "-v"])
