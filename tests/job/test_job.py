#!/usr/bin/python3
"""End-to-end tests of `tpuprof job` (docs/job.md) on a small job folder.

usage: test_job.py TPUPROF GENDUMP SHARED_DIR

The folder (jobtest.make_job) holds copies of the real BM1690 cdm and BM1684X bmprofile dumps
and an ORT trace from SHARED_DIR, two generated 8-core cdm dumps and a broken dump:
- one command converts every dump into OUT/<dump>/ (each folder byte-identical to a single
  conversion of that dump) plus index.html, job_summary.txt/json and job.pftrace (checked by
  `tpuprof check`), exits 5 and lists the broken dump with its error; no lock file is left;
- the job form `tpuprof JOB OUT`, --jobs 1 and --jobs 3, and a 1-byte --mem-limit give the
  same bytes;
- the search: symbolic link loop and second path noted, other JSON files and earlier output
  folders ignored, unreadable folders noted (SKIPPED as root);
- --plan / --task K / --merge: tasks run in any order, the merge with JOB_DIR gone gives the
  same report; a task that never ran is listed as failed;
- safety: two dumps as positionals, OUT_DIR holding dumps, OUT_DIR = JOB_DIR are refused with
  exit 1; a second run waits for the lock and names its holder.
Without SHARED_DIR's dumps the parts that need them print SKIPPED.
"""
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jobtest  # noqa: E402

TPUPROF, GENDUMP, SHARED = sys.argv[1], sys.argv[2], sys.argv[3]


def run(*args, **kw):
    return jobtest.run(TPUPROF, *args, **kw)


class Job(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.job = os.path.join(cls.tmp.name, "job")
        cls.good, cls.real = jobtest.make_job(cls.job, GENDUMP, SHARED)
        if not cls.real:
            print("SKIPPED: %s has no real dumps: the job holds generated dumps only" % SHARED)
        cls.out = os.path.join(cls.tmp.name, "out")
        cls.rc, cls.stdout, cls.stderr = run("job", cls.job, cls.out, "--jobs", "2")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def summary(self, out=None):
        with open(os.path.join(out or self.out, "job_summary.json")) as f:
            return json.load(f)

    def test_one_command(self):
        self.assertEqual(self.rc, 5, self.stderr)
        s = self.summary()
        self.assertEqual(s["dumps"], len(self.good) + 1)
        self.assertEqual(s["failed"], 1)
        failed = [c for c in s["calls"] if not c["ok"]]
        self.assertEqual(failed[0]["name"], "broken/cdm_profile_data_dev9-0")
        self.assertEqual(failed[0]["exit_code"], 2)
        self.assertIn("global.profile", failed[0]["error"])
        names = sorted(c["name"] for c in s["calls"] if c["ok"])
        self.assertEqual(names, self.good)
        for c in s["calls"]:
            if c["ok"]:
                d = os.path.join(self.out, c["out"])
                for f in ("result.html", "summary.json", "job_entry.json"):
                    self.assertTrue(os.path.isfile(os.path.join(d, f)), (d, f))
        for f in ("index.html", "job_summary.txt", "job.pftrace", "job_plan.tsv"):
            self.assertTrue(os.path.isfile(os.path.join(self.out, f)), f)
        self.assertIn("/%d] FAILED broken/dev9 call 0" % s["dumps"], self.stdout)
        # No lock file anywhere.
        for d, _, names in os.walk(self.out):
            self.assertNotIn(".tpuprof.lock", names, d)

    def test_figures(self):
        s = self.summary()
        gen = {c["device"]: c for c in s["calls"] if c["call"] == 1}
        self.assertEqual(sorted(gen), ["dev0", "dev1"])
        for c in gen.values():
            self.assertEqual(c["num_cores"], 8)
            self.assertEqual(c["arch"], "BM1690")
            self.assertGreater(c["imbalance"], 1.0)
            self.assertEqual(c["siblings"], 1)
        a, b = gen["dev0"]["total_ns"], gen["dev1"]["total_ns"]
        # Device imbalance of call 1: max / mean of the two totals.
        if not self.real:
            self.assertAlmostEqual(s["device_imbalance"], max(a, b) * 2 / (a + b), places=5)
        self.assertAlmostEqual(gen["dev0"]["sibling_dev"], (a - b) / b, places=5)
        slowest = [c for c in s["calls"] if c["slowest"]]
        self.assertEqual(len(slowest), 1)
        self.assertEqual(slowest[0]["total_ns"], max(c["total_ns"] for c in s["calls"]))
        # The entry's figures are the dump's own summary.json's.
        with open(os.path.join(self.out, "cdm_profile_data_dev0-1", "summary.json")) as f:
            one = json.load(f)
        self.assertEqual(gen["dev0"]["total_ns"], one["total_time_ns"])
        with open(os.path.join(self.out, "job_summary.txt")) as f:
            txt = f.read()
        self.assertIn("[slowest]", txt)
        self.assertIn("Failed (1)", txt)

    def test_trace(self):
        rc, out, err = run("check", os.path.join(self.out, "job.pftrace"))
        self.assertEqual(rc, 0, err)
        devices = self.summary()["num_devices"] - 1  # the broken dump has no process
        self.assertIn("(%d processes" % devices, out)

    def test_per_dump_identical(self):
        for name in self.good:
            single = os.path.join(self.tmp.name, "single", name)
            rc, _, err = run(os.path.join(self.job, name), single, "-q")
            self.assertEqual(rc, 0, err)
            out = name[:-len(".json.gz")] if name.endswith(".json.gz") else name
            got = jobtest.tree(os.path.join(self.out, out), skip=("job_entry.json",))
            jobtest.assert_same_tree(self, got, jobtest.tree(single), name)

    def test_same_bytes_every_way(self):
        ref = jobtest.tree(self.out)
        for i, args in enumerate((["job", "--jobs", "1"], ["job", "--jobs", "3"],
                                  ["job", "--mem-limit", "1"], [])):
            out = os.path.join(self.tmp.name, "again%d" % i)
            # Same JOB_DIR string, so the reports' titles match.
            rc, _, err = run(*args[:1], self.job, out, *args[1:], "-q")
            self.assertEqual(rc, 5, (args, err))
            jobtest.assert_same_tree(self, jobtest.tree(out), ref, args)

    def test_search(self):
        job = os.path.join(self.tmp.name, "search")
        os.makedirs(os.path.join(job, "a", "deep", "er"))
        subprocess.run([GENDUMP, "--format", "cdm", "--arch", "BM1690", "--cores", "2",
                        "--cmds", "200", "--quiet",
                        os.path.join(job, "a", "deep", "er", "cdm_profile_data_dev3-2")],
                       check=True)
        os.symlink("../..", os.path.join(job, "a", "deep", "loop"))
        os.symlink(os.path.join("deep", "er", "cdm_profile_data_dev3-2"),
                   os.path.join(job, "a", "zz_alias"))
        with open(os.path.join(job, "config.json"), "w") as f:
            f.write('[{"batch": 1}]')
        os.symlink("missing", os.path.join(job, "dangling"))
        # An earlier output folder inside the job folder is no dump.
        run(os.path.join(job, "a", "deep", "er", "cdm_profile_data_dev3-2"),
            os.path.join(job, "old_out"), "-q", "--json")
        out = os.path.join(self.tmp.name, "search_out")
        rc, _, err = run("job", "--plan", job, out)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(out, "job_plan.tsv")) as f:
            plan = f.read()
        tasks = [l.split("\t") for l in plan.splitlines() if l.startswith("task\t")]
        self.assertEqual(len(tasks), 1, plan)
        self.assertEqual(tasks[0][3], "a/deep/er/dev3")
        self.assertEqual(tasks[0][4], "2")
        self.assertIn("a/deep/loop: not followed", plan)
        self.assertIn("a/zz_alias: not followed: the same dump", plan)
        self.assertIn("dangling: not followed", plan)
        if os.geteuid() == 0:
            print("SKIPPED: unreadable folder check (root reads every folder)")
        else:
            os.makedirs(os.path.join(job, "locked"))
            os.chmod(os.path.join(job, "locked"), 0)
            rc, _, err = run("job", "--plan", job, out)
            os.chmod(os.path.join(job, "locked"), 0o755)
            self.assertIn("locked: cannot read: Permission denied", err)

    def test_plan_task_merge(self):
        job = os.path.join(self.tmp.name, "moved_job")
        shutil.copytree(self.job, job)
        out = os.path.join(self.tmp.name, "plan_out")
        rc, stdout, err = run("job", "--plan", job, out)
        self.assertEqual(rc, 0, err)
        n = len(self.good) + 1
        self.assertIn("--array=0-%d" % (n - 1), stdout)
        for k in reversed(range(n)):
            rc, _, err = run("job", "--task", str(k), out, "-q")
            self.assertIn(rc, (0, 2), err)
        rc, _, err = run("job", "--task", str(n), out)
        self.assertEqual(rc, 1)
        self.assertIn("has %d tasks" % n, err)
        # The raw dumps are not needed for the merge.
        shutil.rmtree(job)
        rc, _, err = run("job", "--merge", out, "-q")
        self.assertEqual(rc, 5, err)
        a, b = self.summary(), self.summary(out)
        for c in a["calls"] + b["calls"]:
            c.pop("error")  # names the dump's path, which differs
        a.pop("job"), b.pop("job")
        self.assertEqual(a, b)
        # A task that never ran is a failure of its own.
        entry = os.path.join(out, "cdm_profile_data_dev0-1", "job_entry.json")
        os.unlink(entry)
        rc, _, err = run("job", "--merge", out, "-q")
        self.assertEqual(rc, 5)
        s = self.summary(out)
        self.assertEqual(s["failed"], 2)
        self.assertIn("not run", json.dumps(s["calls"]))
        # Without the plan: every job_entry.json below OUT_DIR.
        os.unlink(os.path.join(out, "job_plan.tsv"))
        rc, _, err = run("job", "--merge", out, "-q")
        self.assertEqual(rc, 5, err)
        self.assertEqual(self.summary(out)["dumps"], n - 1)

    def test_safety(self):
        a = os.path.join(self.job, "cdm_profile_data_dev0-1")
        b = os.path.join(self.job, "cdm_profile_data_dev1-1")
        before = sorted(os.listdir(b))
        rc, _, err = run(a, b)
        self.assertEqual(rc, 1)
        self.assertIn("tpuprof job JOB_DIR OUT_DIR", err)
        self.assertEqual(sorted(os.listdir(b)), before)
        rc, _, err = run(a, self.job)
        self.assertEqual(rc, 1)
        self.assertIn("holds profile data", err)
        rc, _, err = run("job", self.job, os.path.join(self.job, "node1" if self.real else
                                                       "cdm_profile_data_dev1-1"))
        self.assertEqual(rc, 1)
        self.assertIn("holds profile data", err)
        rc, _, err = run("job", self.job, self.job)
        self.assertEqual(rc, 1)
        rc, _, err = run("job", self.tmp.name + "/nothing_here")
        self.assertEqual(rc, 2)
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(empty)
        rc, _, err = run("job", empty, os.path.join(self.tmp.name, "empty_out"))
        self.assertEqual(rc, 2)
        self.assertIn("no profile data found below it", err)
        for bad in (["--mem-limit", "lots"], ["--task"], ["--plan", "--merge"], ["--jobs", "0"],
                    ["--detail", "sometimes"], ["--frobnicate"]):
            rc, _, err = run("job", *bad, self.job, os.path.join(self.tmp.name, "u"))
            self.assertEqual(rc, 1, (bad, err))

    def test_diff_jobs(self):
        job2 = os.path.join(self.tmp.name, "job2")
        shutil.copytree(self.job, job2)
        slow = os.path.join(job2, "cdm_profile_data_dev1-1")
        shutil.rmtree(slow)
        subprocess.run([GENDUMP, "--format", "cdm", "--arch", "BM1690", "--cores", "8",
                        "--cmds", "3000", "--mode", "1", "--seed", "9", "--quiet", slow],
                       check=True)
        d = os.path.join(self.tmp.name, "jdiff")
        rc, out, err = run("diff", self.out, job2, d, "--fail-if-slower", "0")
        self.assertEqual(rc, 4, err)
        with open(os.path.join(d, "job_diff.json")) as f:
            j = json.load(f)
        first = j["calls"][0]
        self.assertEqual((first["device"], first["call"]), ("dev1", 1))
        self.assertGreater(first["delta_ns"], 0)
        self.assertEqual(j["failed"], 1)
        self.assertEqual(j["both"], len(self.good))
        self.assertTrue(os.path.isfile(os.path.join(d, "job_diff.html")))
        self.assertIn("Calls ranked by the change of total time", out)
        rc, _, err = run("diff", self.out, os.path.join(self.job, "cdm_profile_data_dev0-1"))
        self.assertEqual(rc, 1)
        self.assertIn("is a job", err)

    def test_lock_waits(self):
        out = os.path.join(self.tmp.name, "locked_out")
        os.makedirs(out)
        fd = os.open(os.path.join(out, ".tpuprof.lock"), os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"4242\n")
        p = subprocess.Popen([TPUPROF, os.path.join(self.job, "cdm_profile_data_dev0-1"), out],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1.0)
        waited = p.poll() is None
        # The holder lets go the way tpuprof does: the file goes first.
        os.unlink(os.path.join(out, ".tpuprof.lock"))
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        _, err = p.communicate(timeout=120)
        self.assertTrue(waited)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn(b"process 4242", err)
        self.assertFalse(os.path.exists(os.path.join(out, ".tpuprof.lock")))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
