/*
 * args.c — argument columns: the union of the argument keys used on a sheet's slices becomes
 * columns after the fixed ones (up to XL_MAX_ARG_COLS, the rest as "key=value" text in
 * "Other Args"), and the cell each argument value is written as.
 *
 * Owns the column map (struct argcols) until xl_argcols_free.
 */
#include "writers/xlsx/xlsx_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define XL_MAX_ARG_COLS 200 /* argument columns per sheet; the rest go to "Other Args" */

static size_t key_hash(uint32_t key)
{
	return key * 2654435761u;
}

static size_t argcol_hash_at(const void *ctx, size_t i)
{
	const struct argcols *ac = ctx;
	return key_hash(ac->v[i].key);
}

static uint16_t argcols_find(const struct argcols *ac, uint32_t key)
{
	const struct tp_ixmap *m = &ac->map;
	if (!m->cap)
		return UINT16_MAX;
	for (size_t k = tp_ixmap_start(m, key_hash(key)); m->slot[k]; k = tp_ixmap_next(m, k))
		if (ac->v[m->slot[k] - 1].key == key)
			return ac->v[m->slot[k] - 1].col;
	return UINT16_MAX;
}

/* Appends `key` (not in `ac`) with column `col`. */
static int argcols_add(struct argcols *ac, uint32_t key, uint16_t col)
{
	if (tp_ixmap_reserve(&ac->map, ac->n, argcol_hash_at, ac))
		return TP_ENOMEM;
	struct xl_argcol *v = tp_grow(ac->v, sizeof *v, ac->n + 1, &ac->cap);
	if (!v)
		return TP_ENOMEM;
	ac->v = v;
	ac->v[ac->n] = (struct xl_argcol){key, col};
	ac->n++;
	tp_slot_put(ac->map.slot, ac->map.cap - 1, key_hash(key), (uint32_t)ac->n);
	return TP_OK;
}

void xl_argcols_free(struct argcols *ac)
{
	tp_free(ac->v);
	tp_ixmap_free(&ac->map);
	memset(ac, 0, sizeof *ac);
}

/* Fixed columns whose names an argument must not repeat. */
static int is_fixed(const char *key, const char *const *fixed, size_t nfixed)
{
	for (size_t i = 0; i < nfixed; i++)
		if (!strcmp(key, fixed[i]))
			return 1;
	return 0;
}

int xl_collect_args(const struct tp_profile *p, const struct tp_track *t, size_t first,
                    size_t count, const char *const *fixed, size_t nfixed, uint16_t col0,
                    struct argcols *ac)
{
	/* Keys met and rejected (fixed names) are remembered with column UINT16_MAX - 1 so they
	 * are looked up once. */
	struct argcols seen = {0};
	int st = TP_OK;
	for (size_t i = first; i < first + count && st == TP_OK; i++) {
		size_t n;
		const struct tp_arg *args = tp_args_get(p, t->slices[i].args, &n);
		for (size_t k = 0; k < n && st == TP_OK; k++) {
			uint32_t key = args[k].key;
			if (argcols_find(&seen, key) != UINT16_MAX ||
			    argcols_find(ac, key) != UINT16_MAX)
				continue;
			st = argcols_add(&seen, key, 0);
			if (st != TP_OK)
				break;
			if (is_fixed(tp_str(p, key), fixed, nfixed))
				continue;
			if (ac->n >= XL_MAX_ARG_COLS) {
				ac->other = 1;
				continue;
			}
			st = argcols_add(ac, key, (uint16_t)(col0 + ac->n));
		}
	}
	xl_argcols_free(&seen);
	return st;
}

static int key_is_address(const char *k)
{
	return strstr(k, "addr") != NULL || strstr(k, "mask") != NULL;
}

void xl_write_arg(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col,
                  const struct tp_profile *p, const struct tp_arg *g)
{
	char buf[32];
	switch (g->type) {
	case TP_ARG_INT:
		if (g->v.i > -(INT64_C(1) << 53) && g->v.i < (INT64_C(1) << 53))
			xl_num(x, s, row, col, (double)g->v.i, x->f.cyc);
		else {
			snprintf(buf, sizeof buf, "%" PRId64, g->v.i);
			xl_str(x, s, row, col, buf, NULL);
		}
		break;
	case TP_ARG_UINT:
		/* Reference PerfDoc renders address and mask fields as hex strings (§5.2). */
		if (key_is_address(tp_str(p, g->key))) {
			snprintf(buf, sizeof buf, "0x%" PRIx64, g->v.u);
			xl_str(x, s, row, col, buf, NULL);
		} else if (g->v.u < (UINT64_C(1) << 53)) {
			xl_num(x, s, row, col, (double)g->v.u, x->f.cyc);
		} else {
			snprintf(buf, sizeof buf, "%" PRIu64, g->v.u);
			xl_str(x, s, row, col, buf, NULL);
		}
		break;
	case TP_ARG_REAL:
		xl_num(x, s, row, col, g->v.d, x->f.real);
		break;
	default:
		xl_str(x, s, row, col, tp_str(p, g->v.s), NULL);
		break;
	}
}

/* Writes the slice's arguments into their columns; keys without a column go to "Other Args"
 * as "key=value; ..." text. */
void xl_write_args(struct xl *x, struct xl_sheet *s, uint32_t row, const struct tp_profile *p,
                   const struct tp_slice *sl, const struct argcols *ac, uint16_t other_col)
{
	struct tp_buf *ob = &x->other;
	size_t n;
	const struct tp_arg *args = tp_args_get(p, sl->args, &n);
	if (ac->other)
		ob->len = 0;
	for (size_t k = 0; k < n; k++) {
		uint16_t col = argcols_find(ac, args[k].key);
		if (col != UINT16_MAX) {
			xl_write_arg(x, s, row, col, p, &args[k]);
			continue;
		}
		if (!ac->other)
			continue;
		const struct tp_arg *g = &args[k];
		if (ob->len)
			tp_buf_puts(ob, "; ");
		tp_buf_puts(ob, tp_str(p, g->key));
		tp_buf_putc(ob, '=');
		if (g->type == TP_ARG_INT)
			tp_buf_printf(ob, "%" PRId64, g->v.i);
		else if (g->type == TP_ARG_UINT)
			tp_buf_printf(ob, "%" PRIu64, g->v.u);
		else if (g->type == TP_ARG_REAL)
			tp_buf_fixed(ob, g->v.d, 6);
		else
			tp_buf_puts(ob, tp_str(p, g->v.s));
	}
	if (ac->other && ob->len) {
		tp_buf_putc(ob, '\0');
		if (ob->oom)
			x->oom = 1;
		else
			xl_str(x, s, row, other_col, ob->data, NULL);
		ob->len = 0;
	}
}

void *xl_argrows_new(size_t size, const struct tp_track *t, size_t first)
{
	struct xl_argrows *r = tp_calloc(1, size);
	if (r) {
		r->t = t;
		r->first = first;
	}
	return r;
}

void xl_argrows_free(void *rows)
{
	struct xl_argrows *r = rows;
	if (r)
		xl_argcols_free(&r->ac);
	tp_free(r);
}

/* Writes the header row: the fixed columns, the argument columns, "Other Args" when some
 * keys did not get a column. */
void xl_args_header(struct xl *x, struct xl_sheet *s, uint32_t hr, const char *const *names,
                    size_t nc, const struct argcols *ac, uint16_t other_col)
{
	xl_header_row(x, s, hr, names, nc);
	for (size_t i = 0; i < ac->n; i++)
		xl_str(x, s, hr, (uint16_t)(nc + i), tp_str(x->p, ac->v[i].key), x->f.hdr);
	if (ac->other)
		xl_str(x, s, hr, other_col, "Other Args", x->f.hdr);
}
