#!/usr/bin/python3
"""check_reports.py — checks the reports tpuprof wrote for a bert_mini capture.

Used by the bert_mini end-to-end test (e2e_test.sh). Given the converter's output directory
and the run's parameters, it verifies ops.csv (operator rows and types, per-operator
execution counts without the warm-up steps, latency statistics, the perf-ratio table and the
what-if columns against the ratio file or the built-in defaults, the totals) and
summary.json / summary.md (steps, warm-up exclusion, activities, per-type aggregates).
Exits 0 when every check passes; otherwise prints each failure and exits 1.
"""
import argparse
import csv
import json
import math
import os
import sys

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
    return cond


# Per layer, in execution order: (suffix, type, weight shape or None).
LAYER_OPS = [
    ("attn.q", "MatMul", "256x256"), ("attn.k", "MatMul", "256x256"),
    ("attn.v", "MatMul", "256x256"), ("attn.scores", "BatchMatMul", None),
    ("attn.softmax", "Softmax", None), ("attn.context", "BatchMatMul", None),
    ("attn.out", "MatMul", "256x256"), ("attn.ln", "LayerNorm", None),
    ("ffn.up", "MatMul", "256x1024"), ("ffn.gelu", "Gelu", None),
    ("ffn.down", "MatMul", "1024x256"), ("ffn.ln", "LayerNorm", None),
]
# Zero shares bert_mini.c gives each projection (the measured ratio is close to these).
ZERO_SHARE = {"attn.q": 0.10, "attn.k": 0.10, "attn.v": 0.30, "attn.out": 0.20,
              "ffn.up": 0.40, "ffn.down": 0.60, "pooler.dense": 0.25, "classifier": 0.0}

BUILTIN = {"256x256": (4.0, 2.5, 2.0, 1.0), "256x1024": (4.5, 3.0, 2.5, 1.0),
           "1024x256": (5.0, 3.5, 3.0, 1.0)}
BUILTIN_FALLBACK = (4.0, 2.5, 2.0, 1.0)


def expected_ops(layers):
    ops = [("embeddings.word", "Gather", None), ("embeddings.position", "Add", None),
           ("embeddings.ln", "LayerNorm", None)]
    for l in range(layers):
        ops += [("encoder.%d.%s" % (l, s), t, w) for s, t, w in LAYER_OPS]
    ops += [("pooler.dense", "MatMul", "256x256"), ("classifier", "MatMul", "256x4")]
    return ops


def parse_ratio_file(path):
    """Independent reading of the documented format (docs/sparse-ratios.md)."""
    rows, fallback, aim = {}, None, 90
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].replace(",", " ").split()
            if not line:
                continue
            if line[0] == "aim":
                aim = int(line[1].rstrip("%"))
                continue
            vals = tuple(float(v) for v in line[1:5])
            if line[0] == "*":
                fallback = (vals, lineno)
            else:
                rows[line[0]] = (vals, lineno)
    return rows, fallback, aim


def ratio_index(aim):
    return {90: 0, 80: 1, 70: 2}.get(aim, 3)


def fnum(s):
    return float(s)


def check_ops_csv(path, args):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    hdr = rows.index(next(r for r in rows if r and r[0] == "operator type"))
    ratio_rows = rows[1:hdr]
    header = rows[hdr]
    check(rows[0][:5] == ["weight shape", "90% 4x1 perf ratio", "80% 4x1 perf ratio",
                          "70% 4x1 perf ratio", "others"], "ratio table header: %r" % rows[0])
    check(len(header) == 20, "operator header has %d columns, want 16 + 4" % len(header))
    col = {name: i for i, name in enumerate(header)}
    end = hdr + 1
    while end < len(rows) and not (len(rows[end]) > 11 and rows[end][11] == "total latency(ms)"):
        end += 1
    ops = rows[hdr + 1:end]
    totals = rows[end:end + 3]
    check(len(totals) == 3, "three totals rows expected")

    want = expected_ops(args.layers)
    counted = args.steps - args.warmup
    got_names = [r[col["operator name"]] for r in ops]
    check(got_names == [n for n, _, _ in want],
          "operator rows differ from the operators bert_mini runs:\n  got  %s\n  want %s"
          % (got_names, [n for n, _, _ in want]))

    # Count per type: rows x non-warm-up steps.
    per_type_rows, per_type_exec = {}, {}
    for r in ops:
        t = r[col["operator type"]]
        per_type_rows[t] = per_type_rows.get(t, 0) + 1
        per_type_exec[t] = per_type_exec.get(t, 0) + int(r[col["executions"]])
    L = args.layers
    want_rows = {"Gather": 1, "Add": 1, "LayerNorm": 2 * L + 1, "MatMul": 6 * L + 2,
                 "BatchMatMul": 2 * L, "Softmax": L, "Gelu": L}
    check(per_type_rows == want_rows, "rows per type %r, want %r" % (per_type_rows, want_rows))
    for t, n in want_rows.items():
        check(per_type_exec.get(t) == n * counted,
              "%s executions %s, want %d (rows) x %d (non-warm-up steps)"
              % (t, per_type_exec.get(t), n, counted))

    # Ratios expected for each shape.
    if args.ratios:
        frows, ffall, aim = parse_ratio_file(args.ratios)
        fall = ffall if ffall else (BUILTIN_FALLBACK, None)

        def lookup(shape):
            if shape in frows:
                return frows[shape][0], "file line %d" % frows[shape][1]
            src = ("file line %d (*)" % fall[1]) if fall[1] else "built-in (*)"
            return fall[0], src
    else:
        aim = 90

        def lookup(shape):
            if shape in BUILTIN:
                return BUILTIN[shape], "built-in"
            return BUILTIN_FALLBACK, "built-in (*)"

    shapes = sorted({w for _, _, w in want if w},
                    key=lambda s: [int(d) for d in s.split("x")])
    check([r[0] for r in ratio_rows] == shapes,
          "ratio table shapes %r, want %r" % ([r[0] for r in ratio_rows], shapes))
    for r in ratio_rows:
        vals, src = lookup(r[0])
        check(tuple(fnum(v) for v in r[1:5]) == vals, "ratio row %r, want %r" % (r, vals))
        check(r[5] == src, "ratio source %r for %s, want %r" % (r[5], r[0], src))

    sum_m = sum_p = sum_me = sum_pe = 0.0
    for r, (name, typ, wshape) in zip(ops, want):
        m = fnum(r[col["operator latency mean(ms)"]])
        lo = fnum(r[col["operator latency min(ms)"]])
        hi = fnum(r[col["operator latency max(ms)"]])
        p99 = fnum(r[col["operator latency p99(ms)"]])
        check(r[col["executions"]] == str(counted),
              "%s: executions %s, want %d (warm-up steps excluded)"
              % (name, r[col["executions"]], counted))
        check(lo > 0, "%s: min latency %s not positive" % (name, lo))
        check(lo <= m + 1e-6 and m <= hi + 1e-6, "%s: not min <= mean <= max: %s %s %s"
              % (name, lo, m, hi))
        check(lo <= p99 <= hi, "%s: p99 %s outside [min, max]" % (name, p99))
        check(r[col["weight shape"]] == (wshape or ""), "%s: weight shape %r, want %r"
              % (name, r[col["weight shape"]], wshape))
        check(r[col["input dtype"]].split(";")[0] in ("fp32", "int32"),
              "%s: input dtype %r" % (name, r[col["input dtype"]]))
        check(r[col["output tensor name"]] != "", "%s: no output tensor name" % name)
        eligible = wshape is not None and typ == "MatMul"
        check(r[col["sparse support"]] == ("true" if eligible else ""),
              "%s: sparse support %r" % (name, r[col["sparse support"]]))
        p = fnum(r[col["aim to sparse latency(ms)"]])
        if eligible:
            sp = fnum(r[col["weight sparse ratio"]].rstrip("%")) / 100
            share = ZERO_SHARE[name.split(".", 2)[-1] if name.startswith("encoder") else name]
            check(abs(sp - share) < 0.03, "%s: weight sparsity %.4f, bert_mini uses %.2f"
                  % (name, sp, share))
            if sp < 0.5:
                ratio = lookup(wshape)[0][ratio_index(aim)]
                check(r[col["aim to weight sparse ratio"]] == "%d%%" % aim,
                      "%s: aim %r" % (name, r[col["aim to weight sparse ratio"]]))
                check(fnum(r[col["sparse kernel pref ratio"]]) == ratio,
                      "%s: ratio %s, want %s" % (name, r[col["sparse kernel pref ratio"]], ratio))
                check(abs(p - m / ratio) <= 2e-6, "%s: aim latency %s != %s / %s"
                      % (name, p, m, ratio))
            else:
                check(r[col["aim to weight sparse ratio"]] == "" and p == m,
                      "%s: at %.0f%% sparsity the what-if must keep P = M" % (name, sp * 100))
            sum_me += m
            sum_pe += p
        else:
            check(p == m, "%s: P %s != M %s" % (name, p, m))
        sum_m += m
        sum_p += p

    tol = 1e-6 * (len(ops) + 1)
    t0, t1, t2 = totals
    check(abs(fnum(t0[12]) - sum_m) <= tol, "total latency %s != sum %f" % (t0[12], sum_m))
    check(abs(fnum(t0[15]) - sum_p) <= tol, "total aim latency %s != sum %f" % (t0[15], sum_p))
    check(abs(fnum(t0[17]) - sum_m / sum_p) <= 1e-3, "sparse improve %s" % t0[17])
    check(abs(fnum(t1[12]) - sum_me) <= tol, "sparse support latency %s" % t1[12])
    check(abs(fnum(t1[15]) - sum_pe) <= tol, "aim sparse support latency %s" % t1[15])
    check(abs(fnum(t2[12]) - sum_me / sum_m) <= 1e-3, "sparse support ratio %s" % t2[12])
    check(sum_p < sum_m, "the what-if must predict a saving")


def check_summary(out, args):
    with open(os.path.join(out, "summary.json")) as f:
        js = json.load(f)
    counted = args.steps - args.warmup
    check(js.get("format") == "tpuprof-capture-summary",
          "summary.json is not the capture summary: format %r" % js.get("format"))
    ov = js["overall_stats"]
    check(ov["steps"] == args.steps, "steps %r" % ov["steps"])
    check(ov["warmup_steps"] == args.warmup, "warmup_steps %r" % ov["warmup_steps"])
    check(ov["counted_steps"] == counted, "counted_steps %r" % ov["counted_steps"])
    lat = ov["latency_ms"]
    check(0 < lat["min"] <= lat["mean"] <= lat["max"], "latency stats %r" % lat)
    check(lat["min"] <= lat["median"] <= lat["p99"] <= lat["max"], "latency order %r" % lat)
    steps = js["steps"]
    check([s["warmup"] for s in steps] == [i < args.warmup for i in range(args.steps)],
          "warm-up flags %r" % [s["warmup"] for s in steps])
    real = [s["latency_ms"] for s in steps if not s["warmup"]]
    check(abs(sum(real) / len(real) - lat["mean"]) < 1e-5,
          "mean latency %s is not the mean of the non-warm-up steps %s" % (lat["mean"], real))
    check(max(real) == lat["max"] and min(real) == lat["min"], "min/max from warm-up steps?")
    # The example records its batch with tpuprof_meta, so throughput counts samples.
    check(ov["batch_size"] == args.batch and ov["batch_size_source"] == "meta",
          "batch_size %r from %r" % (ov["batch_size"], ov["batch_size_source"]))
    thr = ov["throughput_samples_per_s"] if "throughput_samples_per_s" in ov else None
    if thr is not None:
        check(abs(thr["max"] - args.batch * 1000.0 / lat["min"]) <= 1e-3 * thr["max"],
              "max throughput %r is not batch / min latency" % thr)
    app = js["app_stats"]
    check("load weights" in app.get("none", {}), "app_stats.none lacks 'load weights'")
    for s in range(args.steps):
        acts = app.get(str(s), {})
        check("data prep" in acts and "postprocess" in acts,
              "app_stats[%d] has %r" % (s, sorted(acts)))
        check(acts.get("data prep", {}).get("duration_ms", 0) > 0, "data prep duration")
    graph = js["op_stats"].get("bert_mini", {})
    check(sorted(graph, key=int) == [str(s) for s in range(args.steps)],
          "op_stats steps %r" % sorted(graph))
    node = graph.get("0", {}).get("localhost", {}).get("CPU", {}).get("encoder.0.attn.q")
    check(node is not None and node["op_type"] == "MatMul", "op_stats node %r" % node)
    if node:
        check(node["output"]["0"]["shape"] == [args.batch, args.seq, 256],
              "encoder.0.attn.q output shape %r" % node["output"]["0"]["shape"])
        check(node["total_bytes"] > 0, "bytes of encoder.0.attn.q")
    types = {t["op_type"]: t for t in js["op_type_stats"]}
    L = args.layers
    for t, n in {"MatMul": 6 * L + 2, "LayerNorm": 2 * L + 1, "Softmax": L, "Gelu": L,
                 "BatchMatMul": 2 * L}.items():
        check(types.get(t, {}).get("executions") == n * counted,
              "op_type_stats %s executions %r, want %d" % (t, types.get(t), n * counted))
    for o in js["operators"]:
        check(o["warmup_executions"] == args.warmup and o["executions"] == counted,
              "operator %s: %d/%d executions" % (o["name"], o["executions"],
                                                 o["warmup_executions"]))
    with open(os.path.join(out, "summary.md")) as f:
        md = f.read()
    check("| Steps | %d (%d warm-up excluded) |" % (args.steps, args.warmup) in md,
          "summary.md steps line")
    for t in ("MatMul", "LayerNorm", "Softmax", "Gelu", "BatchMatMul", "Gather"):
        check("\n| %s | " % t in md, "summary.md lacks the %s row" % t)
    check("## Slowest operators" in md, "summary.md lacks the slowest operators")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--warmup", type=int, required=True)
    ap.add_argument("--seq", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--ratios")
    args = ap.parse_args()
    check_ops_csv(os.path.join(args.out, "ops.csv"), args)
    check_summary(args.out, args)
    for m in FAILS:
        print("FAIL:", m)
    if FAILS:
        return 1
    print("ok: %s (%d layers, %d steps, %d warm-up, ratios %s)"
          % (args.out, args.layers, args.steps, args.warmup, args.ratios or "built-in"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
