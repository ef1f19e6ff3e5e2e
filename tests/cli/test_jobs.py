#!/usr/bin/python3
"""Concurrent outputs (--jobs) and the live progress line.

usage: test_jobs.py TPUPROF GENDUMP PROBE

- A generated BM1688 dump converted with every output on (--sqlite --json) by --jobs 1 and
  --jobs 4, in separate processes: every file is byte-identical (the two processes also differ
  in their address-space layout, so this also checks that no output depends on addresses).
  Run in the ThreadSanitizer build too (label tsan, TSAN_OPTIONS halt_on_error): a data race
  between the writer threads fails the conversion's exit status.
- A libtpuprof capture (PROBE, tests/tools/capture_probe.c, scenario "basic 2": steps,
  operators with details, activities) converted the same two ways: the writers that share
  the converter's one operator table (ops.csv, summary.json, summary.md, the workbook's
  Operators sheet) run at once with --jobs 4, and their files must match --jobs 1.
- The progress line appears on a terminal (a pty as stderr), with one line per phase and the
  final "done in" line; it is absent when stderr is not a terminal, and with -q.
  --progress-delay 0 makes a small conversion show it (the default is 1 s).
"""
import json
import os
import pty
import subprocess
import sys
import tempfile
import unittest

TPUPROF, GENDUMP, PROBE = sys.argv[1], sys.argv[2], sys.argv[3]
TSAN = os.environ.get("TP_TEST_TSAN") == "1"


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([TPUPROF, *args], capture_output=True, text=True, env=e)
    return p.returncode, p.stdout, p.stderr


def run_pty(args, env=None):
    """Runs tpuprof with stderr on a pseudo-terminal; returns (rc, bytes seen on it)."""
    e = dict(os.environ)
    e.update(env or {})
    m, s = pty.openpty()
    p = subprocess.Popen([TPUPROF, *args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=s, env=e)
    os.close(s)
    out = b""
    while True:
        try:
            b = os.read(m, 65536)
        except OSError:  # EIO once the child closed the pty
            break
        if not b:
            break
        out += b
    os.close(m)
    return p.wait(), out.decode("utf-8", "replace")


def tree(root):
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n == ".tpuprof.lock":  # holds the writer's pid
                continue
            path = os.path.join(d, n)
            with open(path, "rb") as f:
                files[os.path.relpath(path, root)] = f.read()
    return files


class Jobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dump = os.path.join(cls.tmp.name, "gen")
        n = "400" if TSAN else "3000"
        subprocess.run([GENDUMP, "--arch", "BM1688", "--cores", "2", "--cmds", n, "--seed",
                        "7", "--quiet", cls.dump], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def out(self, name):
        return os.path.join(self.tmp.name, name)

    def convert_both_ways(self, dump, prefix, must_have, min_size):
        """Converts dump with every output by --jobs 1 and --jobs 4; asserts the files are
        the same and that each of must_have is there with at least min_size bytes (an
        output that silently vanished would also "match"); returns the files."""
        trees = []
        for j in ("1", "4"):
            rc, _, err = run([dump, self.out(prefix + j), "--sqlite", "--json", "-q",
                              "--jobs", j])
            self.assertEqual(rc, 0, err)
            self.assertEqual(err, "")
            trees.append(tree(self.out(prefix + j)))
        self.assertEqual(sorted(trees[0]), sorted(trees[1]))
        for f in must_have:
            self.assertIn(f, trees[0])
            self.assertGreater(len(trees[0][f]), min_size, f)
        for f in trees[0]:
            self.assertTrue(trees[0][f] == trees[1][f], f + " differs between --jobs 1 and 4")
        return trees[0]

    def test_outputs_identical_for_any_jobs(self):
        self.convert_both_ways(self.dump, "j", (
            "perfetto.pftrace", "trace.json", "profile.db",
            os.path.join("PerfDoc", "PerfAI_output.xlsx"), "result.html", "summary.json"), 1000)

    def test_capture_outputs_identical_for_any_jobs(self):
        capdir = self.out("cap")
        os.makedirs(capdir)
        env = dict(os.environ, TPUPROF_DIR=capdir)
        env.pop("TPUPROF", None)
        p = subprocess.run([PROBE, "basic", "2"], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        dumps = [d for d in os.listdir(capdir) if d.startswith("tpuprof_data_")]
        self.assertEqual(len(dumps), 1, dumps)
        files = self.convert_both_ways(os.path.join(capdir, dumps[0]), "capj", (
            "ops.csv", "summary.json", "summary.md",
            os.path.join("PerfDoc", "PerfAI_output.xlsx")), 200)
        self.assertIn(b'"op_stats"', files["summary.json"])

    def test_jobs_errors_keep_registry_order(self):
        # Two outputs fail (their target is a directory); the messages come in registry
        # order whatever thread finished first, and the exit code is 3.
        o = self.out("fail")
        os.makedirs(os.path.join(o, "trace.json"))
        os.makedirs(os.path.join(o, "profile.db"))
        rc, _, err = run([self.dump, o, "--sqlite", "--json", "-q", "--jobs", "4",
                          "--disable_doc", "--disable_web"])
        self.assertEqual(rc, 3, err)
        self.assertLess(err.index("trace.json"), err.index("profile.db"), err)

    def default_jobs(self, cpus):
        """The --jobs a conversion without --jobs took, run on the CPUs `cpus` only."""
        t = self.out("timings.json")
        p = subprocess.run([TPUPROF, self.dump, self.out("dj"), "-q", "--disable_doc",
                            "--disable_web", "--disable_perfetto", "--timings", t],
                           capture_output=True, text=True,
                           preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(t) as f:
            return json.load(f)["jobs"]

    def test_default_jobs_follow_affinity(self):
        # Without --jobs, the threads are the CPUs the process may run on (taskset, a batch
        # scheduler's cpuset), not the machine's: a process pinned to one CPU runs one.
        mine = sorted(os.sched_getaffinity(0))
        self.assertEqual(self.default_jobs({mine[0]}), 1)
        if len(mine) < 2 or self.default_jobs(set(mine)) < 2:
            print("SKIPPED: the 2-CPU case of default --jobs (fewer than 2 CPUs here)")
            self.skipTest("the 2-CPU case needs 2 CPUs (the 1-CPU case passed)")
        self.assertEqual(self.default_jobs(set(mine[:2])), 2)

    def test_bad_jobs(self):
        for v in ("0", "x", "65", "-1"):
            rc, _, err = run([self.dump, self.out("bad"), "--jobs", v])
            self.assertEqual(rc, 1, v)
            self.assertIn("--jobs", err)
        rc, _, err = run([self.dump, self.out("bad"), "--jobs"])
        self.assertEqual(rc, 1)

    def test_progress_on_a_terminal(self):
        rc, err = run_pty([self.dump, self.out("pty"), "--jobs", "2", "--progress-delay", "0"])
        self.assertEqual(rc, 0, err)
        self.assertIn("\rtpuprof: ", err)  # a live line, redrawn in place
        # Every enabled output is counted from the start (7 by default on a bmprofile dump:
        # the summaries, ops.csv, html, perfetto, xlsx).
        self.assertRegex(err, r"tpuprof: writing \d/7 done")
        self.assertRegex(err, r"tpuprof: read [0-9.]+ MB in [0-9.]+ s|tpuprof: done in")
        self.assertRegex(err, r"tpuprof: done in [0-9.]+ s: reading [0-9.]+ s, analysis "
                              r"[0-9.]+ s, writing [0-9.]+ s \(.*xlsx [0-9.]+ s")
        # The live line is cleared (ESC [ K) and the last line ends it.
        self.assertIn("\x1b[K", err)
        self.assertTrue(err.endswith("\n"), repr(err[-200:]))

    def test_no_progress_with_quiet(self):
        rc, err = run_pty([self.dump, self.out("ptyq"), "-q", "--progress-delay", "0"])
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "")

    def test_no_progress_without_terminal(self):
        rc, _, err = run([self.dump, self.out("pipe"), "--progress-delay", "0"])
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "")

    def test_verbose_final_line_without_terminal(self):
        rc, _, err = run([self.dump, self.out("verb"), "-v", "--progress-delay", "0"])
        self.assertEqual(rc, 0, err)
        self.assertNotIn("\r", err)
        self.assertIn("wrote ", err)  # -v keeps its details
        self.assertRegex(err, r"\ntpuprof: done in [0-9.]+ s: reading ")
        # The thread count it ran on, the default's or --jobs'.
        rc, _, err = run([self.dump, self.out("verb3"), "-v", "--jobs", "3", "--disable_doc"])
        self.assertEqual(rc, 0, err)
        self.assertRegex(err, r"tpuprof: read .* on 3 threads in [0-9.]+ s: ")
        rc, _, err = run([self.dump, self.out("verb1"), "-v", "--jobs", "1", "--disable_doc"])
        self.assertEqual(rc, 0, err)
        self.assertRegex(err, r"tpuprof: read .* on 1 thread in [0-9.]+ s: ")

    def test_short_conversion_prints_no_progress(self):
        # A conversion that ends before the start delay draws nothing. The delay is set far
        # above any build's run time (the default ~1 s is not: a sanitizer build on a loaded
        # machine took 1.2 s here and drew the line).
        rc, err = run_pty([self.dump, self.out("short"), "--disable_doc", "--disable_web",
                           "--disable_perfetto", "--progress-delay", "600000"])
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
