#!/usr/bin/python3
"""A job converted by GNU parallel, with the lines docs/job.md gives.

usage: test_parallel.py TPUPROF GENDUMP SHARED_DIR SOURCE_DIR

Runs the plan, the tasks through `parallel` (Debian's GNU parallel; on this machine, -j 2)
and the merge exactly as docs/job.md has them, and checks that the report equals the one a
local `tpuprof job` writes. When parallel is missing or is not GNU parallel, prints SKIPPED
with the reason and exits 0.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jobtest  # noqa: E402

TPUPROF, GENDUMP, SHARED, SOURCE = sys.argv[1:5]


def summary(out):
    with open(os.path.join(out, "job_summary.json")) as f:
        s = json.load(f)
    s.pop("job")
    for c in s["calls"]:
        c.pop("error")
    return s


def main():
    par = shutil.which("parallel")
    v = subprocess.run([par, "--version"], capture_output=True, text=True) if par else None
    if not par or "GNU parallel" not in v.stdout:
        print("SKIPPED: GNU parallel test: %s" % (
            "parallel is not installed (scripts/deps.sh test)" if not par
            else "%s is not GNU parallel (moreutils?)" % par))
        return 0
    with open(os.path.join(SOURCE, "docs", "job.md")) as f:
        m = re.search(r"### GNU parallel, Kubernetes\n\n```bash\n(.*?)```", f.read(), re.S)
    assert m, "docs/job.md has no GNU parallel block"
    script = "set -u\n" + "\n".join(l.replace("-j 4", "-j 2") for l in
                                      m.group(1).splitlines() if not l.startswith("#"))
    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "job")
        good, _ = jobtest.make_job(job, GENDUMP, SHARED, cmds=500)
        local = os.path.join(tmp, "local_out")
        rc, _, err = jobtest.run(TPUPROF, "job", job, local, "-q")
        assert rc == 5, err
        out = os.path.join(tmp, "parallel_out")
        env = dict(os.environ, JOB_DIR=job, OUT_DIR=out, HOME=tmp,
                   PATH=os.path.dirname(os.path.abspath(TPUPROF)) + ":" + os.environ["PATH"])
        p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                           timeout=300)
        # parallel exits with the number of failed tasks (the broken dump: 1), so the
        # script's own exit is that of the merge: 5, some dumps failed.
        assert p.returncode == 5, (p.returncode, p.stderr)
        assert summary(out) == summary(local), "the parallel run's report differs"
        print("ok: %d dumps converted by GNU parallel and merged" % len(good))
    return 0


if __name__ == "__main__":
    sys.exit(main())
