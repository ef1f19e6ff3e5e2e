#!/usr/bin/python3
"""regdef_ref_test.py — the transcribed register tables against the vendor's own output.

  regdef_ref_test.py CC SRC_DIR SHARED_DIR

For every reference dump below whose table file exists in SRC_DIR, reads
SHARED_DIR/testdata/sophgo/reference/<dump>/tiuRegInfo_0.txt and tdmaRegInfo_0.txt (written
by tpu-mlir's profiler) and checks, for every class the dump uses ("Function Type"):
  - TIU: the record's des_* names equal the class's field names (des_ prefix dropped), each
    name once at its first position (the profiler prints a dict built from the ctypes fields);
  - DMA: the names before "Engine Id" are the class's field names, renamed and once each as
    above, followed only by the names the profiler adds itself (PROFILER_ADDS);
  - the op index: (cmd_short, tsk_typ/cmd_type, eu/sp) of each record selects that class, and
    the record's "Function Name" is the table's sub-operation name (DMA: the tensorLd/St/Mv
    rule of specs/sophgo-costmodel.md §5.3 applied to sp 0 of cmd_type 0/1).
A Function Type the tables lack is a failure. Records of Function Type "unknown" (no
descriptor: cdm dynamic-mode records) are counted and skipped.

The C tables are read by running the C preprocessor (CC -E) over the table file, so the
macros the tables use are expanded by the compiler itself, then parsed with regular
expressions. Must run under /usr/bin/python3. Exit 0 pass, 1 failure, 77 skipped (loudly).
"""
import os
import re
import subprocess
import sys

# (reference dump, table file, field renames the profiler applies before printing)
DUMPS = [
    ("bm1690_blazeface_cdm", "regdef_bm1690.c", {}),
    ("cv184x_blazeface", "regdef_cv184x.c", {}),
    # BM1688's printer renames the address halves (specs/sophgo-costmodel.md §5 step 1).
    ("bm1688_resnet50", "regdef_bm1688.c", {
        "src_start_addr_h32": "src_start_addr_l32", "src_start_addr_l8": "src_start_addr_h8",
        "dst_start_addr_h32": "dst_start_addr_l32", "dst_start_addr_l8": "dst_start_addr_h8"}),
]

# Names the profiler appends to a DMA record after the register fields
# (profile_helper/<chip>_defs.py::get_dma_info): the mask address, the composed addresses and,
# for sys commands, the h13 halves it zeroes.
PROFILER_ADDS = {"mask_start_addr_h8", "mask_start_addr_l32", "dst_start_addr",
                 "src_start_addr", "src_start_addr_h13", "dst_start_addr_h13",
                 "dst_start_addr_l32", "src_start_addr_l32"}

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)
    return cond


def strings(lits):
    """Concatenates adjacent C string literals ("a" "b")."""
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', lits))


def load_tables(cc, src_dir, fname):
    path = os.path.join(src_dir, fname)
    src_root = os.path.abspath(src_dir)
    while os.path.basename(src_root) != "src":
        src_root = os.path.dirname(src_root)
    out = subprocess.run([cc, "-E", "-P", "-I", src_root, "-I",
                          os.path.join(os.path.dirname(src_root), "include"),
                          path], check=True, capture_output=True, text=True).stdout
    arrays = {}
    for m in re.finditer(r"static const struct (sg_field|sg_regclass|sg_subname|sg_opclass)\s+"
                         r"(\w+)\[\]\s*=\s*\{(.*?)\};", out, re.S):
        arrays[m.group(2)] = (m.group(1), m.group(3))
    isa = re.search(r"const struct sg_isa sg_isa_\w+\s*=\s*\{(.*?)\};", out, re.S)
    if not isa:
        raise SystemExit("no sg_isa object in " + fname)
    refs = dict(re.findall(r"\.(\w+)\s*=\s*(\w+)", isa.group(1)))

    def fields(name):
        kind, body = arrays[name]
        assert kind == "sg_field", name
        return [(strings(s), int(w)) for s, w in
                re.findall(r'\{\s*((?:"(?:[^"\\]|\\.)*"\s*)+),\s*(\d+)\s*\}', body)]

    def subs(name):
        if name not in arrays:
            return {}
        return {int(c): strings(s) for c, s in
                re.findall(r'\{\s*(\d+)\s*,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}', arrays[name][1])}

    tables = {}
    for eng in ("tiu", "dma", "cdma"):
        cls, ops = {}, []
        if refs.get(eng) in arrays:
            for m in re.finditer(r'\{\s*"([^"]+)"\s*,\s*(\d+)\s*,\s*(\w+)\s*,',
                                 arrays[refs[eng]][1]):
                cls[m.group(1)] = (int(m.group(2)), fields(m.group(3)))
        if refs.get(eng + "_ops") in arrays:
            for m in re.finditer(r'\{\s*"([^"]+)"\s*,\s*(-?\d+)\s*,\s*(\d+)\s*,\s*(\w+)',
                                 arrays[refs[eng + "_ops"]][1]):
                ops.append((m.group(1), int(m.group(2)), int(m.group(3)), subs(m.group(4))))
        tables[eng] = (cls, ops)
    return tables


def first_once(names):
    seen, out = set(), []
    for n in names:
        if n not in seen:
            seen.add(n)
            out.append(n)
    return out


def read_records(path, marker):
    """Each record as an ordered list of (key, value) in file order."""
    recs, cur = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("__"):
                cur = [] if line.strip() == marker else None
                if cur is not None:
                    recs.append(cur)
                continue
            if cur is None or ":" not in line:
                continue
            k, _, v = line.strip().partition(":")
            cur.append((k, v.strip()))
    return recs


def select(ops, short, op, sub):
    """The classes the op index selects for a header (cmd_short None = not in descriptor)."""
    hits = []
    for name, s, o, subs in ops:
        if o != op or (s >= 0 and short is not None and s != short):
            continue
        if subs and sub not in subs:
            continue
        hits.append((name, subs))
    return hits


def check_tiu(dump, tables, path):
    cls, ops = tables["tiu"]
    seen, unknown = {}, 0
    for rec in read_records(path, "__TIU_REG_INFO__"):
        d = dict(rec)
        ft = d.get("Function Type")
        if ft == "unknown":
            unknown += 1
            continue
        names = [k[4:] for k, _ in rec if k.startswith("des_")]
        if not check(ft in cls, "%s TIU: Function Type %s is not in the table" % (dump, ft)):
            continue
        want = first_once(n for n, _ in cls[ft][1])
        if ft not in seen:
            seen[ft] = 0
            check(names == want, "%s TIU %s: reference fields %s\n    table fields %s" %
                  (dump, ft, names, want))
        seen[ft] += 1
        short = int(d["des_cmd_short"]) if "des_cmd_short" in d else None
        hits = select(ops, short, int(d["des_tsk_typ"]), int(d["des_tsk_eu_typ"]))
        if check(len(hits) == 1 and hits[0][0] == ft,
                 "%s TIU cmd %s: op index gives %s for %s" %
                 (dump, d.get("Cmd Id"), [h[0] for h in hits], ft)):
            check(hits[0][1].get(int(d["des_tsk_eu_typ"])) == d.get("Function Name"),
                  "%s TIU cmd %s: Function Name %s, table says %s" %
                  (dump, d.get("Cmd Id"), d.get("Function Name"),
                   hits[0][1].get(int(d["des_tsk_eu_typ"]))))
    for ft, n in sorted(seen.items()):
        print("  %s TIU %-12s %5d records, %d fields in order" %
              (dump, ft, n, len(first_once(x for x, _ in cls[ft][1]))))
    if unknown:
        print("  %s TIU: %d records of Function Type 'unknown' (no descriptor) skipped" %
              (dump, unknown))
    return len(seen)


def check_dma(dump, tables, renames, path):
    cls, ops = tables["dma"]
    seen, unknown = {}, 0
    for rec in read_records(path, "__TDMA_REG_INFO__"):
        d = dict(rec)
        ft = d.get("Function Type")
        if ft == "unknown":
            unknown += 1
            continue
        keys = [k for k, _ in rec]
        regs = keys[:keys.index("Engine Id")] if "Engine Id" in keys else keys
        # The vendor's Function Type of a DMA command is the name of sp 0 of its cmd_type.
        owners = [name for name, _, _, subs in ops if subs.get(0) == ft]
        if not check(len(owners) == 1, "%s DMA: Function Type %s names %d table classes %s" %
                     (dump, ft, len(owners), owners)):
            continue
        cname = owners[0]
        want = first_once(renames.get(n, n) for n, _ in cls[cname][1])
        if cname not in seen:
            seen[cname] = 0
            check(regs[:len(want)] == want and set(regs[len(want):]) <= PROFILER_ADDS,
                  "%s DMA %s (%s): reference fields %s\n    table fields %s" %
                  (dump, cname, ft, regs, want))
        seen[cname] += 1
        ct, sp = int(d["cmd_type"]), int(d["cmd_special_function"])
        hits = select(ops, int(d["cmd_short"]), ct, sp)
        if check(len(hits) == 1 and hits[0][0] == cname,
                 "%s DMA cmd %s: op index gives %s for %s" %
                 (dump, d.get("Cmd Id"), [h[0] for h in hits], cname)):
            name = hits[0][1].get(sp)
            if sp == 0 and ct <= 1:
                ok = re.fullmatch(r"tensor(Ld|St|Mv)?", d.get("Function Name", "")) is not None
            else:
                ok = name == d.get("Function Name")
            check(ok, "%s DMA cmd %s: Function Name %s, table says %s" %
                  (dump, d.get("Cmd Id"), d.get("Function Name"), name))
    for cname, n in sorted(seen.items()):
        print("  %s DMA %-18s %5d records, %d fields in order" %
              (dump, cname, n, len(first_once(x for x, _ in cls[cname][1]))))
    if unknown:
        print("  %s DMA: %d records of Function Type 'unknown' (no descriptor) skipped" %
              (dump, unknown))
    return len(seen)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 1
    cc, src_dir, shared = sys.argv[1:]
    ref_root = os.path.join(shared, "testdata", "sophgo", "reference")
    if not os.path.isdir(ref_root):
        print("SKIPPED: %s is absent; register tables not checked against the vendor output"
              % ref_root)
        return 77
    checked = 0
    for dump, fname, renames in DUMPS:
        if not os.path.exists(os.path.join(src_dir, fname)):
            print("NOTE: %s is not in this tree; %s not checked" % (fname, dump))
            continue
        ref = os.path.join(ref_root, dump)
        if not check(os.path.isdir(ref), "reference %s is missing" % ref):
            continue
        tables = load_tables(cc, src_dir, fname)
        n = check_tiu(dump, tables, os.path.join(ref, "tiuRegInfo_0.txt"))
        n += check_dma(dump, tables, renames, os.path.join(ref, "tdmaRegInfo_0.txt"))
        check(n > 0, "%s: no class checked" % dump)
        checked += 1
    check(checked > 0, "no table checked")
    print("regdef_ref_test: %d dumps, %d failures" % (checked, len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
