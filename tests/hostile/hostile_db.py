#!/usr/bin/python3
"""hostile_db.py — `tpuprof diff` on hostile output folders: one case per defect class of the
profile.db reader (src/readers/outdir), with the databases built at test time from a small
generated dump converted with --sqlite, then altered with Python's sqlite3.

Classes: a FIFO named profile.db; views and generated columns in place of the tables (a
recursive view, a 900 MB string); numbers out of range (a core of 2^31-1, slice times near
+-2^63, a duration of INT64_MAX, real-valued annotations of 1e300, clocks of inf and 1e-320 in
summary.json); a read never writes into the folder (WAL mode, no -wal/-shm left); a journal or
WAL beside the file, a write lock held, a file that is not a database, each with its own
message; many thread tracks read in linear time; a track id of 2^62 costs no memory; and the
diff's --fail-if-slower takes decimal numbers only.

Every case must end within its timeout with the expected exit code and message, never a
signal or a sanitizer report. Runs in the release and the sanitizer builds.
Usage: hostile_db.py TPUPROF GENDUMP
"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

TPUPROF, GENDUMP = sys.argv[1:3]
SAN = os.environ.get("TP_SANITIZED") == "1"
TIMEOUT = 120 if SAN else 30
WORK = tempfile.mkdtemp(prefix="tp_hostile_db_")
failures = []
rows = []


def run(args, timeout=TIMEOUT):
    """Runs tpuprof; returns (outcome, rc, stderr, seconds, peak RSS of that process in MB)."""
    t0 = time.monotonic()
    err_file = tempfile.TemporaryFile()
    p = subprocess.Popen([TPUPROF, *args], stdout=subprocess.DEVNULL, stderr=err_file)
    timer = threading.Timer(timeout, p.kill)
    timer.start()
    _, status, usage = os.wait4(p.pid, 0)
    hung = not timer.is_alive()
    timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    secs = time.monotonic() - t0
    err_file.seek(0)
    err = err_file.read().decode("utf-8", "replace")
    if hung:
        return "hang", None, err, secs, 0
    if p.returncode < 0 or "Sanitizer" in err or "runtime error" in err:
        return "crash", p.returncode, err, secs, 0
    return ("ok" if p.returncode == 0 else "exit%d" % p.returncode), p.returncode, err, secs, \
        usage.ru_maxrss / 1024


def case(name, args, expect, must=None, max_mb=None, timeout=TIMEOUT):
    outcome, rc, err, secs, mb = run(args, timeout)
    why = []
    if outcome != expect:
        why.append("expected %s, got %s" % (expect, outcome))
    if must and must not in err:
        why.append("message lacks %r" % must)
    if max_mb is not None and mb > max_mb:
        why.append("peak RSS %.0f MB > %d MB" % (mb, max_mb))
    rows.append((name, outcome, secs))
    if why:
        failures.append("%s: %s\n    stderr: %s" % (name, "; ".join(why), err.strip()[-600:]))


def folder(base, tag):
    d = os.path.join(WORK, tag)
    shutil.copytree(base, d)
    return d


def alter(d, *sql):
    con = sqlite3.connect(os.path.join(d, "profile.db"))
    for s in sql:
        con.execute(s)
    con.commit()
    con.close()


def diff(a, b, tag, *extra):
    return ["diff", "-q", a, b, os.path.join(WORK, "out-" + tag), *extra]


def main():
    dump = os.path.join(WORK, "dump")
    subprocess.run([GENDUMP, "--arch", "BM1688", "--cores", "1", "--cmds", "2000", "--seed",
                    "4", "--quiet", dump], check=True)
    base = os.path.join(WORK, "base")
    subprocess.run([TPUPROF, "-q", "--sqlite", "--disable_doc", "--disable_web",
                    "--disable_perfetto", dump, base], check=True)
    good = folder(base, "good")
    case("plain folder", diff(good, base, "plain"), "ok")

    # Not a file, not a database, not quiet.
    d = folder(base, "fifo")
    os.unlink(os.path.join(d, "profile.db"))
    os.mkfifo(os.path.join(d, "profile.db"))
    case("FIFO named profile.db", diff(d, base, "fifo"), "exit2", "not a regular file (a FIFO)")
    d = folder(base, "notdb")
    with open(os.path.join(d, "profile.db"), "wb") as f:
        f.write(b"not a database at all" * 1000)
    case("not a database", diff(d, base, "notdb"), "exit2", "not an SQLite database")
    d = folder(base, "journal")
    with open(os.path.join(d, "profile.db-journal"), "wb") as f:
        f.write(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + bytes(504))
    case("hot journal beside it", diff(d, base, "journal"), "exit2", "rollback journal")
    d = folder(base, "walfile")
    with open(os.path.join(d, "profile.db-wal"), "wb") as f:
        f.write(bytes(4096))
    case("WAL file beside it", diff(d, base, "walfile"), "exit2", "write-ahead log")
    d = folder(base, "locked")
    con = sqlite3.connect(os.path.join(d, "profile.db"), isolation_level=None)
    con.execute("BEGIN EXCLUSIVE")
    case("write-locked by a process", diff(d, base, "locked"), "exit2",
         "locked by process %d" % os.getpid())
    con.execute("ROLLBACK")
    con.close()

    # A read writes nothing into the folder, also in WAL mode.
    d = folder(base, "wal")
    alter(d, "PRAGMA journal_mode=WAL")
    before = sorted(os.listdir(d))
    case("WAL-mode database", diff(d, base, "wal"), "ok")
    after = sorted(os.listdir(d))
    if after != before:
        failures.append("WAL-mode database: the folder changed: %s -> %s" % (before, after))

    # Nothing stored in the database runs.
    d = folder(base, "recview")
    alter(d, "DROP TABLE slice",
          "CREATE VIEW slice AS WITH RECURSIVE r(id) AS (SELECT 0 UNION ALL SELECT id + 1 FROM r)"
          " SELECT id, 0 AS ts, 1 AS dur, 0 AS track_id, '' AS category, '' AS name,"
          " 0 AS cmd_id, NULL AS arg_set_id FROM r")
    case("recursive view as slice", diff(d, base, "recview"), "exit2",
         "not a tpuprof profile.db")
    d = folder(base, "bigview")
    alter(d, "DROP TABLE arg_key",
          "CREATE VIEW arg_key AS SELECT 1 AS id, printf('%.*c', 900000000, 'x') AS key")
    case("view of a 900 MB string", diff(d, base, "bigview"), "exit2",
         "not a tpuprof profile.db", max_mb=300)
    d = folder(base, "gencol")
    alter(d, "ALTER TABLE arg_key RENAME TO arg_key_old",
          "CREATE TABLE arg_key(id INTEGER PRIMARY KEY,"
          " key TEXT GENERATED ALWAYS AS (printf('%.*c', 900000000, 'x')) VIRTUAL)")
    case("generated column", diff(d, base, "gencol"), "exit2", "computes its column key",
         max_mb=300)

    # Numbers out of range: rejected with a message, or saturated, never UB.
    d = folder(base, "core")
    alter(d, "UPDATE track SET core = 2147483647 WHERE core IS NOT NULL")
    case("core of 2^31-1", diff(d, base, "core"), "exit2", "out of range")
    d = folder(base, "times")
    alter(d, "UPDATE slice SET ts = 9223372036854775000 WHERE id % 3 = 0",
          "UPDATE slice SET ts = -9223372036854775000 WHERE id % 3 = 1",
          "UPDATE slice SET dur = 9223372036854775807 WHERE id % 3 = 2")
    case("slice times near +-2^63", diff(d, base, "times"), "ok")
    d = folder(base, "reals")
    alter(d, "UPDATE arg_value SET type = 2, real_value = 1e300, int_value = NULL")
    case("real annotations of 1e300", diff(d, base, "reals"), "ok")
    for tag, v in (("inf", "inf"), ("denormal", "1e-320"), ("huge", "1e308")):
        d = folder(base, "clock-" + tag)
        p = os.path.join(d, "summary.json")
        with open(p) as f:
            s = f.read()

        s = re.sub(r'"tiu_freq_mhz":[0-9.]+', '"tiu_freq_mhz":' + v, s)
        s = re.sub(r'"gdma_freq_mhz":[0-9.]+', '"gdma_freq_mhz":' + v, s)
        with open(p, "w") as f:
            f.write(s)
        case("summary.json clocks of " + v, diff(d, base, "clock-" + tag), "ok")

    # Memory and time follow the rows, not the ids.
    d = folder(base, "farid")
    alter(d, "INSERT INTO track(id, name, type, upid, core)"
             " SELECT 4611686018427387904, 'far', 'thread', upid, NULL FROM process LIMIT 1",
          "INSERT INTO arg_key(id, key) VALUES (4611686018427387000, 'far key')")
    case("track id 2^62", diff(d, base, "farid"), "ok", max_mb=300)
    d = folder(base, "tracks")
    n = 150000
    alter(d, "INSERT INTO track(id, name, type, upid, core)"
             " WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < %d)"
             " SELECT 1000000 + i, 'thread ' || i, 'thread', (SELECT min(upid) FROM process),"
             " NULL FROM r" % n,
          "INSERT INTO slice(id, ts, dur, track_id, category, name, cmd_id)"
          " SELECT 10000000 + id, 1000, 10, id, 'cpu', 'op', 0 FROM track WHERE id > 1000000")
    # A diff quadratic in tracks runs past the hang guard (TIMEOUT) here; its speed is
    # make bench's to measure, not this test's.
    case("%d thread tracks" % n, diff(d, base, "tracks"), "ok")

    # --fail-if-slower takes a decimal percentage.
    for v in ("0x10", "1e", "inf", "nan", "-1"):
        case("--fail-if-slower " + v, diff(good, base, "pct", "--fail-if-slower", v), "exit1",
             "--fail-if-slower")
    case("--fail-if-slower 2.5", diff(good, base, "pct", "--fail-if-slower", "2.5"), "ok")

    for name, outcome, secs in rows:
        print("  %-32s %-6s %6.2f s" % (name, outcome, secs))
    shutil.rmtree(WORK, ignore_errors=True)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("hostile_db: %d cases as expected" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
