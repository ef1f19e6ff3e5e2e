/*
 * refnames.c — the reference-naming policy shared by the trace writers: a model slice's
 * arguments under the keys the vendor's reference tools print (Function Type, Cmd Id,
 * des_cmd_id_dep, DDR Bandwidth(GB/s), ...), which of them the compact and the full set carry,
 * and which of a reader's own values win over the derived ones; plus tp_sink_fmt_real, the one
 * real-number formatting of the text writers, so JSON and SQLite display values agree.
 *
 * Owns nothing: the arguments point into the profile (sink.h: tp_sink_fill_args).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/argkeys.h"
#include "writers/sink/sink_int.h"

static struct tp_sink_arg *arg_slot(struct tp_sink_slice *o, const char *key, enum tp_arg_type t)
{
	if (o->num_args >= TP_SINK_MAX_ARGS)
		return NULL;
	struct tp_sink_arg *a = &o->args[o->num_args++];
	*a = (struct tp_sink_arg){.key = key, .type = t};
	return a;
}

static void arg_uint(struct tp_sink_slice *o, const char *key, uint64_t v)
{
	struct tp_sink_arg *a = arg_slot(o, key, TP_ARG_UINT);
	if (a) {
		a->u = v;
		a->i = (int64_t)v;
	}
}

static void arg_int(struct tp_sink_slice *o, const char *key, int64_t v)
{
	struct tp_sink_arg *a = arg_slot(o, key, TP_ARG_INT);
	if (a)
		a->i = v;
}

static void arg_real(struct tp_sink_slice *o, const char *key, double v)
{
	struct tp_sink_arg *a = arg_slot(o, key, TP_ARG_REAL);
	if (a)
		a->d = v;
}

static void arg_str(struct tp_sink_slice *o, const char *key, const char *v)
{
	struct tp_sink_arg *a = arg_slot(o, key, TP_ARG_STR);
	if (a)
		a->s = v ? v : "";
}

/* Reference PerfAI rounds per-command bandwidth to 4 decimals (sophgo-analysis.md §2.3). */
static double round4(double v)
{
	if (!isfinite(v))
		return 0;
	return round(v * 1e4) / 1e4;
}

/* The layer of a slice, by name: Layer Id, Layer Type, Layer Name. */
static void layer_args(const struct tp_profile *p, const struct tp_layer *l,
                       struct tp_sink_slice *out, struct scache *sc)
{
	arg_int(out, "Layer Id", l->id);
	if (l->type)
		arg_str(out, "Layer Type", cstr(p, sc, l->type));
	if (l->name)
		arg_str(out, "Layer Name", cstr(p, sc, l->name));
}

/* The generated arguments of an engine command (layer l decoded, or NULL). */
static void command_args(const struct tp_profile *p, const struct tp_track *t,
                         const struct tp_slice *s, int full, const struct tp_layer *l,
                         int has_layer, struct tp_sink_slice *out, struct scache *sc)
{
	enum tp_track_kind k = (enum tp_track_kind)t->kind;
	/* Keys spelled as the reference exporter (sophgo-analysis.md §7.2). Fields that change
	 * slowly from one command to the next come first and the ones that change every command
	 * last: in the compressed Perfetto trace a run of unchanged annotations then costs one
	 * back-reference instead of one per field. */
	const struct tp_label *lb = tp_slice_label(t, s);
	int sys = lb->kind != TP_CMD_NORMAL, dma = tp_track_kind_is_dma(k);
	enum tp_dir dir = (enum tp_dir)lb->dir;
	if (full)
		arg_str(out, TP_KEY_FUNCTION_NAME, cstr(p, sc, lb->name));
	if (lb->type)
		arg_str(out, TP_KEY_FUNCTION_TYPE, cstr(p, sc, lb->type));
	if (dma && !sys && dir != TP_DIR_NONE)
		arg_str(out, "Direction", tp_dir_name(dir));
	if (lb->dtype)
		arg_str(out, TP_KEY_DATA_TYPE, tp_dtype_name((enum tp_dtype)lb->dtype));
	if (l) {
		layer_args(p, l, out, sc);
	} else if (has_layer) {
		/* The compact set names the layer by id only: no decode. */
		arg_int(out, "Layer Id", tp_profile_layer_id(p, (size_t)s->layer));
	}
	if (s->cmd_id)
		arg_uint(out, "Cmd Id", s->cmd_id);
	if (s->dep_id)
		arg_uint(out, k == TP_TRACK_TIU ? TP_KEY_TIU_DEP : TP_KEY_DMA_DEP, s->dep_id);
	if (full && s >= t->slices && s < t->slices + t->count)
		arg_uint(out, TP_KEY_GLOBAL_IDX, tp_slice_global_idx(t, s));
	if (full && s->cycles) {
		arg_uint(out, "Start Cycle", tp_slice_start_cycle(t, s));
		arg_uint(out, "End Cycle", tp_slice_end_cycle(t, s));
		arg_uint(out, "Asic Cycle", s->cycles);
	}
	if (dma && !sys) {
		double bw = round4(tp_slice_gbps(t, s, t->freq_mhz));
		arg_uint(out, TP_KEY_DMA_SIZE, tp_slice_bytes(t, s));
		/* Mode-1 data has no direction: the reference then reports the bandwidth as DDR
		 * bandwidth. */
		arg_real(out, TP_KEY_DDR_BW,
		         dir == TP_DIR_NONE || tp_dir_touches_ddr(dir) ? bw : 0.0);
		if (tp_dir_touches_l2(dir))
			arg_real(out, TP_KEY_L2_BW, bw);
	}
	if (lb->stall && (dma ? !sys : 1))
		arg_uint(out, TP_KEY_STALL_CYCLE, lb->stall);
}

/* Generated argument g takes the reader's value of the same key where the reader knows
 * better: its "Data Type" is the more precise one (TIU "A -> B", costmodel §4), and so are its
 * dependency registers and bandwidth columns (BM1690 puts a DDR<->L2M move under DDR only,
 * bm1690_defs.py::get_dma_info). */
static void prefer_reader(const struct tp_profile *p, const char *key, const struct tp_arg *a,
                          struct tp_sink_arg *g, struct scache *sc)
{
	if (a->type == TP_ARG_STR && g->type == TP_ARG_STR && strcmp(key, TP_KEY_DATA_TYPE) == 0)
		g->s = cstr(p, sc, a->v.s);
	if (a->type == TP_ARG_REAL && g->type == TP_ARG_REAL &&
	    (strcmp(key, TP_KEY_DDR_BW) == 0 || strcmp(key, TP_KEY_L2_BW) == 0))
		g->d = a->v.d;
	/* The register's full value (BM1690 sets bit 20 above the partner's id). */
	if (a->type == TP_ARG_UINT && g->type == TP_ARG_UINT &&
	    (strcmp(key, TP_KEY_TIU_DEP) == 0 || strcmp(key, TP_KEY_DMA_DEP) == 0)) {
		g->u = a->v.u;
		g->i = (int64_t)a->v.u;
	}
}

/* Appends the slice's argset after the generated arguments; a key already generated keeps
 * one value (prefer_reader). */
static void argset_args(const struct tp_profile *p, const struct tp_slice *s,
                        struct tp_sink_slice *out, struct scache *sc)
{
	size_t n = 0, generated = out->num_args;
	const struct tp_arg *a = tp_args_get(p, s->args, &n);
	for (size_t i = 0; a && i < n; i++) {
		const char *key = cstr(p, sc, a[i].key);
		size_t g = 0;
		while (g < generated && strcmp(out->args[g].key, key) != 0)
			g++;
		if (g < generated) {
			prefer_reader(p, key, &a[i], &out->args[g], sc);
			continue;
		}
		switch (a[i].type) {
		case TP_ARG_INT:
			arg_int(out, key, a[i].v.i);
			break;
		case TP_ARG_UINT:
			arg_uint(out, key, a[i].v.u);
			break;
		case TP_ARG_REAL:
			arg_real(out, key, a[i].v.d);
			break;
		default:
			arg_str(out, key, cstr(p, sc, a[i].v.s));
			break;
		}
	}
}

void tp_sink_fill_args_cached(const struct tp_profile *p, const struct tp_track *t,
                              const struct tp_slice *s, int full, struct tp_sink_slice *out,
                              struct tp_layer_memo *memo, struct scache *sc)
{
	out->num_args = 0;
	enum tp_track_kind k = (enum tp_track_kind)t->kind;
	int engine = k != TP_TRACK_THREAD && k != TP_TRACK_HOST && k != TP_TRACK_LAYER;
	struct tp_layer ly;
	int has_layer = s->layer >= 0 && (size_t)s->layer < p->num_layers;
	const struct tp_layer *l = NULL;
	if (has_layer && (full || !engine))
		l = memo ? tp_layer_memo_get(p, memo, (size_t)s->layer)
		         : tp_profile_layer(p, (size_t)s->layer, &ly);
	if (engine)
		command_args(p, t, s, full, l, has_layer, out, sc);
	else if (l) /* Layer slices (and captured slices tied to a layer) name their layer fully */
		layer_args(p, l, out, sc);
	argset_args(p, s, out, sc);
}

void tp_sink_fill_args(const struct tp_profile *p, const struct tp_track *t,
                       const struct tp_slice *s, int full, struct tp_sink_slice *out)
{
	tp_sink_fill_args_cached(p, t, s, full, out, NULL, NULL);
}

size_t tp_sink_fmt_real(char *out, size_t n, double v)
{
	if (n == 0)
		return 0;
	if (!isfinite(v)) {
		const char *t = isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
		snprintf(out, n, "%s", t);
		return strlen(out);
	}
	if (v == 0)
		v = 0; /* -0.0 prints as 0 */
	/* Fast path for values with at most 4 decimals (bandwidths and counters are rounded to
	 * 4): when v is the double nearest to R / 10^4 for an integer R below 10^13, "%.15g"
	 * prints exactly that decimal (v is within half an ulp of it, far less than half a unit
	 * of the 15th digit), trailing zeros dropped, and it reads back as v. */
	double r = round(v * 1e4);
	if (n >= 32 && fabs(v) < 1e9 && r / 1e4 == v) {
		uint64_t m = (uint64_t)fabs(r), ip = m / 10000;
		unsigned fp = (unsigned)(m % 10000);
		char tmp[24], *q = tmp + sizeof tmp, *o = out;
		do {
			*--q = (char)('0' + ip % 10);
			ip /= 10;
		} while (ip);
		if (v < 0)
			*o++ = '-';
		memcpy(o, q, (size_t)(tmp + sizeof tmp - q));
		o += tmp + sizeof tmp - q;
		if (fp) {
			*o++ = '.';
			for (unsigned d = 1000; fp; d /= 10) {
				*o++ = (char)('0' + fp / d);
				fp %= d;
			}
		}
		*o = 0;
		return (size_t)(o - out);
	}
	int k = snprintf(out, n, "%.15g", v);
	if (k > 0 && (size_t)k < n && strtod(out, NULL) != v)
		k = snprintf(out, n, "%.17g", v);
	/* Some C libraries honour LC_NUMERIC; the project never sets a locale, but make sure. */
	for (char *q = out; *q; q++)
		if (*q == ',')
			*q = '.';
	return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}
