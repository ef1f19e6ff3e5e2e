/*
 * plan.c — which sheets the workbook has and what each holds: the Engine Summary, the layer
 * sheet(s), Operators, "Longest commands", one sheet per engine and core (split into parts
 * past the rows-per-sheet limit) and one per host, thread, firmware or layer track; their
 * valid, unique Excel names; and the row cap (--xlsx_rows) with the profile note that says a
 * sheet is cut.
 *
 * Owns nothing beyond one call: the plan's arrays are the caller's to free.
 */
#include "writers/xlsx/xlsx_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t tp_xlsx_parts(size_t count, uint32_t max_rows)
{
	size_t cap = (max_rows ? max_rows : TP_XLSX_EXCEL_MAX_ROWS) - TP_XLSX_DATA_ROW;
	return count <= cap ? 1 : (count + cap - 1) / cap;
}

void tp_xlsx_sheet_name(char *buf, size_t size, const char *name)
{
	size_t o = 0, chars = 0;
	if (size == 0)
		return;
	for (const char *q = name; *q && o + 4 < size && chars < 31;) {
		unsigned char c = (unsigned char)*q;
		/* Strict UTF-8 (common's decoder; it stops at the NUL), no control characters, no
		 * XML non-characters: anything else becomes '_'. */
		int32_t cp;
		size_t n = tp_utf8_decode((const unsigned char *)q, 4, &cp);
		int bad = cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF;
		if (bad) {
			buf[o++] = '_';
			q += n;
		} else if (n == 1 && strchr("[]:*?/\\", c)) {
			buf[o++] = '_';
			q++;
		} else {
			memcpy(buf + o, q, n);
			o += n;
			q += n;
		}
		chars++;
	}
	buf[o] = '\0';
	while (o && buf[o - 1] == '\'')
		buf[--o] = '\0';
	size_t lead = 0;
	while (buf[lead] == '\'')
		lead++;
	if (lead)
		memmove(buf, buf + lead, o - lead + 1);
	if (!buf[0])
		snprintf(buf, size, "Sheet");
}

/* Records of a track shown on its sheets: the first `cap` in time. */
static size_t shown_of(size_t count, uint64_t cap)
{
	return (uint64_t)count > cap ? (size_t)cap : count;
}

static struct part *plan_add(struct plan *pl, enum part_kind k)
{
	struct part *v = tp_grow(pl->v, sizeof *v, pl->n + 1, &pl->cap);
	if (!v)
		return NULL;
	pl->v = v;
	memset(&v[pl->n], 0, sizeof v[pl->n]);
	v[pl->n].kind = k;
	v[pl->n].track = -1;
	return &v[pl->n++];
}

/* `base` then `suffix` into out, the base cut (never inside a UTF-8 sequence) so the whole
 * keeps within Excel's 31 characters. */
static void name_with_suffix(char *out, size_t size, const char *base, const char *suffix)
{
	size_t keep = strlen(base);
	while (keep && keep + strlen(suffix) > 31)
		keep--;
	while (keep && ((unsigned char)base[keep] & 0xC0) == 0x80)
		keep--;
	snprintf(out, size, "%.*s%s", (int)keep, base, suffix);
}

/* Gives parts unique names (Excel compares sheet names case-insensitively). */
static void unique_name(struct plan *pl, struct part *me)
{
	char base[128];
	snprintf(base, sizeof base, "%s", me->name);
	for (unsigned n = 2;; n++) {
		int clash = 0;
		for (size_t i = 0; i < pl->n; i++)
			if (&pl->v[i] != me && pl->v[i].name[0] &&
			    !strcasecmp(pl->v[i].name, me->name))
				clash = 1;
		if (!clash || n > 9999)
			return;
		char suffix[16];
		snprintf(suffix, sizeof suffix, " ~%u", n);
		name_with_suffix(me->name, sizeof me->name, base, suffix);
	}
}

/* Engine tracks in (device, core, kind, track index) order; the key is copied so qsort needs
 * no context. */
struct track_key {
	int32_t device, core;
	uint8_t kind;
	int index;
};

static int engine_order(const void *a, const void *b)
{
	const struct track_key *x = a, *y = b;
	int64_t kx[] = {x->device, x->core, x->kind, x->index};
	int64_t ky[] = {y->device, y->core, y->kind, y->index};
	return tp_cmp_keys(kx, ky, 4);
}

int xl_multi_device(const struct tp_profile *p)
{
	for (size_t i = 0; i < p->num_tracks; i++)
		if (p->tracks[i].kind < TP_ENGINES && p->tracks[i].device != 0)
			return 1;
	return 0;
}

const char *xl_engine_sheet_prefix(uint8_t kind)
{
	switch (kind) {
	case TP_TRACK_TIU:
		return "TIU";
	case TP_TRACK_GDMA:
		return "GDMA";
	case TP_TRACK_SDMA:
		return "SDMA";
	case TP_TRACK_CDMA:
		return "CDMA";
	case TP_TRACK_MCU:
		return "MCU";
	case TP_TRACK_LAYER:
		return "Layer";
	default:
		return "Track";
	}
}

static void track_base_name(const struct tp_profile *p, int ti, int md, char *buf, size_t size)
{
	const struct tp_track *t = &p->tracks[ti];
	char raw[160];
	if (t->kind < TP_ENGINES || t->kind == TP_TRACK_MCU || t->kind == TP_TRACK_LAYER) {
		if (md)
			snprintf(raw, sizeof raw, "D%d %s_%d", (int)t->device,
			         xl_engine_sheet_prefix(t->kind), (int)t->core);
		else
			snprintf(raw, sizeof raw, "%s_%d", xl_engine_sheet_prefix(t->kind),
			         (int)t->core);
	} else if (t->kind == TP_TRACK_THREAD) {
		snprintf(raw, sizeof raw, "T%" PRId64 " %s", t->tid, tp_str(p, t->name));
	} else {
		snprintf(raw, sizeof raw, "Host %s", tp_str(p, t->name));
	}
	tp_xlsx_sheet_name(buf, size, raw);
}

/* Adds `parts` parts of `per` rows for `shown` records: "<base>", "<base> (2)", ...; a
 * track's parts (track >= 0) get names unique in the plan. */
static int add_parts(struct plan *pl, enum part_kind kind, int track, size_t shown, size_t parts,
                     size_t per, const char *base)
{
	for (size_t k = 0; k < parts; k++) {
		struct part *pt = plan_add(pl, kind);
		if (!pt)
			return TP_ENOMEM;
		pt->track = track;
		pt->index = k;
		pt->nparts = parts;
		pt->first = k * per;
		pt->count = shown - pt->first < per ? shown - pt->first : per;
		pt->shown = shown;
		if (k == 0) {
			snprintf(pt->name, sizeof pt->name, "%s", base);
		} else {
			char suffix[24];
			snprintf(suffix, sizeof suffix, " (%zu)", k + 1);
			name_with_suffix(pt->name, sizeof pt->name, base, suffix);
		}
		if (track >= 0)
			unique_name(pl, pt);
	}
	return TP_OK;
}

/* Puts track `ti` (shown records) on the "Other tracks" sheet. */
static int fold_track(struct plan *pl, int ti, size_t shown)
{
	int *v = tp_grow(pl->fold, sizeof *v, pl->nfold + 1, &pl->fold_cap);
	if (!v)
		return TP_ENOMEM;
	pl->fold = v;
	pl->fold[pl->nfold++] = ti;
	pl->fold_records += shown;
	return TP_OK;
}

/* The "Other tracks" sheet: the folded tracks' records within the row cap, as many as one
 * sheet holds. */
static int add_fold_part(struct plan *pl)
{
	struct part *pt = plan_add(pl, PK_FOLD);
	if (!pt)
		return TP_ENOMEM;
	uint64_t room = pl->max_rows - TP_XLSX_DATA_ROW;
	if (pl->row_cap < room)
		room = pl->row_cap;
	pt->nparts = 1;
	pt->count = (size_t)(pl->fold_records < room ? pl->fold_records : room);
	pt->shown = pt->count;
	snprintf(pt->name, sizeof pt->name, "Other tracks");
	unique_name(pl, pt);
	return TP_OK;
}

static int add_track_parts(struct plan *pl, const struct tp_profile *p, int ti, int md,
                           uint32_t max_rows, enum part_kind kind)
{
	const struct tp_track *t = &p->tracks[ti];
	size_t shown = shown_of(t->count, pl->row_cap);
	size_t parts = tp_xlsx_parts(shown, max_rows);
	/* libxlsxwriter's constant_memory mode keeps a temporary file open per worksheet until
	 * the workbook is closed: past the budget (one sheet kept for "Other tracks"), this
	 * track and every later one fold onto that sheet. */
	if (pl->nfold || pl->n + parts >= TP_XLSX_MAX_SHEETS)
		return fold_track(pl, ti, shown);
	pl->capped += shown < t->count;
	size_t cap = (max_rows ? max_rows : TP_XLSX_EXCEL_MAX_ROWS) - TP_XLSX_DATA_ROW;
	char base[128];
	track_base_name(p, ti, md, base, sizeof base);
	return add_parts(pl, kind, ti, shown, parts, cap, base);
}

/* Which tracks get sheets: 1 = engine and firmware tracks (ordered by device, core, kind),
 * 2 = host threads, host lanes and layer tracks (track order), 0 = none. */
static int sheet_track(const struct tp_track *t, size_t max_cores)
{
	if (t->count == 0)
		return 0;
	if (t->kind < TP_ENGINES || t->kind == TP_TRACK_MCU)
		return max_cores && t->core >= 0 && (size_t)t->core >= max_cores ? 0 : 1;
	if (t->kind == TP_TRACK_THREAD || t->kind == TP_TRACK_HOST || t->kind == TP_TRACK_LAYER)
		return 2;
	return 0;
}

/* " (the default: ... shared by n per-record sheets ...)" when the cap is the shared default
 * below the per-sheet maximum (nsheets from tp_xlsx_cap_for), else "". */
void xl_default_cap_why(char *out, size_t size, size_t nsheets, uint64_t row_cap)
{
	out[0] = 0;
	if (nsheets && row_cap < TP_XLSX_DEFAULT_ROWS)
		snprintf(out, size,
		         " (the default: %u rows shared by %zu per-record sheets, %u to %u each)",
		         TP_XLSX_ROW_BUDGET, nsheets, TP_XLSX_MIN_DEFAULT_ROWS,
		         TP_XLSX_DEFAULT_ROWS);
}

/* Keeps the first pl->row_cap layers of each (device, core) in the profile's order. Leaves
 * pl->layer_idx NULL when no core has more. */
static int layer_rows(struct plan *pl, const struct tp_profile *p)
{
	struct {
		int32_t device, core;
		uint64_t n;
	} seen[64];
	size_t nseen = 0, kept = 0, cap = 0;
	size_t *idx = NULL; /* from the first layer cut on; NULL: none cut yet */
	if (p->num_layers <= pl->row_cap)
		return TP_OK; /* no core has more */
	for (size_t i = 0; i < p->num_layers; i++) {
		struct tp_layer lv;
		const struct tp_layer *l = tp_profile_layer(p, i, &lv);
		size_t k = 0;
		while (k < nseen && (seen[k].device != l->device || seen[k].core != l->core))
			k++;
		if (k == nseen && nseen < sizeof seen / sizeof *seen) {
			seen[nseen].device = l->device;
			seen[nseen].core = l->core;
			seen[nseen++].n = 0;
		}
		/* Past 64 distinct cores the rest share the last slot's count. */
		if (k >= nseen)
			k = nseen - 1;
		if (seen[k].n++ >= pl->row_cap) {
			if (!idx) {
				/* The first layer cut: every one before it is kept. */
				if (!(idx = tp_grow(NULL, sizeof *idx, kept ? kept : 1, &cap)))
					return TP_ENOMEM;
				for (size_t j = 0; j < kept; j++)
					idx[j] = j;
			}
			continue;
		}
		if (idx) {
			size_t *v = tp_grow(idx, sizeof *idx, kept + 1, &cap);
			if (!v) {
				tp_free(idx);
				return TP_ENOMEM;
			}
			idx = v;
			idx[kept] = i;
		}
		kept++;
	}
	if (!idx)
		return TP_OK; /* nothing cut */
	pl->layer_idx = idx;
	pl->nlayer_idx = kept;
	pl->layers_capped = 1;
	return TP_OK;
}

/* The tracks that get an engine sheet, in sheet order: a new array *out of *n keys (the
 * caller frees it). TP_OK / TP_ENOMEM. */
static int engine_sheet_tracks(const struct tp_profile *p, size_t max_cores, struct track_key **out,
                               size_t *n)
{
	struct track_key *order = tp_calloc(p->num_tracks ? p->num_tracks : 1, sizeof *order);
	if (!order)
		return TP_ENOMEM;
	*n = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (sheet_track(t, max_cores) == 1)
			order[(*n)++] = (struct track_key){t->device, t->core, t->kind, (int)i};
	}
	qsort(order, *n, sizeof *order, engine_order);
	*out = order;
	return TP_OK;
}

int xl_make_plan(struct plan *pl, const struct tp_profile *p, const struct tp_xlsx_opts *xo)
{
	struct part *pt = plan_add(pl, PK_SUMMARY);
	if (!pt)
		return TP_ENOMEM;
	snprintf(pt->name, sizeof pt->name, "Engine Summary");
	if (p->num_layers) {
		/* The row cap applies per core (the first row_cap layers of each core in the
		 * profile's order); pl->layer_idx lists the kept layers, NULL = all of them. */
		int st = layer_rows(pl, p);
		if (st != TP_OK)
			return st;
		size_t shown = pl->layer_idx ? pl->nlayer_idx : p->num_layers;
		/* Split past Excel's row limit like the engine sheets ("Layer by Layer Info (2)"):
		 * the data starts at row LAYER_DATA_ROW. */
		uint32_t rows = xo->max_rows ? xo->max_rows : TP_XLSX_EXCEL_MAX_ROWS;
		size_t cap = rows - LAYER_DATA_ROW;
		size_t parts = (shown + cap - 1) / cap;
		if ((st = add_parts(pl, PK_LAYERS, -1, shown, parts, cap, "Layer by Layer Info")) !=
		    TP_OK)
			return st;
	}
	if (pl->ltab) {
		if (!(pt = plan_add(pl, PK_LTAB)))
			return TP_ENOMEM;
		snprintf(pt->name, sizeof pt->name, "Layer Table");
		if (!(pt = plan_add(pl, PK_WHATIF)))
			return TP_ENOMEM;
		snprintf(pt->name, sizeof pt->name, "What If");
	}
	if (xl_ops_present(p)) {
		if (!(pt = plan_add(pl, PK_OPS)))
			return TP_ENOMEM;
		snprintf(pt->name, sizeof pt->name, "Operators");
	}
	if (xl_accel_present(p)) {
		if (!(pt = plan_add(pl, PK_ACCEL)))
			return TP_ENOMEM;
		snprintf(pt->name, sizeof pt->name, "Accelerator");
	}
	struct track_key *order;
	size_t n;
	if (engine_sheet_tracks(p, xo->max_cores, &order, &n) != TP_OK)
		return TP_ENOMEM;
	/* A cut engine sheet gets the longest commands of its whole track on one extra sheet,
	 * placed before the engine sheets. */
	int any_cut = 0;
	for (size_t i = 0; i < n; i++)
		any_cut |= order[i].kind < TP_ENGINES &&
		           (uint64_t)p->tracks[order[i].index].count > pl->row_cap;
	if (any_cut) {
		if (!(pt = plan_add(pl, PK_LONGEST))) {
			tp_free(order);
			return TP_ENOMEM;
		}
		snprintf(pt->name, sizeof pt->name, "Longest commands");
	}
	int md = xl_multi_device(p), st = TP_OK;
	for (size_t i = 0; i < n && st == TP_OK; i++)
		st = add_track_parts(pl, p, order[i].index, md, xo->max_rows,
		                     order[i].kind < TP_ENGINES ? PK_ENGINE : PK_EVENTS);
	/* Host threads, host lanes and layer tracks keep track order. */
	for (size_t i = 0; i < p->num_tracks && st == TP_OK; i++) {
		if (sheet_track(&p->tracks[i], xo->max_cores) == 2)
			st = add_track_parts(pl, p, (int)i, md, xo->max_rows, PK_EVENTS);
	}
	tp_free(order);
	if (st == TP_OK && pl->nfold)
		st = add_fold_part(pl);
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* tp_output                                                                                 */
/* ---------------------------------------------------------------------------------------- */

int tp_xlsx_parse_rows(const char *v, uint64_t *cap)
{
	uint64_t n;
	if (!v)
		return -1;
	if (!strcmp(v, "all")) {
		*cap = TP_XLSX_ROWS_ALL;
		return 0;
	}
	if (tp_parse_u64(v, strlen(v), &n) != 0 || n == 0)
		return -1;
	*cap = n;
	return 0;
}

uint64_t tp_xlsx_cap_for(const struct tp_profile *p, size_t max_cores, uint64_t cap,
                         size_t *nsheets)
{
	if (nsheets)
		*nsheets = 0;
	if (cap)
		return cap;
	/* Per-record sheets: every track with records; the layer sheet holds the cap per core,
	 * counted once per core that has an engine track (where its layers run). */
	size_t n = 0, cores = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		int k = sheet_track(t, max_cores);
		n += k != 0;
		if (k == 1 && t->kind == TP_TRACK_TIU)
			cores++;
	}
	if (p->num_layers)
		n += cores ? cores : 1;
	if (n > TP_XLSX_MAX_SHEETS)
		n = TP_XLSX_MAX_SHEETS; /* the rest fold onto one sheet */
	if (nsheets)
		*nsheets = n;
	uint64_t per = n ? TP_XLSX_ROW_BUDGET / n : TP_XLSX_DEFAULT_ROWS;
	return per > TP_XLSX_DEFAULT_ROWS       ? TP_XLSX_DEFAULT_ROWS
	       : per < TP_XLSX_MIN_DEFAULT_ROWS ? TP_XLSX_MIN_DEFAULT_ROWS
	                                        : per;
}

/* The note on rows past the cap (see tp_xlsx_note_cap); pl: the workbook's plan at that cap,
 * made for nsheets sheets. */
static int cap_note(struct tp_profile *p, size_t max_cores, const struct plan *pl, size_t nsheets)
{
	const uint64_t row_cap = pl->row_cap;
	char why[160];
	xl_default_cap_why(why, sizeof why, nsheets, row_cap);
	size_t capped = 0, largest = 0;
	int big = -1;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (!sheet_track(t, max_cores) || (uint64_t)t->count <= row_cap)
			continue;
		capped++;
		if (t->count > largest) {
			largest = t->count;
			big = (int)i;
		}
	}
	if (!capped && !pl->layers_capped)
		return TP_OK;
	if (!capped)
		return tp_profile_note(p,
		                       TP_XLSX_NOTE_PREFIX
		                       "the layer sheet shows only the first %" PRIu64
		                       " layers of each core%s; every total and every "
		                       "other output covers all of them; rerun with "
		                       "--xlsx_rows all for every row",
		                       row_cap, why);
	char name[128];
	track_base_name(p, big, xl_multi_device(p), name, sizeof name);
	return tp_profile_note(
	    p,
	    TP_XLSX_NOTE_PREFIX "%zu per-command sheet(s)%s show only the first %" PRIu64
	                        " commands of their engine and core%s (largest: %s, %zu); every "
	                        "total and every other output covers all commands; rerun with "
	                        "--xlsx_rows all for every row",
	    capped, pl->layers_capped ? " and the layer sheet" : "", row_cap, why, name, largest);
}

/* The notes on rows past the cap, then on tracks without a sheet of their own, from one plan
 * of the workbook. */
int tp_xlsx_note_cap(struct tp_profile *p, size_t max_cores, uint64_t cap)
{
	struct plan pl = {.max_rows = TP_XLSX_EXCEL_MAX_ROWS};
	struct tp_xlsx_opts xo = {.max_cores = max_cores};
	size_t nsheets;
	pl.row_cap = tp_xlsx_cap_for(p, max_cores, cap, &nsheets);
	int st = xl_make_plan(&pl, p, &xo);
	if (st == TP_OK)
		st = cap_note(p, max_cores, &pl, nsheets);
	if (st == TP_OK && pl.nfold)
		st = tp_profile_note(p,
		                     TP_XLSX_NOTE_PREFIX "%zu tracks have no sheet of their own (a "
		                                         "workbook holds at most %u sheets); their "
		                                         "records are on the 'Other tracks' sheet",
		                     pl.nfold, TP_XLSX_MAX_SHEETS);
	tp_free(pl.v);
	tp_free(pl.layer_idx);
	tp_free(pl.fold);
	return st;
}
