/*
 * html_int.h — private to src/writers/html: the state shared by result.html's writer files:
 * html.c (page template, head, driver), html_cols.c (output buffer, JSON values, binary
 * integer columns, string table), html_par.c (the data as parts written on --jobs threads),
 * html_lanes.c (timeline lanes, per-command values, level of detail), html_args.c (argument
 * sets), html_data.c (analysis, layers, memory records), html_ltab.c (the layer table) and
 * html_capture.c (what only a capture's page holds).
 */
#ifndef TP_HTML_INT_H
#define TP_HTML_INT_H

#include "writers/html/html.h"

#include <stdio.h>

/* ---- Output buffer and JSON values (html_cols.c) ---- */

struct out {
	struct tp_buf b;
	struct tp_afile *f; /* the page's file (a write failure's reason stays in it) */
	int err;
};

/* Writes the buffer to the file once it holds enough (or always with `force`); an allocation
 * or write failure sets o->err. */
void html_flush(struct out *o, int force);
/* An unsigned integer (as a string beyond 2^53, which JavaScript would round). */
void html_put_u64(struct tp_buf *b, uint64_t v);
/* A real in fixed notation with up to 6 decimals, trailing zeros trimmed; null if not finite. */
void html_put_real(struct tp_buf *b, double v);
/* A JSON string ("" for NULL). */
void html_put_str(struct tp_buf *b, const char *s);

/* ---- Binary integer columns (html_cols.c) ---- */

/* Values beyond +-COL_LIM are clamped. */
#define COL_LIM ((int64_t)1 << 51)

typedef int64_t (*col_get_fn)(void *u, size_t i);

/* Writes ,"KEY":"<mode><base64>" for the values get(u, 0..n-1), or for v[0..n-1]. */
void html_put_col(struct out *o, const char *key, size_t n, col_get_fn get, void *u);
void html_put_col_vals(struct out *o, const char *key, size_t n, const int32_t *v);
/* v[0..n-1] = get(u, 0..n-1) for html_put_col_vals: 1, or 0 (v unusable) as soon as a value
 * does not fit 32 bits. */
int html_fill_col(int32_t *v, size_t n, col_get_fn get, void *u);

/* ---- String table: only the profile strings the page uses, numbered in first-use order
 * (html_cols.c) ---- */

/* The profile strings one part of the page uses, in first-use order, each once (seen: one bit
 * per profile string, cleared again after the part). */
struct strrec {
	uint32_t *ids;
	size_t n, cap;
	uint64_t *seen;
	int oom;
};

struct strmap {
	uint32_t *idx; /* profile string id -> page index + 1, 0 = not yet used */
	uint32_t *inv; /* page index -> profile string id (nprof entries) */
	size_t n, nprof;
	struct strrec *rec; /* set: html_smap records the string instead of numbering it */
	int frozen;         /* every string is numbered: html_smap only reads idx ... */
	int *miss;          /* ... and sets *miss (atomically) for one that is not */
};

/* The page index of profile string `id`, numbering it on first use (0 while recording). */
uint32_t html_smap(struct strmap *m, uint32_t id);

/* ---- The data as parts written on --jobs threads (html_par.c) ---- */

struct ctx;
struct part;
typedef void (*part_fn)(struct ctx *c, const struct part *pt);

/* One piece of the page's data, written by fn into c->o.b (or a find: the strings it uses,
 * recorded by html_smap). */
struct part {
	part_fn fn;
	const void *u; /* what it writes: a lane, a section's plan */
	size_t a, b;   /* rows [a, b) */
	int k;         /* a column, a stream, a lane index */
};

struct parts {
	struct part *v;
	size_t n, cap;
	int oom;
};

/* Rows per find, per range of a lane's commands, per part of a long section. */
#define HTML_ROWS_PART 16384
/* html_parts_write: a part used a string no find recorded (a bug; positive, not a TP_ code). */
#define HTML_EMISS 1

/* html_parts_write's memory budgets in bytes, fixed whatever the thread count (html_par.c):
 * finished parts waiting for an earlier one, written buffers kept, column buffers lent. A page
 * takes html_budgets_default; the unit test lowers them (html_write_file) to run the waits and
 * the fallbacks. */
struct html_budgets {
	size_t held, pool, vals;
};
extern const struct html_budgets html_budgets_default;
/* tp_html_write_file with the given budgets in place of html_budgets_default. */
int html_write_file(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                    size_t max_cores, unsigned jobs, const struct html_budgets *budgets,
                    struct tp_diag *d);

void html_part_add(struct parts *ps, part_fn fn, const void *u, size_t a, size_t b, int k);
/* Writes the parts to c->o in order. A capture's page (c->cap): on this thread, html_smap
 * numbering as it goes. Else the finds, in page order, record the strings they use on c->jobs
 * threads; those are numbered in that order (also on the threads); then the parts are written on
 * c->jobs threads, each into its own buffer, to the file in order. TP_OK, TP_ENOMEM, TP_EOUTPUT or
 * HTML_EMISS. */
int html_parts_write(struct ctx *c, const struct parts *finds, const struct parts *ps);

/* A column buffer for n values (one column of a lane or of the layer table, computed once
 * for the "same value" check and html_put_col's two passes), or NULL: n is 0 or more than
 * c->cap_vals, or none is free. A part's buffer is lent from a set whose size is fixed by a
 * byte budget, not by the thread count (html_par.c); without one the column is computed
 * again for each pass (same bytes). */
int32_t *html_vals(struct ctx *c, size_t n);

/* Rows [a, b) of one lane: the lanes' commands in ranges of HTML_ROWS_PART. */
struct html_lrange {
	const struct lane *l;
	size_t a, b;
};
/* *out (owned) = the ranges of lanes[0..nl) in order; returns their count (*out NULL: out of
 * memory). */
size_t html_lane_ranges(const struct lane *lanes, size_t nl, struct html_lrange **out);

/* ---- Arch facts the page needs that the model does not carry ---- */

struct arch_facts {
	double ddr_max_gbps; /* per-core DDR peak, scale of DMA block heights; 0 = use max seen */
	uint32_t lane_bytes; /* local memory of one NPU lane */
	uint32_t banks;      /* banks per lane */
	uint32_t npus;       /* lanes */
};

static inline struct arch_facts html_facts_of(const struct tp_chip *c)
{
	/* The chip table (src/readers/sophgo/chip.c) holds these constants with their sources. */
	struct arch_facts f = {0, 0, 0, 0};
	if (c) {
		f.ddr_max_gbps = c->ddr_max_gbps;
		f.lane_bytes = c->lane_bytes;
		f.banks = c->banks;
		f.npus = c->npu_num;
	}
	return f;
}

/* ---- Lanes (html_lanes.c) ---- */

struct lane {
	int track; /* profile track index, -1 for a lane made from layers */
	int kind;  /* enum tp_track_kind */
	int32_t device, core;
	const struct tp_slice *s; /* the track's slices, or NULL for a lane made from layers */
	size_t n;
	uint32_t *lay;              /* lane made from layers: owned layer indexes in slice
	                               order (4 bytes a layer; lane_at builds each slice) ... */
	struct lwalk *walk;         /* ... or, when the table lists them nearly in that order,
	                               owned: lane_at's walk of the table (tp_walk) */
	struct tp_layer_memo *memo; /* lane made from layers: owned (lane_label and height_of
	                               of one slice decode its layer once; lane_at and lane_end
	                               read only the span) */
	double mhz;
	const char *label;
};

struct html_cap; /* html_capture.c: what only a capture's page holds */

struct keys {
	uint32_t uarch_rate, alg_ops, uarch_ops; /* 0 = key absent from the profile */
};

/* One page being written. */
struct ctx {
	const struct tp_profile *p;
	const struct tp_analysis *a;
	struct out o;
	struct strmap sm;
	struct keys k;
	uint32_t *argmap; /* profile argset id -> page index + 1 (0 = not embedded) */
	size_t num_argsets_out, args_dropped;
	double bw_scale;
	int64_t t0;     /* span start: page times are relative to it */
	double bw_seen; /* html_bw_max_seen */
	size_t max_cores;
	unsigned jobs;
	struct tp_layer_memo *memo; /* lanes made from layers read their layers through it */
	struct html_mem *mem;       /* html_mem_plan: the memory records */
	struct html_args *args;     /* html_args_plan: the argument sets' shapes */
	int32_t *vals; /* a column buffer of cap_vals entries (4 bytes a layer: sized for the
	                  layer table, used for every lane that fits; a column with a value
	                  beyond 32 bits does without), or NULL: see html_vals */
	size_t cap_vals;
	struct html_run *run; /* html_par.c: the run a part belongs to (lends column buffers) */
	struct html_budgets budgets; /* html_parts_write's */
	struct html_cap *cap;        /* owned; NULL unless the page is a capture's (html_cap_new) */
};

/* Collects the lanes to show into *out (owned, free with html_lanes_free): engine tracks per
 * (device, core) in display order, a Layer lane built from the layer table where the reader
 * made none (built on `jobs` threads), then host / thread tracks. TP_OK or TP_ENOMEM. */
int html_collect_lanes(const struct tp_profile *p, size_t max_cores, unsigned jobs,
                       struct lane **out, size_t *nout);
void html_lanes_free(struct lane *lanes, size_t n);
/* *seen = the highest bandwidth (GB/s) of a normal command on the DMA lanes (on up to `jobs`
 * threads). TP_OK or TP_ENOMEM. */
int html_bw_max_seen(const struct tp_profile *p, unsigned jobs, const struct lane *lanes, size_t nl,
                     double *seen);
/* views[i] (owned, with ords[i] when not NULL) = lanes[i] as its parts read it: a lane made
 * from layers with its layer indexes in slice order in ords[i] (4 bytes a layer). On up to
 * `jobs` threads. TP_OK or TP_ENOMEM (free what was made anyway). */
int html_lane_views(unsigned jobs, const struct lane *lanes, size_t nl, struct lane **views,
                    uint32_t ***ords);
/* The parts of lane object number idx, view (from html_lane_views): its facts and level of
 * detail, then one part per column; and the finds of the strings it uses. */
void html_lane_parts(const struct lane *view, size_t idx, struct parts *finds, struct parts *ps);

/* ---- Data sections (html_args.c, html_data.c) ---- */

/* Chooses which argument sets to embed and fills c->argmap. TP_OK or TP_ENOMEM. */
int html_plan_args(struct ctx *c, const struct lane *lanes, size_t nl);
/* Makes c->args: the shape of each embedded set (on c->jobs threads). TP_OK or TP_ENOMEM. */
int html_args_plan(struct ctx *c);
void html_args_free(struct html_args *g);
/* ,"argsets", "argsDropped", "argShapes", "argShape" and "argVals" (parts and finds), from
 * c->args (html_args.c). */
void html_args_parts(const struct ctx *c, struct parts *finds, struct parts *ps);
/* ,"analysis": per-core engine statistics and rankings (cores >= max_cores left out). */
void html_emit_analysis(struct ctx *c, size_t max_cores);
/* The layer table, Function rows and what-if rows (html_ltab.c): ,"ltab":{...} or null. */
void html_emit_ltab(struct ctx *c);
/* ,"layers": the layer table's id, name and type columns (parts and finds). */
void html_layers_parts(const struct ctx *c, struct parts *finds, struct parts *ps);
/* Makes c->mem: the memory records (on c->jobs threads). TP_OK or TP_ENOMEM. */
int html_mem_plan(struct ctx *c);
void html_mem_free(struct html_mem *hm);
/* ,"lmem" and "gmem": memory records and blocks (parts and finds), from c->mem. */
void html_mem_parts(const struct ctx *c, struct parts *finds, struct parts *ps);

/* ---- A capture's page (html_capture.c) ---- */

/* *out = what a capture's page holds when the lanes are a capture's (thread lanes and no
 * device engine lane), else NULL: device dumps and Chrome traces get the page without it.
 * TP_OK or TP_ENOMEM. Free with html_cap_free. */
int html_cap_new(const struct tp_profile *p, const struct tp_analysis *a, const struct lane *lanes,
                 size_t nl, struct html_cap **out);
void html_cap_free(struct html_cap *cap);
/* After each lane object of a capture's page: notes its index and writes its track's counter
 * series as lanes (",{...}" each); html_cap_lanes_end writes the series of no shown lane. */
void html_cap_lane_written(struct ctx *c, const struct lane *l);
void html_cap_lanes_end(struct ctx *c);
/* ,"capture": threads, operator types, operators and steps (after every lane). */
void html_cap_emit(struct ctx *c);

#endif /* TP_HTML_INT_H */
