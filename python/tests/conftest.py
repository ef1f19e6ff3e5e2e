"""Shared fixtures of the tpuprof Python tests: each test runs in its own directory with
TPUPROF_DIR pointing there, capture is off before and after every test, and helpers convert
a dump with the build tree's converter (TPUPROF_CLI, set by ctest)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

import tpuprof


@pytest.fixture(autouse=True)
def _clean_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fresh directory per test; no session left active by a failing test."""
    monkeypatch.chdir(tmp_path)
    if tpuprof.active():
        tpuprof.disable()
    yield
    if tpuprof.active():
        tpuprof.disable()


def run_py(code: str, env: Dict[str, str] | None = None, check: bool = True,
           cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter with this package (for TPUPROF=..., crashes, exit
    paths a test process must not take itself)."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([sys.executable, "-c", code], env=e, cwd=cwd, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"child exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def convert(dump: Path, out: Path) -> Dict[str, Any]:
    """Converts `dump` with the converter into `out`; returns summary.json."""
    tpuprof.convert(dump, out, per_step=False)
    with open(out / "summary.json", encoding="utf-8") as f:
        return json.load(f)


def trace_events(out: Path, cat: str | None = None) -> List[Dict[str, Any]]:
    """The X events of out/trace.json (of one category if given)."""
    with open(out / "trace.json", encoding="utf-8") as f:
        evs = json.load(f)["traceEvents"]
    return [e for e in evs if e.get("ph") == "X" and (cat is None or e.get("cat") == cat)]


def dumps_in(d: Path) -> List[Path]:
    return sorted(p for p in d.iterdir() if p.name.startswith("tpuprof_data_dev"))
