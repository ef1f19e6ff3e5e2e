#!/usr/bin/python3
"""vendor_files.py — `tpuprof --vendor_files` against the vendor's own files on the real
Sophgo dumps in ../shared/testdata/sophgo (docs/vendor-files.md).

For every dump with a reference/<dump>/ folder it runs `tpuprof DUMP OUT --vendor_files` and
compares every file of the reference folder with OUT/vendor/<file>: byte for byte, and where
the bytes differ, record by record (register-info files: the blocks in order, key by key;
PerfAI_output.csv: the header, then the rows cell by cell). A difference passes only when
docs/vendor-files.md lists it (dump, file, field, which records) in its differences table;
anything else fails, and so does a listed difference that no longer occurs (the list must
stay true). A reference file tpuprof does not write must be listed with field `(file)`.

usage: vendor_files.py TPUPROF SOURCE_DIR SHARED_DIR OUTDIR
Exit 0 all equal or listed, 1 otherwise, 77 (ctest SKIP) when the shared data is absent.
"""
import csv
import fnmatch
import io
import os
import re
import subprocess
import sys

DUMPS = ["bm1688_resnet50", "cv184x_blazeface", "bm1690_blazeface_cdm", "bm1684x_blazeface"]


def listed_differences(doc):
    """Rows of the table between the vendor-differences markers: (dump, file glob, field,
    records, why), one per dump, file and field named in a row; records is "all" or a list
    of Function Types."""
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"<!-- vendor-differences -->(.*?)<!-- /vendor-differences -->", text, re.S)
    if not m:
        raise SystemExit(f"{doc}: no vendor-differences table")
    rows = []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("Dump", "") or set(cells[0]) <= set("-: "):
            continue
        dumps, files, fields, records, why = cells
        for dump in dumps.split(","):
            for f in files.split(","):
                for k in fields.split(","):
                    rows.append((dump.strip("` "), f.strip("` "), k.strip().strip("`"),
                                 records.strip("` ").split(), why))
    return rows


class Checker:
    def __init__(self, dump, table):
        self.dump = dump
        self.table = [r for r in table if r[0] == dump]
        self.used = set()
        self.bad = 0

    def allowed(self, fname, field, ftype):
        """Whether the table lists (file, field) for records of Function Type ftype."""
        for i, (d, glob, k, recs, _) in enumerate(self.table):
            if fnmatch.fnmatch(fname, glob) and k == field and ("all" in recs or ftype in recs):
                self.used.add(i)
                return True
        return False

    def fail(self, msg):
        self.bad += 1
        if self.bad <= 30:
            print(f"{self.dump}: {msg}")

    def unused(self, written):
        for i, (d, glob, k, recs, why) in enumerate(self.table):
            if i not in self.used and any(fnmatch.fnmatch(f, glob) for f in written):
                self.fail(f"listed difference no longer occurs: {glob} {k} ({recs})")


def blocks(text):
    """A register-info file as (tag, [lines]) blocks; the header is the first."""
    out = []
    for line in text.split("\n"):
        if line.startswith("__") and line.endswith("__"):
            out.append((line, []))
        elif out:
            out[-1][1].append(line)
    return out


def key_of(line):
    if line.startswith("\t"):
        return line[1:].split(":", 1)[0]
    return None  # "<Function Type>:" lines and the final empty line


def value_of(line):
    return line.split(": ", 1)[1] if ": " in line else ""


def compare_reginfo(ck, fname, ref, got):
    rb, gb = blocks(ref), blocks(got)
    if len(rb) != len(gb):
        ck.fail(f"{fname}: {len(rb)} blocks in the reference, {len(gb)} written")
        return
    for n, ((rt, rl), (gt, gl)) in enumerate(zip(rb, gb)):
        ftype = next((value_of(x) for x in rl if x.startswith("\tFunction Type: ")), "")
        if rt != gt or [key_of(x) for x in rl] != [key_of(x) for x in gl]:
            ck.fail(f"{fname} block {n}: layout differs: {rt} {[key_of(x) for x in rl]} / "
                    f"{gt} {[key_of(x) for x in gl]}")
            continue
        for a, b in zip(rl, gl):
            if a == b:
                continue
            k = key_of(a)
            if k is None or not ck.allowed(fname, k, ftype):
                ck.fail(f"{fname} block {n}: {a!r} / {b!r}")


# The columns that name a row of each csv file, and the column whose value the Records field of
# the differences table matches (PerfAI_output.csv: the Function Type; the legacy layer files:
# the LayerID, the Function, the Case).
CSV_KEYS = {
    "layer.csv": (("LayerID",), "LayerID"),
    "summary.csv": (("Function",), "Function"),
    "mac_util.csv": ((), "Case"),
    "instruction.csv": (("EngineId", "Inst ID"), "Inst Function"),  # by position: the what-if series repeat their Cases
}


def compare_csv(ck, fname, ref, got):
    rr = list(csv.reader(io.StringIO(ref, newline="")))
    gr = list(csv.reader(io.StringIO(got, newline="")))
    if rr[0] != gr[0]:
        ck.fail(f"{fname}: header differs: {rr[0]} / {gr[0]}")
        return
    h = rr[0]
    if len(rr) != len(gr):
        ck.fail(f"{fname}: {len(rr) - 1} rows in the reference, {len(gr) - 1} written")
        return
    keys, rec = CSV_KEYS.get(fname, (("Core Id", "Engine Id", "Cmd Id"), "Function Type"))

    def ident(row):
        d = dict(zip(h, row))
        return tuple(d[k] for k in keys)

    pairs = list(zip(rr[1:], gr[1:]))
    if any(ident(a) != ident(b) for a, b in pairs):
        if not ck.allowed(fname, "(row order)", ""):
            ck.fail(f"{fname}: rows in another order")
            return
        # Join by (core, engine, cmd id, occurrence): ids repeat on BM1690.
        def keyed(rows):
            seen, out = {}, {}
            for r in rows:
                k = ident(r)
                seen[k] = seen.get(k, 0) + 1
                out[k + (seen[k],)] = r
            return out
        rk, gk = keyed(rr[1:]), keyed(gr[1:])
        pairs = [(rk[k], gk.get(k)) for k in rk]
    agree = cells = 0
    differ = {}
    for n, (a, b) in enumerate(pairs):
        if b is None:
            ck.fail(f"{fname}: row {a[:4]} missing")
            continue
        ftype = dict(zip(h, a))[rec]
        for k, x, y in zip(h, a, b):
            cells += 1
            agree += x == y
            if x != y:
                differ[k] = differ.get(k, 0) + 1
            if x != y and not ck.allowed(fname, k, ftype):
                ck.fail(f"{fname} row {n} ({a[0]},{a[3]}): {k}: {x!r} / {y!r}")
    print(f"{ck.dump}: {fname}: {agree} of {cells} cells agree; differing cells per column: "
          f"{differ}")


def check_dump(tpuprof, table, shared, outdir, dump):
    src = os.path.join(shared, "testdata", "sophgo", dump)
    ref = os.path.join(shared, "testdata", "sophgo", "reference", dump)
    out = os.path.join(outdir, dump)
    r = subprocess.run([tpuprof, src, out, "-q", "--vendor_files", "--disable_web",
                        "--disable_doc", "--disable_perfetto", "--disable_summary"],
                       capture_output=True, text=True)
    ck = Checker(dump, table)
    if r.returncode != 0:
        ck.fail(f"tpuprof failed ({r.returncode}): {r.stderr.strip()}")
        return ck.bad
    vdir = os.path.join(out, "vendor")
    written = sorted(os.listdir(vdir)) if os.path.isdir(vdir) else []
    refs = sorted(os.path.relpath(os.path.join(dp, f), ref)
                  for dp, _, fs in os.walk(ref) for f in fs)
    same = 0
    for rel in refs:
        fname = os.path.basename(rel)
        if fname not in written:
            if not ck.allowed(rel, "(file)", ""):
                ck.fail(f"{rel}: not written")
            continue
        a = open(os.path.join(ref, rel), "rb").read()
        b = open(os.path.join(vdir, fname), "rb").read()
        if a == b:
            same += 1
            continue
        at, bt = a.decode("utf-8", "replace"), b.decode("utf-8", "replace")
        if fname.endswith(".csv"):
            compare_csv(ck, fname, at, bt)
        else:
            compare_reginfo(ck, fname, at, bt)
    ck.unused(written + [r for r in refs if os.path.basename(r) not in written])
    print(f"{dump}: {len(refs)} reference files, {same} byte-identical, "
          f"{len(written)} written; {ck.bad} unlisted differences")
    return ck.bad


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    tpuprof, source, shared, outdir = sys.argv[1:]
    base = os.path.join(shared, "testdata", "sophgo")
    if not os.path.isdir(os.path.join(base, "reference")):
        print(f"SKIPPED: {base}/reference is absent; the vendor-files comparison did not run")
        return 77
    table = listed_differences(os.path.join(source, "docs", "vendor-files.md"))
    bad = ran = 0
    for dump in DUMPS:
        if not os.path.isdir(os.path.join(base, "reference", dump)) or \
                not os.path.isdir(os.path.join(base, dump)):
            print(f"SKIPPED: {dump}: dump or reference folder absent")
            continue
        ran += 1
        bad += check_dump(tpuprof, table, shared, outdir, dump)
    if not ran:
        print("SKIPPED: no dump with a reference folder")
        return 77
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
