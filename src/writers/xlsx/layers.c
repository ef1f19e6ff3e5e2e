/*
 * layers.c — the "Layer by Layer Info" sheet: one row per layer (the first row_cap of each
 * core when capped) with the span of its matched commands.
 *
 * Owns nothing beyond one call.
 */
#include "writers/xlsx/xlsx_int.h"

#include <inttypes.h>

/* Rows [a, b) of layer part `ctx` (a struct part; stream.c's parts). */
static void layer_rows_emit(struct xl *x, struct xl_sheet *s, const void *ctx, size_t a, size_t b)
{
	const struct part *pt = ctx;
	const struct plan *pl = x->plan;
	const struct tp_profile *p = x->p;
	char buf[64];
	double total = (double)x->a->total_time_ns;
	for (size_t j = a; j < b; j++) {
		size_t i = pt->first + j;
		uint32_t row = LAYER_DATA_ROW + (uint32_t)j;
		struct tp_layer lv;
		const struct tp_layer *l =
		    tp_profile_layer(p, pl->layer_idx ? pl->layer_idx[i] : i, &lv);
		xl_num(x, s, row, 0, l->id, x->f.cyc);
		xl_num(x, s, row, 1, l->device, x->f.cyc);
		xl_num(x, s, row, 2, l->core, x->f.cyc);
		xl_str(x, s, row, 3, tp_str(p, l->type), NULL);
		xl_str(x, s, row, 4, tp_str(p, l->name), NULL);
		xl_num(x, s, row, 5, l->subnet, x->f.cyc);
		xl_num(x, s, row, 6, l->group, x->f.cyc);
		xl_str(x, s, row, 7, l->is_local ? "local" : "global", NULL);
		if (l->tiu_last) {
			snprintf(buf, sizeof buf, "%u-%u", l->tiu_first, l->tiu_last);
			xl_str(x, s, row, 8, buf, NULL);
		}
		if (l->gdma_last) {
			snprintf(buf, sizeof buf, "%u-%u", l->gdma_first, l->gdma_last);
			xl_str(x, s, row, 9, buf, NULL);
		}
		if (l->begin_ns <= l->end_ns) {
			xl_num(x, s, row, 10, xl_ns_to_us(l->begin_ns), x->f.us);
			xl_num(x, s, row, 11, xl_ns_to_us(l->end_ns), x->f.us);
			xl_num(x, s, row, 12, xl_ns_to_us(l->end_ns - l->begin_ns), x->f.us);
			xl_num(x, s, row, 13,
			       total > 0 ? (double)(l->end_ns - l->begin_ns) / total : 0, x->f.pct);
		}
	}
}

/* Writes layers [pt->first, pt->first + pt->count) onto pt's sheet. */
void xl_write_layers(struct xl *x, const struct part *pt, const struct plan *pl)
{
	lxw_worksheet *ws = pt->ws;
	const struct tp_profile *p = x->p;
	struct xl_sheet s = {.ws = ws};
	static const char *const h[] = {
	    "Layer Id",       "Device",       "Core Id",      "Layer Type",         "Layer Name",
	    "Subnet",         "Group",        "Local",        "TIU Cmd Ids",        "GDMA Cmd Ids",
	    "Begin Time(us)", "End Time(us)", "Duration(us)", "Share of Total Time"};
	xl_str(x, &s, 0, 0,
	       "Layers with the span of their matched commands (begin = first "
	       "command start, end = last command end).",
	       x->f.bold);
	if (pl->layers_capped) {
		char cap[300];
		snprintf(cap, sizeof cap,
		         "Showing the first %" PRIu64 " layers of each core (%zu of %zu layers; "
		         "row cap %" PRIu64 "); rerun with --xlsx_rows all for every row.",
		         pl->row_cap, pl->nlayer_idx, p->num_layers, pl->row_cap);
		xl_str(x, &s, 1, 0, cap, x->f.cap);
	}
	if (s.wcap)
		s.width[0] = 10;
	xl_header_row(x, &s, 2, h, sizeof h / sizeof *h);
	if (xl_defer_rows(x, &s, LAYER_DATA_ROW, pt->count, layer_rows_emit, (void *)pt, NULL) !=
	    TP_OK)
		return;
	uint32_t row = LAYER_DATA_ROW + (uint32_t)pt->count;
	worksheet_freeze_panes(ws, 3, 0);
	xl_check(x, worksheet_autofilter(ws, 2, 0, row > 3 ? row - 1 : 2,
	                                 (uint16_t)(sizeof h / sizeof *h - 1)));
}
