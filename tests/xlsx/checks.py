"""checks.py — the failure list the workbook's end-to-end checkers share: check() prints a
failed condition and records it in FAILS; the checker exits 1 when FAILS is not empty."""

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)
    return cond
