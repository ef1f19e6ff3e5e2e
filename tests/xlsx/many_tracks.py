#!/usr/bin/python3
"""many_tracks.py — the workbook of a trace with more tracks than a workbook has sheets.

  many_tracks.py TPUPROF WORKDIR RSS_LIMIT_MB

Writes Chrome traces at test time (1 100 pids, 5 000 pids, 1 100 async categories: one
track each) and converts each with the open-file limit at 256 (`ulimit -n 256`). Each run
must exit 0, leave a workbook openpyxl reads with at most 120 sheets, the first tracks on
sheets of their own and every other track's record on the 'Other tracks' sheet, and the
summary must say so. Peak RSS of each run (the child's, from wait4) must stay under
RSS_LIMIT_MB, and the 5 000-pid run's under twice the 1 100-pid run's: the writer's memory
does not grow with the number of sheets. RSS_LIMIT_MB 0 = not checked (sanitizer builds),
printed as SKIPPED. No timing is asserted.

Must run under /usr/bin/python3 (Debian's python3-openpyxl). Exit 0 = pass, 1 = failure.
"""
import json
import os
import resource
import shutil
import subprocess
import sys

import openpyxl

from checks import FAILS, check

MAX_SHEETS = 120  # TP_XLSX_MAX_SHEETS


def write_trace(path, n, kind):
    """n tracks with one 5 us event each: one pid per track, or one async category."""
    ev = []
    for k in range(n):
        if kind == "pids":
            ev.append({"name": "op%d" % k, "ph": "X", "pid": k, "tid": 1, "ts": 10 * k,
                       "dur": 5, "cat": "cpu_op"})
        else:
            for ph, ts in (("b", 10 * k), ("e", 10 * k + 5)):
                ev.append({"name": "a%d" % k, "ph": ph, "id": k, "pid": 1, "tid": 1,
                           "ts": ts, "cat": "cat%d" % k})
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)


def low_fd_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def convert(tpuprof, trace, out):
    """Runs tpuprof (workbook and summary) under ulimit -n 256; returns (exit, stderr,
    peak RSS in MB)."""
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.Popen([tpuprof, "-q", "--disable_web", "--disable_perfetto", trace, out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=low_fd_limit)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err, ru.ru_maxrss / 1024.0


def check_workbook(name, out, n):
    path = os.path.join(out, "PerfDoc", "PerfAI_output.xlsx")
    try:
        wb = openpyxl.load_workbook(path, read_only=True)
    except Exception as e:  # noqa: BLE001 - any failure to read is the finding
        check(False, "%s: openpyxl cannot read the workbook: %s" % (name, e))
        return
    sheets = wb.sheetnames
    check(len(sheets) <= MAX_SHEETS, "%s: %d sheets, at most %d" % (name, len(sheets), MAX_SHEETS))
    check(sheets[-1] == "Other tracks", "%s: last sheet %r" % (name, sheets[-1]))
    own = [s for s in sheets if s.startswith("Host ")]
    rows = list(wb["Other tracks"].iter_rows(min_row=5, values_only=True))
    check(len(own) + len(rows) == n,
          "%s: %d tracks on their own sheets + %d folded rows = %d tracks"
          % (name, len(own), len(rows), n))
    head = [c for c in next(wb["Other tracks"].iter_rows(min_row=4, max_row=4, values_only=True))]
    check(head[:3] == ["Track", "Kind", "Device"], "%s: header %s" % (name, head[:6]))
    names = [r[head.index("Name")] for r in rows]
    # The folded records are the tracks after the ones with sheets, in track order.
    want = ["%s%d" % ("op" if name.startswith("pids") else "a", k) for k in range(len(own), n)]
    check(names == want, "%s: folded names %s... want %s..." % (name, names[:3], want[:3]))
    note = wb["Other tracks"]["A1"].value or ""
    check("%d tracks without a sheet" % len(rows) in note, "%s: note %r" % (name, note))
    summary = " ".join(str(r[0]) for r in wb["Engine Summary"].iter_rows(values_only=True) if r[0])
    check("'Other tracks' sheet" in summary, "%s: the Engine Summary names the sheet" % name)
    with open(os.path.join(out, "summary.txt")) as f:
        check("%d tracks have no sheet of their own" % len(rows) in f.read(),
              "%s: summary.txt says tracks are folded" % name)


def main():
    tpuprof, work, rss_limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rss = {}
    for name, n, kind in (("pids1100", 1100, "pids"), ("pids5000", 5000, "pids"),
                          ("async1100", 1100, "async")):
        trace = os.path.join(work, name + ".json")
        write_trace(trace, n, kind)
        out = os.path.join(work, name + "_out")
        rc, err, rss[name] = convert(tpuprof, trace, out)
        print("%s: exit %d, peak RSS %.1f MB" % (name, rc, rss[name]))
        if not check(rc == 0, "%s: exit %d under ulimit -n 256: %s" % (name, rc, err[-300:])):
            continue
        check(err == "", "%s: -q printed %r" % (name, err[:300]))
        check_workbook(name, out, n)
    if rss_limit <= 0:
        print("SKIPPED: peak RSS bounds (sanitizer build: its shadow memory is not the writer's)")
    else:
        for name, mb in rss.items():
            check(mb < rss_limit, "%s: peak RSS %.1f MB, limit %.0f MB" % (name, mb, rss_limit))
        check(rss["pids5000"] < 2 * rss["pids1100"],
              "peak RSS grows with the tracks: %.1f MB for 5000 pids, %.1f MB for 1100"
              % (rss["pids5000"], rss["pids1100"]))
    print("many_tracks: %s" % ("FAIL (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
