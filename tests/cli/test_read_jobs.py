#!/usr/bin/python3
"""The Sophgo readers give the same outputs for every --jobs.

usage: test_read_jobs.py TPUPROF GENDUMP SHARED_DIR

For the three real dumps (and with --detail none, where the bmprofile reader does its per-core
work through tp_par_run: on worker threads with --jobs 3, on the calling thread with --jobs 1;
summaries and trace only there) in SHARED_DIR/testdata/sophgo (SKIPPED loudly when absent) and for
generated BM1688 (global.profile of several 4 MB chunks, so the chunked parser runs on more
than one thread) and BM1690 cdm dumps: summary.json, summary.txt, the --json trace and the
PerfAI xlsx written with --jobs 1 and --jobs 3 are byte-identical, and a damaged global.profile
line late in a chunk gives the same `path:LINE` message (exit 2) for both.
"""
import os
import subprocess
import sys
import tempfile
import unittest

TPUPROF, GENDUMP, SHARED = sys.argv[1], sys.argv[2], sys.argv[3]
# The ThreadSanitizer build (~20x slower) checks the threads on the generated dumps only,
# without the workbook.
TSAN = os.environ.get("TP_TEST_TSAN") == "1"
REAL = ["bm1688_resnet50", "cv184x_blazeface", "bm1690_blazeface_cdm"]
FILES = ["summary.json", "summary.txt", "trace.json"]
if not TSAN:
    FILES.append(os.path.join("PerfDoc", "PerfAI_output.xlsx"))


def convert(dump, out, jobs, extra=()):
    doc = ["--disable_doc"] if TSAN else []
    p = subprocess.run([TPUPROF, dump, out, "--json", "--disable_web", "--disable_perfetto",
                        "-q", "--jobs", str(jobs), *doc, *extra], capture_output=True, text=True)
    return p.returncode, p.stderr


class ReadJobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def same_outputs(self, dump, tag, extra=(), xlsx=True):
        """xlsx=False: no workbook (the slowest writer; the trace holds every slice)."""
        got = []
        files_wanted = FILES if xlsx else [f for f in FILES if not f.endswith(".xlsx")]
        if not xlsx:
            extra = (*extra, "--disable_doc")
        for j in (1, 3):
            out = os.path.join(self.tmp.name, "%s-j%d" % (tag, j))
            rc, err = convert(dump, out, j, extra)
            self.assertEqual(rc, 0, err)
            files = {}
            for f in files_wanted:
                with open(os.path.join(out, f), "rb") as fh:
                    files[f] = fh.read()
                self.assertGreater(len(files[f]), 200, f)
            got.append(files)
        for f in files_wanted:
            self.assertTrue(got[0][f] == got[1][f], "%s: %s differs between --jobs 1 and 3"
                            % (tag, f))

    @unittest.skipIf(TSAN, "ThreadSanitizer build: generated dumps only")
    def test_real_dumps(self):
        found = 0
        for name in REAL:
            d = os.path.join(SHARED, "testdata", "sophgo", name)
            if not os.path.isdir(d):
                print("SKIPPED: read_jobs: %s is absent" % d, file=sys.stderr)
                continue
            found += 1
            with self.subTest(dump=name):
                self.same_outputs(d, name)
                self.same_outputs(d, name + "-nodetail", ("--detail", "none"), xlsx=False)
        if not found:
            print("SKIPPED: read_jobs: no real dump in %s" % SHARED, file=sys.stderr)

    def test_generated_bm1688(self):
        d = os.path.join(self.tmp.name, "gen1688")
        subprocess.run([GENDUMP, "--arch", "BM1688", "--cores", "2", "--cmds", "30000",
                        "--seed", "3", "--quiet", d], check=True)
        size = os.path.getsize(os.path.join(d, "global.profile"))
        self.assertGreater(size, 3 * (4 << 20))  # at least 4 chunks
        if not TSAN:
            self.same_outputs(d, "gen1688")
        # Without per-command argument sets the per-core work runs on worker threads too.
        self.same_outputs(d, "gen1688-nodetail", ("--detail", "none"), xlsx=False)
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
        want = "%s:%d: bad gdma_id value \"z9\"" % (g, lines_before[b"[bmprofile] gdma cmd_id bd_id=1 gdma_id=z9"])
        for j in (1, 3):
            rc, err = convert(d, os.path.join(self.tmp.name, "bad-j%d" % j), j)
            self.assertEqual(rc, 2, err)
            self.assertIn(want, err)

    def test_generated_cdm(self):
        d = os.path.join(self.tmp.name, "gencdm")
        subprocess.run([GENDUMP, "--format", "cdm", "--arch", "BM1690", "--cores", "2", "--cmds", "3000",
                        "--seed", "5", "--quiet", d], check=True)
        if not TSAN:
            self.same_outputs(d, "gencdm")
        self.same_outputs(d, "gencdm-nodetail", ("--detail", "none"), xlsx=False)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
