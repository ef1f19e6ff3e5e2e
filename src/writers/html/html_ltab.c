/*
 * html_ltab.c — the layer table's data in result.html (src/analysis/ltab.h): "ltab" inside the
 * page's "analysis" object, read by overview.js into the "Layer table" and "What if" tables:
 * the layers (at most LTAB_ROWS, longest TIU time first), the Function rows with Overall, and
 * the what-if rows when the chip has the vendor's peak table.
 */
#include "analysis/ltab.h"
#include "writers/html/html_int.h"

#include <math.h>

#define LTAB_ROWS 1000

/* [gdma us, gdma share, ddr rate, tiu us, tiu share, alg ops, uarch rate or null, peak] */
static void sums(struct tp_buf *b, const struct tp_ltab_sums *s)
{
	const double v[] = {s->gdma.us, s->gdma.ratio, tp_ltab_theo_rate(&s->gdma), s->tiu.us,
	                    s->tiu.ratio};
	tp_buf_putc(b, '[');
	for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
		html_put_real(b, v[k]);
		tp_buf_putc(b, ',');
	}
	html_put_u64(b, s->alg_ops);
	tp_buf_putc(b, ',');
	/* alg / uarch ops; null (NAN) without uarch ops */
	html_put_real(b, s->uarch_ops ? (double)s->alg_ops / (double)s->uarch_ops : NAN);
	tp_buf_putc(b, ',');
	html_put_real(b, s->peak_tops);
	tp_buf_putc(b, ']');
}

static void rows(struct ctx *c, const struct tp_ltab *t)
{
	struct tp_buf *b = &c->o.b;
	tp_buf_puts(b, "\"rows\":[");
	for (size_t i = 0; i < t->num_rows && i < LTAB_ROWS; i++) {
		const struct tp_ltab_row *r = &t->rows[i];
		tp_buf_printf(b, "%s[%d,%d,", i ? "," : "", r->id, r->is_global);
		tp_buf_i64(b, html_smap(&c->sm, r->type));
		tp_buf_putc(b, ',');
		html_put_str(b, tp_ltab_func_name(r->func));
		tp_buf_putc(b, ',');
		html_put_str(b, tp_ltab_bound_name((enum tp_ltab_bound)r->bound));
		tp_buf_putc(b, ',');
		sums(b, &r->s);
		tp_buf_putc(b, ']');
	}
	tp_buf_puts(b, "]");
}

static void whatif(struct ctx *c, const struct tp_ltab *t)
{
	static const char *const kinds[] = {"origin", "overlap", "model", "own"};
	struct tp_buf *b = &c->o.b;
	int cost = t->overall.uarch_ops > 0;
	tp_buf_puts(b, ",\"whatif\":[");
	size_t shown = 0;
	for (size_t i = 0; i < t->num_whatif; i++) {
		const struct tp_ltab_whatif *w = &t->whatif[i];
		if (!cost && w->kind >= TP_LTC_MODEL_PEAK)
			break; /* no Alg Ops: the peak rows say nothing */
		tp_buf_printf(b, "%s[\"%s\",", shown++ ? "," : "", kinds[w->kind]);
		html_put_str(b, w->kind >= TP_LTC_MODEL_PEAK ? tp_ltab_func_name(w->func) : "");
		const double v[] = {w->tiu_before_us, w->tiu_after_us, w->reduced_us,
		                    w->total_us,      w->concurrency,  w->mac_util};
		for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
			tp_buf_putc(b, ',');
			html_put_real(b, v[k]);
		}
		tp_buf_putc(b, ']');
	}
	tp_buf_printf(b, "],\"cost\":%d,\"flops\":%d", cost, t->flops > 0);
}

void html_emit_ltab(struct ctx *c)
{
	const struct tp_ltab *t = c->a ? c->a->ltab : NULL;
	struct tp_buf *b = &c->o.b;
	if (!t) {
		tp_buf_puts(b, ",\"ltab\":null");
		return;
	}
	tp_buf_printf(b, ",\"ltab\":{\"n\":%zu,", t->num_rows);
	rows(c, t);
	tp_buf_puts(b, ",\"funcs\":[");
	for (size_t k = 0; k <= t->num_funcs; k++) {
		tp_buf_puts(b, k ? ",[" : "[");
		html_put_str(b, k < t->num_funcs ? tp_ltab_func_name(t->funcs[k].func) : "Overall");
		tp_buf_putc(b, ',');
		sums(b, k < t->num_funcs ? &t->funcs[k].s : &t->overall);
		tp_buf_putc(b, ']');
	}
	tp_buf_putc(b, ']');
	if (t->overall.peak_tops > 0)
		whatif(c, t);
	tp_buf_putc(b, '}');
}
