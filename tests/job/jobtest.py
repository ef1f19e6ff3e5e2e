"""Shared helpers of the job tests (tests/job): a small job folder made of copies of the real
dumps under ../shared and generated 8-core cdm dumps, and running tpuprof."""
import os
import shutil
import subprocess


def run(tpuprof, *args, env=None, cwd=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([tpuprof, *args], capture_output=True, text=True, env=e, cwd=cwd,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def make_job(root, gendump, shared, cmds=2000, broken=True):
    """A job folder: dev0-0/dev1-0 (the real BM1690 dump), dev0-1/dev1-1 (generated 8-core
    cdm dumps), node1/bmprofile_data-1 (the real BM1684X dump), node2/<trace>.json.gz (a real
    ORT trace) and, with broken=True, a dump whose global.profile is garbage. Returns the
    names (relative paths) of the dumps that must convert. Without ../shared only the
    generated ones are made (the caller says SKIPPED for the rest)."""
    os.makedirs(root)
    good = []
    real = os.path.join(shared, "testdata", "sophgo")
    have_real = os.path.isdir(os.path.join(real, "bm1690_blazeface_cdm"))
    for d in (0, 1):
        dst = os.path.join(root, "cdm_profile_data_dev%d-1" % d)
        subprocess.run([gendump, "--format", "cdm", "--arch", "BM1690", "--cores", "8",
                        "--cmds", str(cmds), "--mode", "1", "--seed", str(3 + d), "--quiet",
                        dst], check=True)
        good.append(os.path.basename(dst))
        if have_real:
            shutil.copytree(os.path.join(real, "bm1690_blazeface_cdm"),
                            os.path.join(root, "cdm_profile_data_dev%d-0" % d))
            good.append("cdm_profile_data_dev%d-0" % d)
    if have_real:
        shutil.copytree(os.path.join(real, "bm1684x_blazeface"),
                        os.path.join(root, "node1", "bmprofile_data-1"))
        good.append("node1/bmprofile_data-1")
        os.makedirs(os.path.join(root, "node2"))
        shutil.copy(os.path.join(shared, "testdata", "traces", "h200",
                                 "ort_resnet18_cpu_profile.json.gz"),
                    os.path.join(root, "node2"))
        good.append("node2/ort_resnet18_cpu_profile.json.gz")
    if broken:
        b = os.path.join(root, "broken", "cdm_profile_data_dev9-0")
        os.makedirs(b)
        with open(os.path.join(b, "global.profile"), "w") as f:
            f.write("garbage\n")
        with open(os.path.join(b, "cdmlib0_0.profile"), "wb") as f:
            f.write(b"\0" * 16)
    return sorted(good), have_real


def tree(root, skip=()):
    """{relative path: bytes} of every file below root."""
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n in skip:
                continue
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                files[os.path.relpath(p, root)] = f.read()
    return files


def assert_same_tree(test, got, want, msg):
    """got == want (tree() dicts), failing with the differing file names: unittest's own
    diff of two dicts of whole files can run for minutes."""
    test.assertEqual(sorted(got), sorted(want), msg)
    differ = [k for k in sorted(want) if got[k] != want[k]]
    test.assertFalse(differ, "%s: files differ: %s" % (msg, ", ".join(differ)))
