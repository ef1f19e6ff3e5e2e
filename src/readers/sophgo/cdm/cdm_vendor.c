/*
 * cdm_vendor.c — the vendor's own summary figures of a cdm dump (tpu-mlir PerfAI /
 * tpu_profile.py): its per-core timeline (each DMA stream shifted onto the TIU anchor), with
 * the dependency evidence for the note, and its summary rows (working cycles, bandwidths,
 * spans) handed over in profile->vendor. Kept beside the reader for now; these are analysis
 * figures computed from the model.
 */
#include "readers/sophgo/cdm/cdm_int.h"

#include "analysis/deps_check.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The ends of core c's matched GDMA commands sorted by id (*out, caller frees; NULL when the
 * core lacks a TIU or GDMA track or memory ran out: the note is optional). The ids of a
 * stream are usually already in order: then no sort (the stable sort would not move
 * anything either). */
static size_t dep_ends(struct cdm_rd *r, size_t c, struct tp_id_end **out)
{
	*out = NULL;
	int tt = r->ci[c].track[CDM_TIU], gt = r->ci[c].track[CDM_GDMA];
	if (tt < 0 || gt < 0)
		return 0;
	const struct tp_track *g = &r->p->tracks[gt];
	uint32_t unknown = tp_profile_find_str(r->p, "unknown");
	struct tp_id_end *v = tp_malloc((g->count + 1) * sizeof *v);
	if (!v)
		return 0;
	size_t m = 0;
	int in_order = 1;
	for (size_t i = 0; i < g->count; i++)
		if (tp_slice_name(g, &g->slices[i]) != unknown) {
			v[m] =
			    (struct tp_id_end){g->slices[i].cmd_id, tp_slice_end(g, &g->slices[i])};
			if (m && v[m - 1].id > v[m].id)
				in_order = 0;
			m++;
		}
	if (!in_order)
		qsort(v, m, sizeof *v, tp_id_end_cmp);
	*out = v;
	return m;
}

/* Counts the TIU commands of core `c` with a cmd_id_dep on a GDMA command (identified by a
 * unique id among the matched GDMA commands, v[0..m) from dep_ends) and those that start
 * before that GDMA command ends, as recorded (*bad_rec) and with each engine shifted by
 * `shift` cycles (*bad_shift). Raw-cycle phase (cmd_id = inst_id). */
static void dep_check(struct cdm_rd *r, size_t c, const struct tp_id_end *v, size_t m,
                      const int64_t *shift, uint64_t *n, uint64_t *bad_rec, uint64_t *bad_shift)
{
	*n = *bad_rec = *bad_shift = 0;
	if (!v)
		return;
	const struct tp_track *t = &r->p->tracks[r->ci[c].track[CDM_TIU]];
	uint32_t unknown = tp_profile_find_str(r->p, "unknown");
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (!s->dep_id || tp_slice_name(t, s) == unknown)
			continue;
		struct tp_id_end key = {s->dep_id - 1, 0};
		const struct tp_id_end *hit = bsearch(&key, v, m, sizeof *v, tp_id_end_cmp);
		if (!hit || (hit > v && hit[-1].id == key.id) ||
		    (hit + 1 < v + m && hit[1].id == key.id))
			continue;
		(*n)++;
		if (s->start_ns < hit->end)
			(*bad_rec)++;
		if (s->start_ns + shift[CDM_TIU] < hit->end + shift[CDM_GDMA])
			(*bad_shift)++;
	}
}

/* The vendor's timeline of core c (tpu-mlir PerfAI / tpu_profile.py, sophgo-cdm.md §8.2 step
 * 4, the April-2025 variant): each DMA stream shifted so that its second init record ends at
 * the TIU anchor. Records its span the two ways the vendor's outputs take it and the
 * dependency evidence for the note; runs on raw cycles before the sys commands are omitted. */
void cdm_vendor_timeline(struct cdm_rd *r, size_t c, const int64_t *lo, const int64_t *hi)
{
	struct cdm_core_info *ci = &r->ci[c];
	int64_t vz = INT64_MAX, vt = INT64_MIN, oz = INT64_MAX, ot = INT64_MIN;
	int64_t last_listed = INT64_MIN; /* shifted end of the last record of the last engine list
	                                    (TIU, GDMA, SDMA order) */
	if (!ci->have_anchor)
		return;
	for (int e = 0; e < 3; e++)
		ci->v_sh[e] = e && ci->have_init[e] ? ci->anchor - ci->init_end[e] : 0;
	/* A shift moves a track's first start and last end with it: the spans come from lo and
	 * hi, without another pass over the slices. */
	for (int e = 0; e < 3; e++) {
		int t = ci->track[e];
		if (t < 0 || !r->p->tracks[t].count)
			continue;
		const struct tp_track *x = &r->p->tracks[t];
		int64_t sh = ci->v_sh[e];
		vz = lo[t] + sh < vz ? lo[t] + sh : vz;
		vt = hi[t] + sh > vt ? hi[t] + sh : vt;
		oz = lo[t] < oz ? lo[t] : oz;
		ot = hi[t] > ot ? hi[t] : ot;
		last_listed = tp_slice_end(x, &x->slices[x->count - 1]) + sh;
	}
	if (vz == INT64_MAX)
		return;
	ci->have_v = 1;
	ci->v_span = last_listed - vz;
	ci->v_latest = vt - vz;
	ci->hw_span = ot - oz;
	struct tp_id_end *v;
	size_t m = dep_ends(r, c, &v);
	dep_check(r, c, v, m, ci->v_sh, &ci->dep_n, &ci->dep_bad_rec, &ci->dep_bad_shift);
	tp_free(v);
}

static double gbps(uint64_t bytes, uint64_t cyc, double mhz)
{
	int64_t ns = tp_cycles_to_ns(cyc, mhz);
	return ns > 0 ? (double)bytes / (double)ns : 0;
}

/* What vendor_rows takes from one engine's track, in one pass: its working cycles (Σ Asic
 * Cycle without wait_msg: the vendor's totalTiuCycle / totalGdmaCycle / ...) and the bandwidth
 * of its commands whose direction names DDR (gbps_of[0]) or, failing that, L2 (gbps_of[1]),
 * the way tpu-mlir's web summary counts them (costmodel §5 item 10, with the BM1690 DDR/L2M
 * split of item 8): non-sys commands, zero-byte ones included, and records without a command
 * as DDR->LMEM, the label tpu-mlir gives them. */
static void engine_pass(const struct tp_track *g, uint32_t unknown, uint64_t *cyc,
                        double gbps_of[2])
{
	uint64_t work = 0, bytes[2] = {0, 0}, in[2] = {0, 0};
	for (size_t i = 0; i < g->count; i++) {
		const struct tp_slice *s = &g->slices[i];
		const struct tp_label *l = tp_slice_label(g, s);
		if (l->kind != TP_CMD_SYS_WAIT)
			work += s->cycles;
		if (l->name != unknown && l->kind != TP_CMD_NORMAL)
			continue;
		enum tp_dir d = l->name == unknown ? TP_DIR_DDR_TO_LMEM : (enum tp_dir)l->dir;
		int k = tp_dir_touches_ddr(d) ? 0 : tp_dir_touches_l2(d) ? 1 : -1;
		if (k >= 0) {
			bytes[k] += tp_slice_bytes(g, s);
			in[k] += s->cycles;
		}
	}
	*cyc = work;
	gbps_of[0] = gbps(bytes[0], in[0], g->freq_mhz);
	gbps_of[1] = gbps(bytes[1], in[1], g->freq_mhz);
}

/* Each engine's pass for vendor_rows, for every core at once: reads only. */
struct vendor_pass {
	uint64_t cyc[3];
	double gbps[3][2]; /* by engine: DDR, L2 */
};

struct vendor_par {
	struct cdm_rd *r;
	struct vendor_pass *v;
};

/* Engine k % 3 of core k / 3. */
static void vendor_par_one(void *arg, size_t k)
{
	struct vendor_par *a = arg;
	struct cdm_rd *r = a->r;
	size_t c = k / 3;
	int e = (int)(k % 3);
	const struct cdm_core_info *ci = &r->ci[c];
	if (!ci->have_v || ci->track[e] < 0)
		return;
	engine_pass(&r->p->tracks[ci->track[e]], tp_profile_find_str(r->p, "unknown"),
	            &a->v[c].cyc[e], a->v[c].gbps[e]);
}

/* The notes on core c's vendor figures that differ from tpuprof's (totalTime and the ratios
 * over it, the DMA bandwidths), each saying how and why; ns[]: its engines' working times. */
static void vendor_notes(struct cdm_rd *r, size_t c, const struct tp_vendor_row *v,
                         const int64_t ns[3])
{
	const struct cdm_core_info *ci = &r->ci[c];
	double total = (double)v->total_time_ns;
	if (ci->v_span != ci->hw_span || ci->v_sh[1] || ci->v_sh[2]) {
		char ev[160] = "";
		if (ci->dep_n)
			snprintf(ev, sizeof ev,
			         " (then %llu of %llu TIU commands would start before the GDMA "
			         "command they wait on (cmd_id_dep) ends; as recorded, %llu do)",
			         (unsigned long long)ci->dep_bad_shift,
			         (unsigned long long)ci->dep_n,
			         (unsigned long long)ci->dep_bad_rec);
		double us_hw = (double)tp_cycles_to_ns((uint64_t)ci->hw_span, r->tiu_mhz) / 1e3;
		double us_wb = (double)tp_cycles_to_ns((uint64_t)ci->v_latest, r->tiu_mhz) / 1e3;
		tp_profile_note(r->p,
		                "totalTime, core %zu: tpuprof keeps the engines on the one cycle "
		                "counter they share (core span %.3f us as recorded); "
		                "tpu_profile.py's %.3f us shifts GDMA by %+lld and SDMA by %+lld "
		                "cycles onto the TIU init handshake%s and ends at the last record "
		                "of its last engine list, not the latest end; its workbook's "
		                "%.3f us is that shifted span to the latest end",
		                c, us_hw, total / 1e3, (long long)ci->v_sh[1],
		                (long long)ci->v_sh[2], ev, us_wb);
	}
	if (v->short_span) {
		int e = ns[0] >= ns[1] ? 0 : 1;
		tp_profile_note(
		    r->p,
		    "TiuWorkingRatio, Parallelism, core %zu: not shown for tpu_profile.py: "
		    "its totalTime (%.3f us, see totalTime) is shorter than what %s alone "
		    "worked on the core (%.3f us), so a ratio over it means nothing",
		    c, total / 1e3, e ? "GDMA" : "TIU", (double)ns[e] / 1e3);
	} else if (ci->v_span != ci->hw_span || ci->v_sh[1] || ci->v_sh[2]) {
		tp_profile_note(r->p,
		                "TiuWorkingRatio, core %zu: tpu_profile.py's %.2f%% is the same "
		                "totalTiuCycle over its totalTime (see totalTime)",
		                c, v->tiu_working_ratio * 100);
		tp_profile_note(r->p,
		                "Parallelism, core %zu: tpu_profile.py's %.2f%% is the same TIU + "
		                "GDMA + SDMA working cycles over its totalTime (see totalTime)",
		                c, v->parallelism * 100);
	}
	static const char *const col[3] = {"", "GdmaDdrAvgBW", "SdmaDdrAvgBW"};
	const double bw[3] = {0, v->gdma_ddr_gbps, v->sdma_ddr_gbps};
	for (int e = CDM_GDMA; e <= CDM_SDMA; e++)
		if (ci->unmatched[e] && ci->unmatched_bytes[e] && r->mode != 0)
			tp_profile_note(
			    r->p,
			    "%s, core %zu: tpuprof counts the commands with a descriptor "
			    "only; tpu_profile.py's %.2f GB/s also counts the %llu PMU "
			    "records outside the command stream (runtime input/output "
			    "copies, profiler sync; %llu bytes) as DDR->LMEM, although "
			    "their counters show no local-memory write: tpuprof names "
			    "them unknown, with no direction",
			    col[e], c, bw[e], (unsigned long long)ci->unmatched[e],
			    (unsigned long long)ci->unmatched_bytes[e]);
}

/* The figures tpu_profile.py prints for each core (its summary, not its workbook), computed
 * from its timeline and its direction labels, with one note per figure that differs from
 * tpuprof's own and why. Runs after finalize. */
int cdm_vendor_rows(struct cdm_rd *r)
{
	struct vendor_par a = {.r = r, .v = tp_calloc(r->ncores + 1, sizeof *a.v)};
	if (!a.v)
		return cdm_nomem(r);
	tp_par_run(r->jobs, 3 * r->ncores, vendor_par_one, &a);
	for (size_t c = 0; c < r->ncores; c++) {
		const struct cdm_core_info *ci = &r->ci[c];
		if (!ci->have_v)
			continue;
		struct tp_vendor_row *v =
		    tp_profile_vendor_row(r->p, "tpu_profile.py", r->device, (int32_t)c);
		if (!v) {
			tp_free(a.v);
			return cdm_nomem(r);
		}
		int64_t ns[3] = {0, 0, 0};
		uint64_t *cyc[3] = {&v->tiu_cycle, &v->gdma_cycle, &v->sdma_cycle};
		for (int e = 0; e < 3; e++) {
			if (ci->track[e] < 0)
				continue;
			const struct tp_track *t = &r->p->tracks[ci->track[e]];
			v->records[e] = t->count;
			*cyc[e] = a.v[c].cyc[e];
			ns[e] = tp_cycles_to_ns(*cyc[e], t->freq_mhz);
		}
		for (unsigned port = 0; port < CDM_MAX_PORTS; port++)
			if (r->port[port].track >= 0 && r->port[port].owner == (int)c)
				v->records[TP_TRACK_CDMA] +=
				    r->p->tracks[r->port[port].track].count;
		v->total_time_ns = tp_cycles_to_ns((uint64_t)ci->v_span, r->tiu_mhz);
		double total = (double)v->total_time_ns;
		/* TIU and GDMA each run one command at a time (SDMA has two threads), so neither
		 * can work longer than the core's span. A totalTime shorter than that ends early:
		 * its last engine list ended long before the others. */
		v->short_span =
		    v->total_time_ns <= 0 || ns[0] > v->total_time_ns || ns[1] > v->total_time_ns;
		v->tiu_working_ratio = total > 0 ? (double)ns[0] / total : 0;
		v->parallelism = total > 0 ? (double)(ns[0] + ns[1] + ns[2]) / total : 0;
		v->gdma_ddr_gbps = a.v[c].gbps[CDM_GDMA][0];
		v->gdma_l2_gbps = a.v[c].gbps[CDM_GDMA][1];
		v->sdma_ddr_gbps = a.v[c].gbps[CDM_SDMA][0];
		vendor_notes(r, c, v, ns);
	}
	tp_free(a.v);
	return TP_OK;
}
