#!/usr/bin/env python3
"""check_sizes.py — the size limits of the house style (STYLE.md, design/layout.md):

  * no tracked source file (C, C++, Python, JavaScript, shell) over MAX_FILE lines, except
    the transcribed register tables src/readers/sophgo/isa/regdef_*.c;
  * no C/C++ function over MAX_FUNC lines, from the line naming it to its closing brace.

Functions are found the way clang-format lays them out (.clang-format, Linux braces): a "{"
alone in column 0 opens a body, the nearest line above it that starts in column 0 names it,
and braces are matched outside comments, strings and character literals.

Exceptions are listed in scripts/check_sizes.allow, one a line: PATH for a file, PATH:NAME
for a function (# starts a comment). A listed item that is back under its limit is reported
so the entry can go; it does not fail the check. Exit 1 when something unlisted is over.
"""
import fnmatch
import os
import re
import subprocess
import sys

MAX_FILE = 1000
MAX_FUNC = 120
FILE_EXEMPT = ["src/readers/sophgo/isa/regdef_*.c"]
SOURCES = ["*.c", "*.h", "*.cpp", "*.py", "*.js", "*.sh"]
C_SOURCES = (".c", ".h", ".cpp")
ALLOW = os.path.join("scripts", "check_sizes.allow")


def strip_code(line, state):
    """line without its comments, strings and character literals (their text blanked), and
    whether a /* comment is still open at its end."""
    out = []
    i, n = 0, len(line)
    in_comment = state
    while i < n:
        c = line[i]
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_comment = end + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            i, in_comment = i + 2, True
        elif c in "\"'":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), in_comment


def functions(lines):
    """(name, first line, length) of every function body in a C file."""
    found = []
    in_comment = False
    start = None
    depth = 0
    for no, raw in enumerate(lines):
        code, in_comment_next = strip_code(raw, in_comment)
        if start is None and not in_comment and raw.rstrip() == "{":
            head = no - 1
            while head >= 0 and (not lines[head][:1].strip() or lines[head][:1] in "#}/*"):
                head -= 1
            while head > 0 and lines[head][:1] in " \t":
                head -= 1
            sig = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", lines[head]) if head >= 0 else ""
            m = re.search(r"(\w+)\s*\(", sig)
            if m and "=" not in sig.split("(")[0]:
                start = (m.group(1), head)
                depth = 0
        if start is not None:
            depth += code.count("{") - code.count("}")
            if depth == 0 and "}" in code:
                name, head = start
                found.append((name, head + 1, no - head + 1))
                start = None
        in_comment = in_comment_next
    return found


def load_allow(path):
    allow = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                item = line.split("#", 1)[0].strip()
                if item:
                    allow[item] = no
    return allow


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    files = subprocess.run(["git", "ls-files", *SOURCES], capture_output=True, text=True,
                           check=True).stdout.split()
    allow = load_allow(ALLOW)
    over, used = [], set()
    for path in files:
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        exempt = any(fnmatch.fnmatch(path, p) for p in FILE_EXEMPT)
        if len(lines) > MAX_FILE and not exempt:
            if path in allow:
                used.add(path)
            else:
                over.append("%s: %d lines (limit %d)" % (path, len(lines), MAX_FILE))
        if not path.endswith(C_SOURCES):
            continue
        for name, first, length in functions(lines):
            if length <= MAX_FUNC:
                continue
            key = "%s:%s" % (path, name)
            if key in allow:
                used.add(key)
            else:
                over.append("%s:%d: %s is %d lines (limit %d)" % (path, first, name, length,
                                                                   MAX_FUNC))
    for item in sorted(set(allow) - used):
        print("check_sizes: %s:%d: %s is within its limit now: remove the entry"
              % (ALLOW, allow[item], item))
    if over:
        print("check_sizes: over the size limits (split them, see STYLE.md):")
        for o in over:
            print("  " + o)
        return 1
    print("check_sizes: %d files, none over %d lines, no function over %d (%d allowed)"
          % (len(files), MAX_FILE, MAX_FUNC, len(used)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
