#!/usr/bin/env python3
"""Fails when a comment in the project's sources names a file that exists nowhere in the tree.

A name counts when it looks like a C source or header (.c, .h, .cpp) and is not a system header
or a file the build generates; the vendor's Python files cited as evidence are not checked. Names are matched by basename against every tracked file,
so a comment may say `sink.c` or `src/writers/sink/sink.c`.
"""
import glob
import os
import re
import subprocess
import sys

EXTS = ("c", "h", "cpp")
# Files the build generates (not tracked, but real).
GENERATED = {"html_assets.c", "tpuprof_version.h"}
NAME = re.compile(r"(?<![\w./-])([\w./-]*[\w-]\.(?:%s))\b" % "|".join(EXTS))
SYS_DIRS = ["/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu"]
SYS_DIRS += glob.glob("/usr/lib/gcc/*/*/include")


def comments_c(text):
    for m in re.finditer(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", text, re.S):
        if not m.group(0).startswith('"'):
            yield m.start(), m.group(0)


def comments_hash(text):
    for m in re.finditer(r"(?m)#[^\n]*", text):
        yield m.start(), m.group(0)


def is_system(name):
    for d in SYS_DIRS:
        if os.path.exists(os.path.join(d, name)):
            return True
    return False


def main():
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split()
    untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"],
                               capture_output=True, text=True, check=True).stdout.split()
    files = tracked + untracked
    basenames = {os.path.basename(f) for f in files}
    paths = set(files)
    bad = []
    for f in files:
        if not os.path.isfile(f):
            continue
        if f.endswith((".c", ".h", ".cpp", ".js", ".mjs")):
            gen = comments_c
        elif f.endswith((".py", ".sh", ".cmake")) or os.path.basename(f) == "CMakeLists.txt":
            gen = comments_hash
        else:
            continue
        text = open(f, encoding="utf-8", errors="replace").read()
        for pos, c in gen(text):
            for m in NAME.finditer(c):
                name = m.group(1).removeprefix("./")
                base = os.path.basename(name)
                if "*" in name or base.startswith("<"):
                    continue
                if base in basenames or base in GENERATED or name in paths or is_system(name) or is_system(base):
                    continue
                line = text.count("\n", 0, pos + m.start()) + 1
                bad.append("%s:%d: names %s, which is not in the tree" % (f, line, name))
    for b in bad:
        print("check-style: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
