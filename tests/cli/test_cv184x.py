#!/usr/bin/python3
"""End-to-end tests of tpuprof on the real CV184X dump and on its side files gone wrong.

usage: test_cv184x.py TPUPROF SHARED_DIR

1. The real CV184X blazeface dump (SHARED_DIR/testdata/sophgo/cv184x_blazeface) converts with
   every default output plus --json --sqlite, and its summary equals the vendor's figures in
   PROVENANCE.txt; the traces carry the MLIR layer names.
2. Side files are tolerant: a copy of the dump whose net_stat.sim,
   tensor_location.json or final.mlir is malformed or of another version, or that holds an
   unknown extra file, still converts (exit 0) and names what was skipped as `path:LINE` in
   the summary notes; a damaged timeline file (iter0.profile) still fails with exit 2.
3. Hostile ids: TIU inst_ids that wrap at every other record unwrap to command ids of
   (records / 2) x 2^20; the layer join's memory stays bounded by the file, under a 2 GiB
   address-space limit.
When the dump is absent every test prints a loud SKIPPED.
"""
import json
import resource
import os
import shutil
import struct
import sqlite3
import subprocess
import sys
import tempfile
import unittest

TPUPROF, SHARED = sys.argv[1], sys.argv[2]
REAL = os.path.join(SHARED, "testdata", "sophgo", "cv184x_blazeface")


# The one note every conversion of this dump carries: its recorded times put 111 of its 336
# dependencies in the wrong order (the vendor's timeline, which tpuprof reproduces; see
# tests/sophgo/test_deps.py).
DEPS_NOTE = "dependencies: 111 of 336 commands start before the command they wait on ends"


def other_notes(s):
    """The summary's notes but the dependency note, which must be there."""
    assert any(n.startswith(DEPS_NOTE) for n in s["notes"]), s["notes"]
    return [n for n in s["notes"] if not n.startswith(DEPS_NOTE)]


def run(*args):
    p = subprocess.run([TPUPROF, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# Sanitizer builds (TP_SANITIZED=1 from CMake) reserve terabytes of shadow address space and
# keep their own bookkeeping in RSS: neither the address-space limit nor the RSS bound applies.
SANITIZED = os.environ.get("TP_SANITIZED") == "1"


def run_limited(args, limit=2 << 30):
    """tpuprof under an address-space limit: (exit status, stderr, peak RSS in bytes)."""
    def cap():
        if not SANITIZED:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([TPUPROF, *args], stdout=subprocess.DEVNULL, stderr=err,
                             preexec_fn=cap)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return p.returncode, err.read().decode(errors="replace"), ru.ru_maxrss * 1024


def need_real(test):
    def wrapper(self):
        if not os.path.isdir(REAL):
            print(f"\nSKIPPED: real CV184X dump not found at {REAL}", file=sys.stderr)
            self.skipTest("real dump absent")
        return test(self)
    wrapper.__name__ = test.__name__
    return wrapper


class RealCV184X(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "out")
        if os.path.isdir(REAL):
            cls.rc, cls.stdout, cls.stderr = run(REAL, cls.out, "--json", "--sqlite")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @need_real
    def test_summary_equals_provenance(self):
        self.assertEqual(self.rc, 0, self.stderr)
        with open(os.path.join(self.out, "summary.json")) as f:
            s = json.load(f)
        self.assertEqual(s["arch"], "CV184X")
        self.assertEqual(s["net_name"], "blazeface")
        c0 = s["cores"][0]
        self.assertEqual(round(c0["parallelism_pct"], 2), 112.05)
        self.assertEqual(round(s["total_time_ns"] / 1000, 2), 1697.54)
        self.assertEqual(round(c0["tiu_working_ratio_pct"], 2), 46.43)
        self.assertEqual(c0["total_tiu_cycle"], 591160)
        self.assertEqual(c0["total_gdma_cycle"], 724000)
        self.assertEqual(round(c0["gdma_ddr_avg_bw_gbps"], 2), 4.39)
        self.assertEqual(c0["engines"]["TIU"]["records"], 116)
        self.assertEqual(c0["engines"]["GDMA"]["records"], 225)
        self.assertEqual(other_notes(s), [])
        # The cost model through the register tables: uArchURate and the
        # workbook's Engine Summary totals of PROVENANCE.txt (reference made with EU 16).
        tiu = c0["engines"]["TIU"]
        self.assertEqual(round(tiu["uarch_rate_pct"], 2), 69.27)
        self.assertEqual(tiu["total_alg_cycle"], 182787)
        self.assertEqual(tiu["total_alg_ops"], 61947009)
        self.assertEqual(tiu["total_uarch_ops"], 89427201)
        self.assertEqual(tiu["cost_missing"], 0)
        with open(os.path.join(self.out, "summary.txt"), encoding="utf-8") as f:
            self.assertIn("69.27%", f.read())
        try:
            import openpyxl
        except ImportError:
            print("SKIPPED: openpyxl absent; the workbook's Engine Summary was not read")
        else:
            wb = openpyxl.load_workbook(os.path.join(self.out, "PerfDoc", "PerfAI_output.xlsx"))
            ws = wb["Engine Summary"]
            head = [c.value for c in ws[4]]
            rows = [dict(zip(head, r)) for r in ws.iter_rows(min_row=5, values_only=True)
                    if r and r[0] is not None]
            got = [r for r in rows if r.get("totalAlgCycle") is not None]
            self.assertTrue(got, head)
            self.assertEqual(got[0]["totalAlgCycle"], 182787)
            self.assertEqual(got[0]["totalAlgOps"], 61947009)
            self.assertEqual(got[0]["totalUArchOps"], 89427201)
            self.assertEqual(round(got[0]["uArchURate"] * 100, 2), 69.27)  # a % cell
        for name in ("summary.txt", "result.html", "perfetto.pftrace", "trace.json",
                     "profile.db", os.path.join("PerfDoc", "PerfAI_output.xlsx")):
            self.assertTrue(os.path.getsize(os.path.join(self.out, name)) > 0, name)

    @need_real
    def test_layer_names_in_outputs(self):
        self.assertEqual(self.rc, 0, self.stderr)
        with open(os.path.join(self.out, "trace.json")) as f:
            t = json.load(f)
        ev = t["traceEvents"] if isinstance(t, dict) else t
        conv = [e for e in ev if e.get("ph") == "X" and e.get("args", {}).get("Cmd Id") == 2
                and e.get("cat") == "TIU"]
        self.assertEqual(len(conv), 1)
        self.assertEqual(conv[0]["args"]["Layer Name"], "80_Relu")
        self.assertEqual(conv[0]["args"]["Layer Id"], 19)
        db = sqlite3.connect(os.path.join(self.out, "profile.db"))
        n = db.execute("select count(*) from arg_value where string_value = '80_Relu'").fetchone()
        self.assertGreater(n[0], 0)
        with open(os.path.join(self.out, "result.html"), encoding="utf-8") as f:
            self.assertIn("80_Relu", f.read())


class SideFiles(unittest.TestCase):
    """Copies of the real dump with one file changed."""

    def convert(self, change):
        with tempfile.TemporaryDirectory() as t:
            dump = os.path.join(t, "bmprofile_data-1")
            shutil.copytree(REAL, dump)
            for name in os.listdir(dump):
                os.chmod(os.path.join(dump, name), 0o644)
            change(dump)
            out = os.path.join(t, "out")
            rc, _, err = run(dump, out, "-q", "--disable_web", "--disable_doc",
                             "--disable_perfetto")
            s = None
            if rc == 0:
                with open(os.path.join(out, "summary.json")) as f:
                    s = json.load(f)
                with open(os.path.join(out, "summary.txt")) as f:
                    s["_txt"] = f.read()
            return rc, err, s, dump

    def assert_noted(self, s, dump, text):
        hits = [n for n in s["notes"] if n.startswith(os.path.join(dump, "")) and text in n]
        self.assertTrue(hits, f"no note with {text!r}: {s['notes']}")
        self.assertIn(text, s["_txt"])

    @need_real
    def test_net_stat_spaces_around_colon(self):
        # The real case that rejected a whole dump: another runtime's "TCYC : 224969".
        def change(d):
            with open(os.path.join(d, "net_stat.sim"), "w") as f:
                f.write("TCYC : 224969\r\nflops : 5, runtime : 1.5ms\n")
        rc, err, s, _ = self.convert(change)
        self.assertEqual(rc, 0, err)
        self.assertEqual(s["metadata"]["sim_total_cycle"], "224969")
        self.assertEqual(other_notes(s), [])

    @need_real
    def test_net_stat_garbage_is_a_note(self):
        def change(d):
            with open(os.path.join(d, "net_stat.sim"), "w") as f:
                f.write("ENGINE_BD\nConv|CONV|s:1|b:x|g:2|e:3|t:3\nAPI_END total_cycle:9|b:1|g:1\n")
        rc, err, s, dump = self.convert(change)
        self.assertEqual(rc, 0, err)
        self.assert_noted(s, dump, "net_stat.sim:2: malformed item")
        self.assertEqual(s["cores"][0]["total_tiu_cycle"], 591160)

    @need_real
    def test_tensor_location_truncated_is_a_note(self):
        def change(d):
            p = os.path.join(d, "tensor_location.json")
            with open(p, "rb") as f:
                data = f.read()
            with open(p, "wb") as f:
                f.write(data[:5000])
        rc, err, s, dump = self.convert(change)
        self.assertEqual(rc, 0, err)
        self.assert_noted(s, dump, "tensor_location.json:")
        self.assert_noted(s, dump, "not valid JSON")
        self.assertEqual(s["cores"][0]["total_gdma_cycle"], 724000)

    @need_real
    def test_final_mlir_garbage_is_tolerated(self):
        def change(d):
            with open(os.path.join(d, "final.mlir"), "wb") as f:
                f.write(b"\x00\xff garbage loc(\"unterminated\n#loc3 = loc(\n")
        rc, err, s, dump = self.convert(change)
        self.assertEqual(rc, 0, err)
        self.assert_noted(s, dump, "final.mlir:1: unreadable loc() or alias line")

    @need_real
    def test_unknown_extra_file_is_ignored(self):
        def change(d):
            with open(os.path.join(d, "notes_from_another_tool.profile"), "w") as f:
                f.write("whatever\n")
            os.mkdir(os.path.join(d, "iter9.profile.d"))
        rc, err, s, _ = self.convert(change)
        self.assertEqual(rc, 0, err)
        self.assertEqual(other_notes(s), [])

    @need_real
    def test_damaged_timeline_still_fails(self):
        def change(d):
            p = os.path.join(d, "iter0.profile")
            with open(p, "rb") as f:
                data = f.read()
            with open(p, "wb") as f:
                f.write(data[:100])
        rc, err, s, dump = self.convert(change)
        self.assertEqual(rc, 2)
        self.assertIn(os.path.join(dump, "iter0.profile") + "@0x", err)


class HostileIds(unittest.TestCase):
    """Command ids are values from the file (inst_id plus 2^20 per wrap): they must not size
    an allocation. The layer join once sized an array by the largest id: 4 MiB per wrap."""

    @need_real
    def test_wrapping_tiu_ids(self):
        with tempfile.TemporaryDirectory() as t:
            dump = os.path.join(t, "bmprofile_data-1")
            shutil.copytree(REAL, dump)
            for name in os.listdir(dump):
                os.chmod(os.path.join(dump, name), 0o644)
            path = os.path.join(dump, "iter0.profile")
            with open(path, "rb") as f:
                data = bytearray(f.read())
            off, changed = 0, 0
            while off < len(data):
                btype, n = struct.unpack_from("<II", data, off)
                if btype == 3:  # MONITOR_BD, 16-byte records, inst_id in bits 0-19
                    for i in range(0, n // 16, 2):
                        w = struct.unpack_from("<I", data, off + 8 + i * 16)[0]
                        struct.pack_into("<I", data, off + 8 + i * 16, w | 0xFFFFF)
                        changed += 1
                off += 8 + n
            self.assertGreater(changed, 40)
            with open(path, "wb") as f:
                f.write(data)
            rc, err, rss = run_limited(["-q", dump, os.path.join(t, "out")])
            self.assertIn(rc, (0, 2), err)
            if rc == 2:
                self.assertIn("iter0.profile@0x", err)
            if SANITIZED:
                print("\nSKIPPED: peak RSS bound (sanitizer build: its shadow memory is not the "
                      "reader's)", file=sys.stderr)
            else:
                self.assertLess(rss, 128 << 20, f"peak RSS {rss >> 20} MiB")


if __name__ == "__main__":
    r = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    failed = len(r.failures) + len(r.errors)
    print(f"{r.testsRun - failed - len(r.skipped)} passed, {failed} failed, {len(r.skipped)} skipped")
    sys.exit(1 if failed else 0)
