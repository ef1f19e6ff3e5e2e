"""The package outside the build tree (ctest python_install): `cmake --install` into a
temporary prefix, and `pip install --no-build-isolation --no-deps --target` of a copy of
python/ (setuptools, no network); each installed copy imports from another directory,
records a step and converts it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

SRC = Path(os.environ.get("TP_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = os.environ.get("TP_BINARY_DIR")

CHECK = ("import os, sys, tpuprof\n"
         "assert tpuprof.__file__.startswith(sys.argv[1]), tpuprof.__file__\n"
         "tpuprof.enable(mode=2)\n"
         "with tpuprof.step('g', 0):\n"
         "    with tpuprof.op('Add', inputs=[tpuprof.Tensor((2, 2), 'fp32')]):\n"
         "        pass\n"
         "r = tpuprof.finalize('rep', args=['--disable_doc'])\n"
         "assert r.summary()['overall_stats']['steps'] == 1\n"
         "print('ok', tpuprof.version())\n")


def _run_installed(pkg_root: Path, tmp: Path, env_extra: dict) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_PRELOAD")}
    env.update(env_extra, PYTHONPATH=str(pkg_root))
    p = subprocess.run([sys.executable, "-c", CHECK, str(pkg_root)], cwd=tmp, env=env,
                       text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("ok ")
    assert (tmp / "rep" / "timeline" / "g_step_0").is_file()


def test_cmake_install(tmp_path: Path):
    if not BUILD:
        print("\nSKIPPED: cmake --install test: TP_BINARY_DIR not set (run it through ctest)\n")
        pytest.skip("TP_BINARY_DIR not set (run through ctest)")
    prefix = tmp_path / "prefix"
    p = subprocess.run(["cmake", "--install", BUILD, "--prefix", str(prefix)], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.returncode == 0, p.stdout
    (init,) = prefix.glob("lib*/python3*/dist-packages/tpuprof/__init__.py")
    (ext,) = init.parent.glob("_tpuprof.*.so")
    assert (init.parent / "_paths.py").is_file() and (init.parent / "py.typed").is_file()
    # the module finds the installed libtpuprof.so through its relative RPATH
    _run_installed(init.parent.parent, tmp_path,
                   {"TPUPROF_CLI": os.environ.get("TPUPROF_CLI", "")})


def test_pip_install(tmp_path: Path):
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        import setuptools  # noqa: F401
    except ImportError:
        setuptools = None
    if pip.returncode != 0 or setuptools is None:
        print("\nSKIPPED: pip install test needs python3-pip and python3-setuptools\n")
        pytest.skip("pip or setuptools missing")
    # A copy of python/, so the build leaves nothing in the source tree.
    src = tmp_path / "src"
    src.mkdir()
    for f in ("pyproject.toml", "setup.py"):
        shutil.copy(SRC / "python" / f, src / f)
    for d in ("ext", "tpuprof"):
        shutil.copytree(SRC / "python" / d, src / d)
    target = tmp_path / "site"
    env = dict(os.environ, TPUPROF_SOURCE_DIR=str(SRC), PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("LD_PRELOAD", None)
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                        "--no-deps", "--target", str(target), str(src)], env=env, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
    assert p.returncode == 0, p.stdout
    assert list((target / "tpuprof").glob("_tpuprof.*.so"))
    assert not (target / "tpuprof" / "_paths.py").exists()
    _run_installed(target, tmp_path, {"TPUPROF_CLI": os.environ.get("TPUPROF_CLI", "")})
