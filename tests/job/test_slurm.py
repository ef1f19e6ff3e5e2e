#!/usr/bin/python3
"""A job converted as a Slurm array job, with the scripts docs/job.md gives.

usage: test_slurm.py TPUPROF GENDUMP SHARED_DIR SOURCE_DIR

Starts a single-node Slurm (slurmlocal.py: munged, slurmctld and slurmd on 127.0.0.1, config
in a temporary folder), writes tpuprof-task.sbatch and runs the submit lines exactly as
docs/job.md has them (tpuprof found on PATH), waits for the merge job, and checks that the
report is the one a local `tpuprof job` writes, with one Slurm output file per task. Every
process the test started is killed at the end, also on failure. When Slurm or munge is
missing or cannot start, prints SKIPPED with the reason and exits 0.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jobtest  # noqa: E402
import slurmlocal  # noqa: E402

TPUPROF, GENDUMP, SHARED, SOURCE = sys.argv[1:5]


def doc_block(marker):
    """The ```bash block after `<!-- test: MARKER -->` in docs/job.md."""
    with open(os.path.join(SOURCE, "docs", "job.md")) as f:
        text = f.read()
    m = re.search(r"<!-- test: %s -->\n```bash\n(.*?)```" % re.escape(marker), text, re.S)
    if not m:
        raise SystemExit("FAILED: docs/job.md has no '%s' block" % marker)
    return m.group(1)


def summary(out):
    with open(os.path.join(out, "job_summary.json")) as f:
        s = json.load(f)
    s.pop("job")
    for c in s["calls"]:
        c.pop("error")
    return s


def main():
    tmp = tempfile.mkdtemp(prefix="tpuprof-slurm-")
    try:
        return run_test(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_test(tmp):
    job = os.path.join(tmp, "job")
    good, _ = jobtest.make_job(job, GENDUMP, SHARED, cmds=500)
    local = os.path.join(tmp, "local_out")
    rc, _, err = jobtest.run(TPUPROF, "job", job, local, "-q")
    assert rc == 5, err
    try:
        cluster = slurmlocal.SlurmLocal(os.path.join(tmp, "slurm")).start()
    except slurmlocal.Unavailable as e:
        print("SKIPPED: Slurm test: the single-node Slurm cannot start: %s" % e)
        return 0
    try:
        out = os.path.join(tmp, "slurm_out")
        with open(os.path.join(tmp, "tpuprof-task.sbatch"), "w") as f:
            f.write(doc_block("slurm task script"))
        env = dict(cluster.env)
        env["PATH"] = os.path.dirname(os.path.abspath(TPUPROF)) + ":" + env["PATH"]
        env.update(JOB_DIR=job, OUT_DIR=out)
        script = "set -eu\n" + doc_block("slurm submit")
        p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                           cwd=tmp, timeout=120)
        assert p.returncode == 0, p.stderr
        merge_id = p.stdout.strip().splitlines()[-1]
        end = time.time() + 300
        while time.time() < end:
            q = cluster.run(["squeue", "-h", "-o", "%i %T"], check=False)
            if not q.stdout.strip():
                break
            time.sleep(1)
        else:
            raise AssertionError("Slurm jobs still queued after 300 s: " + q.stdout)
        tasks = len(good) + 1
        outs = [n for n in os.listdir(out) if re.match(r"slurm-\d+_\d+\.out$", n)]
        assert len(outs) == tasks, (outs, tasks)
        merge_log = os.path.join(out, "slurm-merge.out")
        assert os.path.exists(os.path.join(out, "job_summary.json")), (
            "no report; merge job %s log: %s" % (merge_id, open(merge_log).read()
                                                  if os.path.exists(merge_log) else "none"))
        assert summary(out) == summary(local), "the Slurm run's report differs from the local one"
        rc, stdout, err = jobtest.run(TPUPROF, "check", os.path.join(out, "job.pftrace"))
        assert rc == 0, err
        print("ok: %d dumps converted as a Slurm array job (%d tasks), merged by job %s" %
              (len(good), tasks, merge_id))
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
