# targets.awk — the scale targets, each with this run's figure and a verdict, from the files
# scripts/bench.sh wrote during the run (it prints nothing it did not measure):
#   awk -f bench/targets.awk FACTS ROWS TRACE_BENCH_1M
#   awk -f bench/targets.awk -v only=job /dev/null /dev/null /dev/null JOB_ROWS
# JOB_ROWS (optional 4th file): job_bench's tp-bench rows, "tpuprof job (...)" and "one by one
# (...)" of the same run; they give the job targets (ratios of the job to the one-by-one loop).
# only=job prints the job targets alone; only=scale (with -v size=, cdm=, wide=, ncpu=) the
# scaling targets alone, from FACTS ("scale NAME bytes", "scale NAME identical") and ROWS.
# FACTS: KEY<TAB>VALUE lines ("gen-1M input" bytes, "json-1M events", "sqlite-1M rows/s" in
# M rows/s); ROWS: tp-bench rows (name, group, commands, cores, bytes, wall ns, peak RSS KiB,
# exit, CPU ns, runs, median wall ns); TRACE_BENCH_1M: trace_bench's output on the 1 M/core
# dump (its "perfetto" and "json" lines). A figure whose inputs are missing prints "not run".
# Verdicts compare with the issue's limits; a figure never decides anything else.
BEGIN { FS = "\t" }
ARGC > 4 && FILENAME == ARGV[4] {
	k = $1 ~ /^tpuprof job/ ? "job" : $1 ~ /^one by one/ ? "loop" : ""
	if (k != "") {
		jwall[k] = $6 / 1e9; jrss[k] = $7; jcode[k] = $8; jcpu[k] = (NF >= 9) ? $9 / 1e9 : 0
	}
	next
}
FILENAME == ARGV[1] { fact[$1] = $2; next }
FILENAME == ARGV[2] {
	wall[$1] = $6 / 1e9; rss[$1] = $7; cmds[$1] = $3; code[$1] = $8
	cpu[$1] = (NF >= 9) ? $9 / 1e9 : ""
	runs[$1] = (NF >= 11) ? $10 : 1; med[$1] = (NF >= 11) ? $11 / 1e9 : $6 / 1e9
	next
}
{
	# trace_bench: "NAME slices N  bytes B  B/slice X  wall W s  R M slices/s ... peak RSS +P MiB
	# [best of K, median wall M s (Q M/s)]"
	n = split($0, f, /[ \t]+/)
	if (f[1] != "perfetto" && f[1] != "json")
		next
	for (i = 1; i < n; i++) {
		if (f[i] == "B/slice") tb[f[1], "bps"] = f[i + 1]
		if (f[i] == "wall" && f[i + 2] == "s" && !((f[1], "rate") in tb)) tb[f[1], "rate"] = f[i + 3]
		if (f[i] == "RSS") tb[f[1], "rss"] = f[i + 1]
		if (f[i] == "median") tb[f[1], "median"] = f[i + 4]
	}
	sub(/^\(/, "", tb[f[1], "median"])
}
function ok(c) { return c ? "met" : "MISSED" }
function row(target, figure, verdict) { printf "  %-58s %-34s %s\n", target, figure, verdict }
function have(name) { return (name in wall) && code[name] == 0 }
# The job against converting its dumps one by one, both measured in this run (job_bench). Goals
# (docs/perf-notes/job.md): wall <= 0.80x, since the dumps are independent and `tpuprof job`
# runs several at once (docs/job.md) while one conversion alone keeps CPU/wall well under 2;
# CPU <= 1.10x, since the job adds only its merge (index, summaries, job.pftrace), well under a
# second; peak RSS of the largest process <= 1.50x, since the job's own process holds only the
# plan and the per-dump entries and each conversion is the same child as in the loop.
function job_targets(   w, c, m) {
	printf "== job targets (tpuprof job / one by one, this run)\n"
	printf "  %-58s %-34s %s\n", "target", "figure", "verdict"
	if (!(("job" in jcode) && ("loop" in jcode)) || jcode["job"] != 0 || jcode["loop"] != 0 ||
	    jwall["loop"] <= 0 || jrss["loop"] <= 0) {
		row("tpuprof job vs one by one", "not run", "-")
		return
	}
	w = jwall["job"] / jwall["loop"]
	row("job wall: <= 0.80x one by one", sprintf("%.2fx (%.2f s / %.2f s)", w, jwall["job"], jwall["loop"]), ok(w <= 0.80))
	if (jcpu["loop"] > 0) {
		c = jcpu["job"] / jcpu["loop"]
		row("job CPU: <= 1.10x one by one", sprintf("%.2fx (%.2f s / %.2f s)", c, jcpu["job"], jcpu["loop"]), ok(c <= 1.10))
	} else
		row("job CPU: <= 1.10x one by one", "not run", "-")
	m = jrss["job"] / jrss["loop"]
	row("job peak RSS (largest process): <= 1.50x one by one", sprintf("%.2fx (%.1f / %.1f MiB)", m, jrss["job"] / 1024, jrss["loop"] / 1024), ok(m <= 1.50))
}
# The scaling rows (scripts/bench.sh scale_bench; size, cdm and wide passed with -v): the
# sixteen-core limits of docs/perf-notes/cores.md, each figure from the rows of this run.
function scale_targets(   g, c, a, b, k, lim, r, gbps) {
	printf "== scaling targets (--jobs %s against --jobs 1, this run; %d CPUs were offered)\n", wide, ncpu
	printf "  %-58s %-34s %s\n", "target", "figure", "verdict"
	g = "gen-" size; c = cdm
	a = g " default --jobs " wide; b = g " default --jobs 1"
	if (have(a) && have(b)) {
		row("every default output, " g ": <= 2 s", sprintf("%.2f s (%.2f) R=%d", wall[a], med[a], runs[a]), ok(wall[a] <= 2))
		r = wall[b] / wall[a]
		row("every default output, " g ": >= 8x --jobs 1", sprintf("%.2fx (%.2f s / %.2f s)", r, wall[b], wall[a]), ok(r >= 8))
	} else
		row("every default output, " g, "not run", "-")
	a = g " reader+summary --jobs " wide; b = g " reader+summary --jobs 1"
	if (have(a) && have(b)) {
		r = wall[b] / wall[a]
		row("reader + summary, " g ": >= 8x --jobs 1", sprintf("%.2fx (%.3f s / %.3f s)", r, wall[b], wall[a]), ok(r >= 8))
		if (fact["scale " g " bytes"] > 0) {
			gbps = fact["scale " g " bytes"] / wall[a] / 1e9
			row("reader + summary, " g ": >= 5 GB/s of input", sprintf("%.2f GB/s", gbps), ok(gbps >= 5))
		} else
			row("reader + summary, " g ": GB/s of input", "not run", "-")
	} else
		row("reader + summary, " g, "not run", "-")
	a = g " json+sqlite --jobs " wide
	if (have(a))
		row("default + --json --sqlite, " g ": <= 4 s", sprintf("%.2f s (%.2f) R=%d", wall[a], med[a], runs[a]), ok(wall[a] <= 4))
	else
		row("default + --json --sqlite, " g, "not run", "-")
	a = c " default --jobs " wide
	if (have(a))
		row("every default output, " c ": <= 3 s", sprintf("%.2f s (%.2f) R=%d", wall[a], med[a], runs[a]), ok(wall[a] <= 3))
	else
		row("every default output, " c, "not run", "-")
	split(g " default|" g " reader+summary|" c " default|" c " reader+summary", lim, "|")
	for (k = 1; k <= 4; k++) {
		a = lim[k] " --jobs " wide; b = lim[k] " --jobs 1"
		if (have(a) && have(b) && rss[b] > 0)
			row("peak RSS --jobs " wide " vs 1, " lim[k] ": <= 1.3x", sprintf("%.2fx (%.0f / %.0f MiB)", rss[a] / rss[b], rss[a] / 1024, rss[b] / 1024), ok(rss[a] / rss[b] <= 1.3))
		else
			row("peak RSS, " lim[k], "not run", "-")
	}
	for (k = 1; k <= 4; k++) {
		a = k == 1 ? "spin" : k == 2 ? "fresh-memory" : k == 3 ? "memory-reads" : "file-writes"
		r = fact["scale ceiling " a]
		if (r != "")
			row("--jobs " wide " ceiling of this machine, " a, sprintf("%.2fx", r), "(reported)")
	}
	for (k = 1; k <= 2; k++) {
		a = k == 1 ? g : c
		r = fact["scale " a " identical"]
		row("default outputs identical for every --jobs, " a, r == "" ? "not run" : substr(r, 1, 34), r == "" ? "-" : ok(r == "identical"))
	}
}
END {
	if (ARGC > 4)
		job_targets()
	if (only == "job")
		exit
	if (only == "scale") {
		scale_targets()
		exit
	}
	base = "gen-10k reader+summary"
	printf "== scale targets (this run; R = best of R runs, the median in brackets)\n"
	printf "  %-58s %-34s %s\n", "target", "figure", "verdict"
	a = "gen-1M all outputs"
	if (have(a) && (base in rss)) {
		bpc = (rss[a] - rss[base]) * 1024 / cmds[a]
		row("all default outputs, 1M/core: <= 20 s", sprintf("%.2f s (%.2f) R=%d", wall[a], med[a], runs[a]), ok(wall[a] <= 20))
		row("all default outputs, 1M/core: <= 64 B/cmd peak RSS", sprintf("%.1f B/cmd", bpc), ok(bpc <= 64))
	} else
		row("all default outputs, 1M/core", "not run", "-")
	a = "gen-10M all outputs"
	if (have(a))
		row("all default outputs, 10M/core: <= 4 min, <= 2 GB", sprintf("%.1f s, %.2f GB", wall[a], rss[a] * 1024 / 1e9),
		    ok(wall[a] <= 240 && rss[a] * 1024 <= 2e9))
	else
		row("all default outputs, 10M/core", "not run", "-")
	in1 = fact["gen-1M input"]
	split("gen-1M reader+summary (vs cat)|gen-1M reader+summary --jobs 1 (vs cat)", rn, "|")
	for (k = 1; k <= 2; k++) {
		a = rn[k]
		label = k == 1 ? "reader+summary: >= 2 GB/s of input per core (--jobs N)" : "reader+summary: >= 2 GB/s of input per core (--jobs 1)"
		if (have(a) && in1 > 0 && cpu[a] > 0)
			row(label, sprintf("%.2f GB/s/core (%.3f CPU s) R=%d", in1 / cpu[a] / 1e9, cpu[a], runs[a]), ok(in1 / cpu[a] / 1e9 >= 2))
		else
			row(label, "not run", "-")
	}
	a = "gen-1M reader+summary"
	if (have(a) && (base in rss)) {
		bpc = (rss[a] - rss[base]) * 1024 / cmds[a]
		row("reader+summary: <= 64 B/cmd resident", sprintf("%.1f B/cmd", bpc), ok(bpc <= 64))
	} else
		row("reader+summary: <= 64 B/cmd resident", "not run", "-")
	if (("perfetto", "rate") in tb) {
		r = tb["perfetto", "rate"]; m = tb["perfetto", "median"]
		row("Perfetto writer: >= 5 M slices/s (trace_bench, compact)", sprintf("%.2f M/s (%s)", r, m == "" ? "-" : m), ok(r >= 5))
		row("Perfetto writer: <= 16 B/slice (compact)", sprintf("%.2f B/slice", tb["perfetto", "bps"]), ok(tb["perfetto", "bps"] <= 16))
		row("Perfetto writer: peak RSS beyond the model", sprintf("%s MiB", tb["perfetto", "rss"]), "(reported)")
	} else
		row("Perfetto writer (trace_bench)", "not run", "-")
	a = "gen-1M json"; rs = "gen-1M reader+summary"; ev = fact["json-1M events"]
	if (have(a) && have(rs) && ev > 0 && wall[a] > wall[rs]) {
		r = ev / (wall[a] - wall[rs]) / 1e6
		row("Chrome JSON: >= 3 M events/s (CLI, over reader+summary)", sprintf("%.2f M events/s", r), ok(r >= 3))
	} else
		row("Chrome JSON (CLI)", "not run", "-")
	if (("json", "rate") in tb)
		row("Chrome JSON: >= 3 M events/s (trace_bench)", sprintf("%.2f M events/s", tb["json", "rate"]), ok(tb["json", "rate"] >= 3))
	r = fact["sqlite-1M rows/s"]
	if (r != "")
		row("SQLite: >= 1 M rows/s (writer in process)", sprintf("%.2f M rows/s", r), ok(r >= 1))
	else
		row("SQLite writer", "not run", "-")
	# Per phase (scripts/bench.sh phase_bench, bench/phase_table.py): each dump's serial
	# share of the CPU time, its lowest --jobs 2 / --jobs 1 ratio of the reader, the analysis
	# or an output, and the peak RSS of the default conversion with --jobs 16 against 1.
	nph = 0
	for (k in fact)
		if (k ~ /^phases .* serial %$/) {
			d = k; sub(/^phases /, "", d); sub(/ serial %$/, "", d)
			row("serial share of CPU, " d ": <= 5 %", sprintf("%.1f %%", fact[k]), ok(fact[k] <= 5))
			w = fact["phases " d " worst ratio"]
			if (w != "")
				row("--jobs 2 vs 1, every phase of " d ": >= 1.9x", sprintf("%.2fx (%s)", w, fact["phases " d " worst phase"]), ok(w >= 1.9))
			# The machine's own ratio for each phase's work (copies of --jobs 1 run at once)
			# and how much of it --jobs 2 got: what part of a missed ratio is ours.
			w = fact["phases " d " copies lowest"]
			if (w != "") {
				n = fact["phases " d " copies n"]
				row(n " copies of --jobs 1 at once, lowest phase of " d, sprintf("%.2fx (%s)", w, fact["phases " d " copies lowest phase"]), "(reported)")
				w = fact["phases " d " of copies"]
				row("--jobs 2 / " n " copies' ratio, lowest phase of " d, sprintf("%.0f %% (%s)", 100 * w, fact["phases " d " of copies phase"]), "(reported)")
			}
			for (i = 1; i <= 2; i++) {
				ph = i == 1 ? "read" : "total"
				w = fact["phases " d " max16 " ph]
				if (w != "")
					row("16 threads, " ph " of " d ": at most (structure)", sprintf("%.1fx", w), "(reported)")
			}
			m1 = fact["phases " d " rss j1 KiB"]; m16 = fact["phases " d " rss j16 KiB"]
			if (m1 > 0 && m16 != "")
				row("peak RSS --jobs 16 vs 1, " d ": <= 1.3x", sprintf("%.2fx (%.0f / %.0f MiB)", m16 / m1, m16 / 1024, m1 / 1024), ok(m16 / m1 <= 1.3))
			nph++
		}
	if (!nph)
		row("per-phase serial share and --jobs 2 ratio", "not run", "-")
	else
		for (i = 1; i <= 4; i++) {
			c = i == 1 ? "spin" : i == 2 ? "fresh-memory" : i == 3 ? "memory-reads" : "file-writes"
			b = fact["phases ceiling " c " before"]; e = fact["phases ceiling " c " after"]
			if (b != "" && e != "")
				row("--jobs 2 ceiling of this machine, " c, sprintf("%.2fx before, %.2fx after", b, e), "(reported)")
		}
	a = "gen-1M xlsx --xlsx_rows all"; b = "bare libxlsxwriter, census of gen-1M"
	if (have(a) && have(b) && wall[b] > 0)
		row("xlsx: within 1.5x of bare libxlsxwriter (same cells)", sprintf("%.2fx", wall[a] / wall[b]), ok(wall[a] / wall[b] <= 1.5))
	else
		row("xlsx vs bare libxlsxwriter", "not run", "-")
}
