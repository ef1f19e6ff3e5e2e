#!/usr/bin/python3
"""test_bm1684.py — BM1684 dumps read: generated ones (tpuprof-gendump --arch BM1684) of
several seeds and sizes convert with exit 0, and what tpuprof reports equals what the
generator wrote, read here from the files themselves (sophgo-bmprofile.md):

- iter0.profile: MONITOR_BD 32-byte records (start, end, u16 inst_id), MONITOR_GDMA 192-byte
  records (start, end, u16 inst_id; bytes = d0_wr + d1_wr + gif_wr, §10.3; the first is the
  firmware's own command, announced by the first NODE_SET, before the net's records start
  again from inst_id 0) and the COMMAND block's bases and counts;
- cmd_<base>_0_<engine>.dat: 128-byte descriptors, TIU stored as 32 words in reverse order
  (CMD_END bit 1, CMD_ID_TPU bits 3-18, CMD_ID_GDMA 19-34, TSK_TYP 37-40 after reversal), GDMA
  as is (CHAIN_END bit 2, DIRECTION 6-7, CMD_ID 16-31, ENG0_SYNC_ID 48-63) (§6).

Per dump: the summary's arch and clocks (550 / 575 MHz, §8.1), record counts, TIU and GDMA
cycle totals (end - start, the legacy count), DDR read/write bytes by the descriptors'
directions, the total time against the generator's own figure; per command, the name from
TSK_TYP, the direction from DIRECTION and the dependency from the descriptor, and a layer for
every command; the last descriptor of each engine carries the end bit; the firmware's record
on its own track, out of the totals, with its note; no other note but the generic ones (no
undecoded commands, no dependency violation, no missing TIU anchor).

usage: test_bm1684.py TPUPROF GENDUMP WORKDIR
"""
import json
import os
import re
import struct
import subprocess
import sys
import unittest

TPUPROF, GENDUMP, WORK = sys.argv[1:4]
BD_FUNCS = ["CONV_NEURON", "DEPTHWISE_OR_POOLING", "FC", "TENSOR_ARITHMETIC", "FC2",
            "CONV_CORRELATION", "TABLE_LOOKUP", "MD_SUM", "MD_SCALAR", "MD_SFU", "MD_LINEAR",
            "LOCALMEM_ARANGE", "DECOMPRESS", "MD_CMP", "VECTOR_CORRELATION"]
DIRS = ["DDR->LMEM", "LMEM->DDR", "DDR->DDR", "LMEM->LMEM"]
# (seed, commands, extra generator options): small and mid-sized dumps, one past the 16-bit
# TIU id, one whose 32-bit TIU counter wraps.
DUMPS = [(1, 400, ()), (2, 2000, ()), (3, 7000, ("--layers", "conv=5,load=5,store=5")),
         (4, 110000, ()), (5, 3000, ("--wrap",))]
FW_NOTE = "core 0: 1 GDMA record ran outside the net's command stream"
GENERIC_NOTES = ("uArchURate is n/a", "Concurrency (summary.json", "PerfDoc (PerfAI_output",
                 "PerfDoc/PerfAI_output.xlsx:", "the 32-bit cycle counter wrapped",
                 "TIU inst_id wrapped")


def bits(b, lo, w):
    return (int.from_bytes(b, "little") >> lo) & ((1 << w) - 1)


def read_dump(d):
    """PMU records and decoded descriptors, straight from the files."""
    it = open(os.path.join(d, "iter0.profile"), "rb").read()
    off, blocks = 0, {}
    while off + 8 <= len(it):
        t, n = struct.unpack_from("<II", it, off)
        blocks.setdefault(t, []).append(it[off + 8:off + 8 + n])
        off += 8 + n
    assert off == len(it), d
    gbase, _, bbase, _, groups = struct.unpack_from("<QQQQI", blocks[8][0])
    ng = sum(struct.unpack_from("<I", blocks[8][0], 36 + 8 * g)[0] for g in range(groups))
    nt = sum(struct.unpack_from("<I", blocks[8][0], 40 + 8 * g)[0] for g in range(groups))
    bd = [struct.unpack_from("<IIH", blocks[3][0], i) for i in range(0, len(blocks[3][0]), 32)]
    gd = []
    for i in range(0, len(blocks[4][0]), 192):
        s, e, iid = struct.unpack_from("<IIH", blocks[4][0], i)
        d0, d1, gif = (struct.unpack_from("<I", blocks[4][0], i + k)[0] for k in (16, 28, 40))
        gd.append((s, e, iid, d0 + d1 + gif))
    tf = open(os.path.join(d, "cmd_%x_0_0.dat" % bbase), "rb").read()
    gf = open(os.path.join(d, "cmd_%x_0_1.dat" % gbase), "rb").read()
    tiu = []
    for k in range(nt):
        raw = tf[128 * k:128 * k + 128]
        h = b"".join(raw[4 * (31 - j):4 * (32 - j)] for j in range(32))
        tiu.append({"end": bits(h, 1, 1), "id": bits(h, 3, 16), "dep": bits(h, 19, 16),
                    "typ": bits(h, 37, 4)})
    gdma = []
    for k in range(ng):
        g = gf[128 * k:128 * k + 128]
        gdma.append({"end": bits(g, 2, 1), "dir": bits(g, 6, 2), "id": bits(g, 16, 16),
                     "dep": bits(g, 48, 16)})
    assert gd[0][2] == 0 and gd[1][2] == 0, d  # the firmware's record, then the net's
    return bd, gd[1:], tiu, gdma, gd[0]


def cycles(recs):
    """Σ(end - start) with the 32-bit counters unwrapped."""
    return sum((e - s) % (1 << 32) for s, e, *_ in recs)


class BM1684(unittest.TestCase):
    def check(self, seed, n, extra):
        d = os.path.join(WORK, "in-%d" % seed)
        out = os.path.join(WORK, "out-%d" % seed)
        subprocess.run(["rm", "-rf", d, out], check=True)
        g = subprocess.run([GENDUMP, "--arch", "BM1684", "--cmds", str(n), "--seed", str(seed),
                            *extra, d], check=True, capture_output=True, text=True)
        span_us = float(re.search(r"([0-9.]+) us of device time", g.stdout).group(1))
        p = subprocess.run([TPUPROF, d, out, "--json", "--disable_web", "--disable_doc",
                            "--disable_perfetto", "-q"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        s = json.load(open(os.path.join(out, "summary.json")))
        trace = json.load(open(os.path.join(out, "trace.json")))
        bd, gd, tiu, gdma, fw = read_dump(d)

        notes = s.get("notes", [])
        self.assertEqual(len([n for n in notes if n.startswith(FW_NOTE)]), 1, notes)
        for note in notes:
            self.assertTrue(note.startswith(FW_NOTE) or any(g in note for g in GENERIC_NOTES),
                            note)
        self.assertEqual((s["arch"], s["tiu_freq_mhz"], s["gdma_freq_mhz"]),
                         ("BM1684", 550.0, 575.0))
        self.assertEqual(s["record_counts"]["TIU"], len(bd))
        self.assertEqual(s["record_counts"]["GDMA"], len(gd))
        self.assertEqual((len(bd), len(gd)), (len(tiu), len(gdma)))
        core = s["cores"][0]
        self.assertEqual(core["total_tiu_cycle"], cycles(bd))
        self.assertEqual(core["total_gdma_cycle"], cycles(gd))
        eng = core["engines"]["GDMA"]
        self.assertEqual(eng["ddr_read_bytes"],
                         sum(r[3] for r, c in zip(gd, gdma) if c["dir"] == 0))
        self.assertEqual(eng["ddr_write_bytes"],
                         sum(r[3] for r, c in zip(gd, gdma) if c["dir"] == 1))
        self.assertAlmostEqual(s["total_time_us"], span_us, delta=0.01)
        # the descriptors: own ids by position, the end bit on the last one only
        for cmds in (tiu, gdma):
            self.assertEqual([c["id"] for c in cmds],
                             [k & 0xFFFF for k in range(1, len(cmds) + 1)])
            self.assertEqual([c["end"] for c in cmds], [0] * (len(cmds) - 1) + [1])

        ev = [e for e in trace["traceEvents"] if e.get("ph") == "X"
              and e.get("cat") in ("TIU", "GDMA")]
        self.assertEqual(len(ev), len(bd) + len(gd))
        lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
                 if e.get("name") == "thread_name"}
        out = [e for e in trace["traceEvents"] if e.get("ph") == "X"
               and lanes.get((e["pid"], e["tid"])) == "Core 0 GDMA outside the net"]
        self.assertEqual(len(out), 1)
        self.assertNotIn("Layer Id", out[0]["args"])
        self.assertAlmostEqual(out[0]["dur"], (fw[1] - fw[0]) / 575, delta=0.002)
        for e in ev:
            a = e["args"]
            k = a["Cmd Id"] - 1
            self.assertIn("Layer Id", a, e)
            if e["cat"] == "TIU":
                c = tiu[k]
                self.assertEqual(e["name"], BD_FUNCS[c["typ"]])
                self.assertEqual(a.get("des_cmd_id_dep", 0), c["dep"])
            else:
                c = gdma[k]
                self.assertEqual(a["Direction"], DIRS[c["dir"]])
                self.assertEqual(a.get("cmd_id_dep", 0), c["dep"])
        return len(ev)

    def test_generated(self):
        for seed, n, extra in DUMPS:
            with self.subTest(seed=seed, cmds=n):
                self.assertEqual(self.check(seed, n, extra), n)


if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    unittest.main(argv=[sys.argv[0], "-v"])
