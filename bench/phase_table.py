#!/usr/bin/python3
"""phase_table.py NAME ONE.json TWO.json [FACTS [WIDE.json [COPIES]]] — the per-phase table of
`make bench`.

ONE and TWO are `tpuprof --timings` reports of the same conversion with --jobs 1 and --jobs 2
(docs/perf-notes/cores.md), each one file or several separated by commas (repeated runs):
every phase is then taken from its fastest run of each side (best of N by wall time), so a
slow moment of a shared machine does not set a ratio. For each phase (the reader's stages, the analysis, each output;
nested phases indented) it prints: wall s with one and two threads and their ratio (goal
>= 1.9x), CPU s with one thread, the serial share of CPU (CPU time of sections that run on one
thread / the phase's CPU time; goal <= 5 % in total), the most threads that ran at once with
--jobs 2, the peak resident memory the phase added over its start with each, and the bytes each
extra thread costs ((peak with two - peak with one) / (threads with two - threads with one)).
scripts/bench.sh scale_bench passes a --jobs 16 report as TWO: the columns name its --jobs.
Prints numbers, never asserts. With FACTS, appends KEY<TAB>VALUE lines for bench/targets.awk:
"phases NAME serial %" (total), "phases NAME worst ratio" (the lowest --jobs 2 ratio among
the phases the issue names: the reader, the analysis and each output, i.e. the top-level
phases other than "write" and the outputs under "write", counting those that take at least
1 % of the wall time) and its phase.

With WIDE (a report of the same conversion with --jobs 16), two columns: "thr16", the most
threads each phase ran at once there, and "max16", the most a 16-core machine could speed the
phase up by its structure alone: its --jobs 1 wall over the sum of its leaf phases' --jobs 1
walls, each divided by the threads that leaf ran on (at most 16). On a machine of fewer cores
the sixteen threads still start, so this shows which phases are built to use sixteen cores
and which cannot whatever the machine (a per-core pass of a 2-core dump runs on 2 threads; a
pool capped at seven workers runs on eight). It is an upper bound: it assumes every thread of a
phase is busy throughout. The reader's and the whole conversion's are also printed and kept as facts.

With COPIES (--timings reports of N copies of the --jobs 1 conversion run at once: groups
separated by commas, each "PHASE+PHASE=A.json:B.json", the phases it was run for and its N
reports), two columns for the phases the worst ratio ranks (of at least 1 % of the wall time):
"cpN", the machine's own ratio for that very work (N x the phase's --jobs 1 wall over the
copies' mean wall, from the groups run for that phase, the one of least mean wall; independent
processes share nothing of ours, so this is what N cores gave the work at that moment), and
"of cp", the --jobs 2 ratio over it (how much of what the machine gave two copies the threads
got). Kept as facts: the lowest "of cp" and its phase, and the lowest cpN and its phase. Empty
FACTS or WIDE: none.
"""
import json
import sys


def load(paths):
    """The phases of one or more reports (comma-separated paths), each phase from its run of
    least wall time; the first report for the run-wide fields."""
    best, first = {}, None
    for path in paths.split(","):
        with open(path) as f:
            rep = json.load(f)
        first = first or rep
        for p in rep["phases"]:
            q = best.get(p["name"])
            if q is None or p["wall_s"] < q["wall_s"]:
                best[p["name"]] = p
    order = [p["name"] for p in first["phases"]]
    return {k: best[k] for k in order if k in best}, first


def copies(groups):
    """Per phase, the least mean wall over the groups of N copies run at once for it; and N."""
    best, n = {}, 0
    for group in groups.split(","):
        tags, paths = group.split("=", 1)
        reps = []
        for path in paths.split(":"):
            with open(path) as f:
                reps.append({p["name"]: p["wall_s"] for p in json.load(f)["phases"]})
        n = max(n, len(reps))
        for key in tags.split("+"):
            if all(key in r for r in reps):
                w = sum(r[key] for r in reps) / len(reps)
                if key not in best or w < best[key]:
                    best[key] = w
    return best, n


def extra(p):
    return max(0, p["rss_peak_bytes"] - p["rss_start_bytes"])


def max16(a, wide, key):
    """The structural bound of phase key on 16 cores (see the module's text), None without
    its leaves in both reports."""
    leaves = [k for k in a if (k == key or key == "total" or k.startswith(key + "/"))
              and k != "total" and not any(j.startswith(k + "/") for j in a)]
    if not leaves or any(k not in wide for k in leaves):
        return None
    t = sum(a[k]["wall_s"] / min(16, max(1, wide[k]["threads"])) for k in leaves)
    return a[key]["wall_s"] / t if t > 0 else None


def ranked(key, depth):
    """Whether a phase counts for the worst ratio: "write" is the sum of the outputs, which
    run one after another, so each output counts instead of their sum."""
    if depth == 1:
        return key != "write"
    return depth == 2 and key.startswith("write/")


def main():
    name, one, two = sys.argv[1], sys.argv[2], sys.argv[3]
    facts = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    wide = load(sys.argv[5])[0] if len(sys.argv) > 5 and sys.argv[5] else {}
    cp, ncp = copies(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] else ({}, 0)
    a, rep_a = load(one)
    b, rep_b = load(two)
    total = a.get("total")
    print("== phases of %s: --jobs %d vs --jobs %d (tpuprof --timings; outputs one after another;"
          " each phase's best of %d and %d runs)"
          % (name, rep_a["jobs"], rep_b["jobs"], one.count(",") + 1, two.count(",") + 1))
    jb = rep_b["jobs"]
    print("  %-28s %8s %8s %6s %8s %7s %7s %4s %9s %9s %10s%s%s" % (
        "phase", "wall 1", "wall %d" % jb, "x", "CPU 1", "ser% 1", "ser%% %d" % jb, "thr",
        "+MiB 1", "+MiB %d" % jb, "B/thread", "  %5s %6s" % ("thr16", "max16") if wide else "",
        "  %6s %5s" % ("cp%d" % ncp, "of cp") if cp else ""))
    worst, worst_name = None, "-"
    least, least_name, low, low_name = None, "-", None, "-"
    for key, p in a.items():
        q = b.get(key)
        if q is None:
            continue
        depth = p["depth"]
        ratio = p["wall_s"] / q["wall_s"] if q["wall_s"] > 0 else 0.0
        s1 = 100.0 * p["serial_cpu_s"] / p["cpu_s"] if p["cpu_s"] > 0 else 0.0
        s2 = 100.0 * q["serial_cpu_s"] / q["cpu_s"] if q["cpu_s"] > 0 else 0.0
        dt = q["threads"] - p["threads"]
        per = "%10d" % ((extra(q) - extra(p)) / dt) if dt > 0 else "%10s" % "-"
        label = ("  " * max(0, depth - 1) + key.split("/")[-1])[:28]
        w = wide.get(key)
        m = max16(a, wide, key) if wide else None
        big = total and p["wall_s"] >= 0.01 * total["wall_s"]
        c = ncp * p["wall_s"] / cp[key] if ranked(key, depth) and big and cp.get(key, 0) > 0 \
            else None
        print("  %-28s %8.3f %8.3f %5.2fx %8.3f %6.1f%% %6.1f%% %4d %9.1f %9.1f %s%s%s" % (
            label, p["wall_s"], q["wall_s"], ratio, p["cpu_s"], s1, s2, q["threads"],
            extra(p) / 2**20, extra(q) / 2**20, per,
            "  %5d %5.1fx" % (w["threads"], m) if w and m else ("  %12s" % "" if wide else ""),
            "  %5.2fx %4.0f%%" % (c, 100.0 * ratio / c) if c else ""))
        if ranked(key, depth) and big and (worst is None or ratio < worst):
            worst, worst_name = ratio, key
        if c and (least is None or ratio / c < least):
            least, least_name = ratio / c, key
        if c and (low is None or c < low):
            low, low_name = c, key
    if total:
        share = 100.0 * total["serial_cpu_s"] / total["cpu_s"] if total["cpu_s"] > 0 else 0.0
        print("  serial share of the CPU time in total: %.1f %% (goal <= 5 %%); lowest --jobs %d"
              " ratio of the reader, analysis or an output: %s (%s%s)"
              % (share, jb, "%.2fx" % worst if worst is not None else "-", worst_name,
                 "; goal >= 1.9x" if jb == 2 else ""))
        if least is not None:
            print("  %d copies of --jobs 1 at once: lowest ratio %.2fx (%s); --jobs %d got at least"
                  " %.0f %% of the copies' ratio (%s)" % (ncp, low, low_name, jb, 100.0 * least,
                                                        least_name))
        for key in ("read", "total"):
            m = max16(a, wide, key) if wide else None
            if m:
                print("  with 16 cores, %s could be at most %.1fx faster than with one (the"
                      " threads each of its phases ran on with --jobs 16)" % (key, m))
                if facts:
                    with open(facts, "a") as f:
                        f.write("phases %s max16 %s\t%.2f\n" % (name, key, m))
        if facts:
            with open(facts, "a") as f:
                f.write("phases %s serial %%\t%.2f\n" % (name, share))
                if least is not None:
                    f.write("phases %s copies n\t%d\n" % (name, ncp))
                    f.write("phases %s copies lowest\t%.3f\n" % (name, low))
                    f.write("phases %s copies lowest phase\t%s\n" % (name, low_name))
                    f.write("phases %s of copies\t%.3f\n" % (name, least))
                    f.write("phases %s of copies phase\t%s\n" % (name, least_name))
                if worst is not None:
                    f.write("phases %s worst ratio\t%.3f\n" % (name, worst))
                    f.write("phases %s worst phase\t%s\n" % (name, worst_name))


if __name__ == "__main__":
    main()
