#!/usr/bin/python3
"""Every output is the same bytes for every --jobs.

usage: test_read_jobs.py TPUPROF GENDUMP SHARED_DIR

Each input is converted with --jobs 1, 2, 3 and 16 (default outputs plus --json --sqlite) and
every file of the output folders must be byte-identical across the four:
- every dump in SHARED_DIR/testdata/sophgo and every Chrome trace in SHARED_DIR/testdata/traces
  (h200/ included; SKIPPED loudly when absent), the dumps also with --detail none (where the
  bmprofile reader does its per-core work through tp_par_run);
- a generated BM1688 dump whose global.profile has several 4 MB chunks (the chunked parser
  runs on more than one thread), with and without argument sets, and one whose engines hold
  more records than a part (read, filled and checked in parts at --jobs 16);
- a generated 8-core BM1690 cdm dump (two CDMA ports), with and without argument sets, and a
  2-core one whose TIU and GDMA engines hold more records than a part (read in parts).
A damaged global.profile line late in a chunk gives the same `path:LINE` message (exit 2) for
every --jobs. --timings (the per-phase report) changes no output byte, and its report names the
reader, analysis and output phases with consistent figures.

In the ThreadSanitizer build (TP_TEST_TSAN=1, ~20x slower) only the generated dumps run, without
the workbook and the page, and the BM1688 one only with --detail none (its threaded path), so
that a data race between threads fails a conversion; the page alone is then written for the
generated BM1688 dump (lanes longer than one of its parts, argument sets, memory records), and
the workbook alone for a dump whose sheets have several parts.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

TPUPROF, GENDUMP, SHARED = sys.argv[1], sys.argv[2], sys.argv[3]
TSAN = os.environ.get("TP_TEST_TSAN") == "1"
JOBS = (1, 2, 3, 16)
PART = 65536  # TP_BMPROFILE_PART (src/readers/sophgo/sophgo.h): records per part
OUTPUTS = ["--json", "--sqlite"] + (["--disable_doc", "--disable_web"] if TSAN else [])


def convert(src, out, jobs, extra=(), outputs=None):
    outputs = OUTPUTS if outputs is None else outputs
    p = subprocess.run([TPUPROF, src, out, "-q", "--jobs", str(jobs), *outputs, *extra],
                       capture_output=True, text=True)
    return p.returncode, p.stderr


def tree(root):
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            path = os.path.join(d, n)
            with open(path, "rb") as f:
                files[os.path.relpath(path, root)] = f.read()
    return files


def shared_inputs():
    """(tag, path) of every real dump and trace in SHARED, [] after saying SKIPPED."""
    base = os.path.join(SHARED, "testdata")
    dumps = sorted(d for d in glob.glob(os.path.join(base, "sophgo", "*"))
                   if os.path.isfile(os.path.join(d, "global.profile")))
    traces = sorted(glob.glob(os.path.join(base, "traces", "*.json")) +
                    glob.glob(os.path.join(base, "traces", "h200", "*.json.gz")))
    if not dumps:
        print("SKIPPED: read_jobs: no Sophgo dump in %s/sophgo" % base, file=sys.stderr)
    if not traces:
        print("SKIPPED: read_jobs: no Chrome trace in %s/traces" % base, file=sys.stderr)
    return dumps, traces


class ReadJobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def same_outputs(self, src, tag, extra=(), outputs=None,
                     want=("summary.json", "trace.json")):
        """Converts src with every --jobs; returns the files of the --jobs 1 run."""
        first = None
        for j in JOBS:
            out = os.path.join(self.tmp.name, "%s-j%d" % (tag, j))
            rc, err = convert(src, out, j, extra, outputs)
            self.assertEqual(rc, 0, "%s --jobs %d: %s" % (tag, j, err))
            files = tree(out)
            for name in want:
                self.assertIn(name, files, tag)
            if first is None:
                first = files
                continue
            self.assertEqual(sorted(files), sorted(first), "%s: --jobs %d wrote other files"
                             % (tag, j))
            for name, data in files.items():
                self.assertTrue(data == first[name], "%s: %s differs between --jobs 1 and %d"
                                % (tag, name, j))
        for j in JOBS:
            subprocess.run(["rm", "-rf", os.path.join(self.tmp.name, "%s-j%d" % (tag, j))])
        return first

    @unittest.skipIf(TSAN, "ThreadSanitizer build: generated dumps only")
    def test_shared_dumps(self):
        dumps, _ = shared_inputs()
        for d in dumps:
            name = os.path.basename(d)
            with self.subTest(dump=name):
                self.same_outputs(d, name)
                self.same_outputs(d, name + "-nodetail", ("--detail", "none"))

    @unittest.skipIf(TSAN, "ThreadSanitizer build: generated dumps only")
    def test_shared_traces(self):
        _, traces = shared_inputs()
        for t in traces:
            name = os.path.basename(t)
            with self.subTest(trace=name):
                self.same_outputs(t, name)

    def gen_bm1688(self):
        d = os.path.join(self.tmp.name, "gen1688")
        if not os.path.isdir(d):
            subprocess.run([GENDUMP, "--arch", "BM1688", "--cores", "2", "--cmds", "30000",
                            "--seed", "3", "--quiet", d], check=True)
        return d

    def test_generated_bm1688(self):
        d = self.gen_bm1688()
        size = os.path.getsize(os.path.join(d, "global.profile"))
        self.assertGreater(size, 3 * (4 << 20))  # at least 4 chunks
        if not TSAN:  # with argument sets the per-core work stays on the calling thread
            self.same_outputs(d, "gen1688")
        # Without per-command argument sets the per-core work runs on worker threads too.
        self.same_outputs(d, "gen1688-nodetail", ("--detail", "none"))

    def parts_dump(self, tag, args, engine, note):
        """A generated 2-core dump (gendump args) whose `engine` records make more than two
        parts, converted to SQLite (every command's fields) without argument sets at every
        --jobs; its summary must have a note containing `note`."""
        d = os.path.join(self.tmp.name, tag)
        subprocess.run([GENDUMP, "--cores", "2", *args, "--quiet", d], check=True)
        files = self.same_outputs(d, tag, ("--detail", "none"), outputs=[
            "--sqlite", "--disable_doc", "--disable_web", "--disable_perfetto"],
            want=("summary.json", "profile.db"))
        summary = json.loads(files["summary.json"])
        self.assertGreater(summary["record_counts"][engine], 2 * PART)
        self.assertTrue(any(note in n for n in summary["notes"]), summary["notes"])

    @unittest.skipIf(TSAN, "ThreadSanitizer build: bmp_read_test splits small dumps there")
    def test_generated_bm1688_parts(self):
        """An engine's records larger than a part (PART): with more threads
        than engines its PMU records, fill and dependency check run in parts, and the TIU
        inst_ids (16 bits) wrap inside the block. SQLite holds every command's fields."""
        self.parts_dump("gen1688-parts", ["--arch", "BM1688", "--cmds", "110000", "--seed", "5"],
                        "TIU", "TIU inst_id wrapped")

    def test_generated_page(self):
        """The page alone (the other tests write it too, but not under ThreadSanitizer):
        its lanes are longer than one part, with argument sets and memory records."""
        d = self.gen_bm1688()
        page = self.same_outputs(d, "gen1688-page", outputs=[
            "--disable_doc", "--disable_summary", "--disable_perfetto", "--disable_ops_csv"],
            want=("result.html",))
        self.assertEqual(sorted(page), ["result.html"])
        self.assertGreater(len(page["result.html"]), 1 << 20)

    def test_damaged_line_same_message(self):
        d = os.path.join(self.tmp.name, "gen1688-bad")
        subprocess.run(["cp", "-r", self.gen_bm1688(), d], check=True)
        # A damaged node line late in the second chunk, and a second damaged line after it:
        # the first one in file order is reported, whatever thread tokenized it.
        g = os.path.join(d, "global.profile")
        with open(g, "rb") as f:
            text = bytearray(f.read())
        lines_before = {}
        for at, repl in (((8 << 20) - 200, b"[bmprofile] gdma cmd_id bd_id=1 gdma_id=z9"),
                         ((11 << 20) + 50, b"[bmprofile] mtype=x")):
            b = text.rfind(b"\n", 0, at) + 1
            e = text.find(b"\n", at)
            self.assertGreaterEqual(e - b, len(repl))
            text[b:e] = repl + b" " * (e - b - len(repl))
            lines_before[repl] = text.count(b"\n", 0, b) + 1
        with open(g, "wb") as f:
            f.write(text)
        want = "%s:%d: bad gdma_id value \"z9\"" % (
            g, lines_before[b"[bmprofile] gdma cmd_id bd_id=1 gdma_id=z9"])
        for j in JOBS:
            rc, err = convert(d, os.path.join(self.tmp.name, "bad-j%d" % j), j)
            self.assertEqual(rc, 2, err)
            self.assertIn(want, err)

    def test_generated_cdm_8core(self):
        d = os.path.join(self.tmp.name, "gencdm")
        subprocess.run([GENDUMP, "--format", "cdm", "--arch", "BM1690", "--cores", "8",
                        "--cmds", "400" if TSAN else "2000", "--mode", "1", "--cdma-ports", "2",
                        "--seed", "5", "--quiet", d], check=True)
        self.same_outputs(d, "gencdm")
        self.same_outputs(d, "gencdm-nodetail", ("--detail", "none"))

    @unittest.skipIf(TSAN, "ThreadSanitizer build: cdm_test reads engines in parts")
    def test_generated_cdm_parts(self):
        """A cdm core's TIU and GDMA engines larger than a part: read in parts
        (src/readers/sophgo/cdm/cdm_eparts.c), with the cycle counter wrapping inside them.
        SQLite holds every command's fields."""
        self.parts_dump("gencdm-parts", ["--format", "cdm", "--arch", "BM1690", "--cmds",
                                         "150000", "--mode", "1", "--wrap", "--seed", "6"],
                        "GDMA", "cycle counter wrapped")

    def test_workbook_parts(self):
        """The workbook's large sheets are written in 1024-row parts on --jobs threads
        (src/writers/xlsx/stream.c): TIU and GDMA sheets of several parts each, also in the
        ThreadSanitizer build, where the other tests leave the workbook out."""
        d = os.path.join(self.tmp.name, "genxl")
        subprocess.run([GENDUMP, "--arch", "BM1688", "--cores", "2", "--cmds", "3000",
                        "--seed", "6", "--quiet", d], check=True)
        first = None
        for j in JOBS:
            out = os.path.join(self.tmp.name, "xl-j%d" % j)
            p = subprocess.run([TPUPROF, d, out, "-q", "--jobs", str(j), "--disable_web",
                                "--disable_perfetto"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, "--jobs %d: %s" % (j, p.stderr))
            with open(os.path.join(out, "PerfDoc", "PerfAI_output.xlsx"), "rb") as f:
                data = f.read()
            if first is None:
                first = data
            self.assertTrue(data == first, "workbook differs between --jobs 1 and %d" % j)

    def test_timings_report(self):
        """--timings: the same files, and a report whose figures hang together."""
        d = os.path.join(self.tmp.name, "gentm")
        subprocess.run([GENDUMP, "--arch", "BM1688", "--cores", "2", "--cmds", "2000",
                        "--seed", "4", "--quiet", d], check=True)
        plain = self.same_outputs(d, "tm-plain")
        out, rep = os.path.join(self.tmp.name, "tm"), os.path.join(self.tmp.name, "tm.json")
        rc, err = convert(d, out, 2, ("--timings", rep))
        self.assertEqual(rc, 0, err)
        files = tree(out)
        self.assertEqual(sorted(files), sorted(plain))
        for name, data in files.items():
            self.assertTrue(data == plain[name], "--timings changed %s" % name)
        with open(rep) as f:
            r = json.load(f)
        self.assertEqual(r["jobs"], 2)
        ph = {p["name"]: p for p in r["phases"]}
        page = () if TSAN else ("write/html", "write/html/plan", "write/html/finds",
                                "write/html/parts")
        for want in ("total", "read", "read/global", "read/iters/apply", "analysis", "write",
                     "write/perfetto", "write/sqlite", "write/chrome") + page:
            self.assertIn(want, ph)
        for p in r["phases"]:
            self.assertLessEqual(p["serial_cpu_s"], p["cpu_s"] + 0.01, p["name"])
            self.assertGreaterEqual(p["threads"], 1, p["name"])
            self.assertGreaterEqual(p["rss_peak_bytes"], p["rss_start_bytes"], p["name"])
            self.assertLessEqual(p["wall_s"], ph["total"]["wall_s"] + 1e-6, p["name"])
        top = sum(p["wall_s"] for p in r["phases"] if p["depth"] == 1)
        self.assertLessEqual(top, ph["total"]["wall_s"] + 1e-6)
        kids = sum(p["wall_s"] for n, p in ph.items()  # the outputs, not their own steps
                   if n.startswith("write/") and n.count("/") == 1)
        self.assertLessEqual(kids, ph["write"]["wall_s"] + 1e-6)
        # Not an option of a job (the report is of one conversion).
        p = subprocess.run([TPUPROF, "job", d, out + "-job", "--timings", rep],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--timings", p.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
