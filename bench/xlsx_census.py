#!/usr/bin/python3
"""xlsx_census.py WORKBOOK.xlsx — the cell census of a workbook, for the bare libxlsxwriter
baseline of `make bench` (scripts/bench.sh): prints one line

    ROWS CELLS STR_PERMILLE STR_LEN FRAC_PERMILLE

= rows (all worksheets), cells per row (rounded), strings per 1000 cells, mean string
length in bytes, fractional numbers per 1000 numbers. `xlsx_gen bare OUT ROWS CELLS
STR_PERMILLE STR_LEN FRAC_PERMILLE` then writes as many cells of the same types and about the
same sizes with libxlsxwriter alone, so the ratio of the two CPU times is tpuprof's own
per-cell overhead. Reads the sheets in 16 MiB chunks (a 1 M-command workbook holds ~1 GB of
XML)."""
import re
import sys
import zipfile

CELL = re.compile(rb'<c [^>]*?(t="inlineStr")?>(?:<is><t[^>]*>([^<]*)</t></is>|<v>([^<]*)</v>)')


def main(path):
    rows = cells = strs = str_bytes = nums = fracs = 0
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if not (name.startswith("xl/worksheets/sheet") and name.endswith(".xml")):
                continue
            with z.open(name) as f:
                tail = b""
                while True:
                    chunk = f.read(1 << 24)
                    data = tail + chunk
                    # Keep an unfinished cell for the next chunk.
                    cut = data.rfind(b"<c ") if chunk else len(data)
                    if cut < 0:
                        cut = len(data)
                    part, tail = data[:cut], data[cut:]
                    rows += part.count(b"<row ")
                    for m in CELL.finditer(part):
                        cells += 1
                        if m.group(1):
                            strs += 1
                            str_bytes += len(m.group(2) or b"")
                        else:
                            nums += 1
                            fracs += b"." in (m.group(3) or b"")
                    if not chunk:
                        break
    if not rows or not cells:
        print("0 0 0 0 0")
        return 0
    print("%d %d %d %d %d" % (rows, round(cells / rows), round(1000 * strs / cells),
                              round(str_bytes / strs) if strs else 0,
                              round(1000 * fracs / nums) if nums else 0))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(1)
    sys.exit(main(sys.argv[1]))
