"""sgtest.py — what the Sophgo end-to-end tests share.

convert() runs tpuprof with the trace outputs the tests read (trace.json and summary.json, no
page, workbook or Perfetto) and returns both parsed; Checks collects failures of the scripts
that report every difference instead of stopping at the first.
"""
import json
import os
import subprocess


def convert(tpuprof, dump, out, *extra):
    """(trace.json, summary.json) of `tpuprof dump out --json` with the heavy outputs off."""
    subprocess.run(["rm", "-rf", out], check=True)
    p = subprocess.run([tpuprof, dump, out, "--json", "--disable_web", "--disable_doc",
                        "--disable_perfetto", "-q", *extra], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"{dump}: tpuprof exit {p.returncode}: {p.stderr}")
    with open(os.path.join(out, "trace.json")) as f:
        trace = json.load(f)
    with open(os.path.join(out, "summary.json")) as f:
        return trace, json.load(f)


class Checks:
    """Failures collected over a whole run; the first `shown` are printed as they happen."""

    def __init__(self, shown=20):
        self.fails, self.shown = [], shown

    def __call__(self, ok, what):
        if not ok:
            self.fails.append(what)
            if len(self.fails) <= self.shown:
                print("FAIL:", what)

    def exit_code(self, ok_line):
        if self.fails:
            print(f"{len(self.fails)} failure(s)")
            return 1
        print(ok_line)
        return 0
