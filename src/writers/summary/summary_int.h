/*
 * summary_int.h — private to the summary writer: the JSON key/value helpers summary.json's
 * parts share, and the layer-table sections (ltab.c).
 */
#ifndef TP_SUMMARY_INT_H
#define TP_SUMMARY_INT_H

#include "analysis/ltab.h"
#include "writers/summary/summary.h"

static inline void jkey(struct tp_buf *b, int *first, const char *k)
{
	tp_buf_puts(b, *first ? "\"" : ",\"");
	*first = 0;
	tp_buf_json_str(b, k);
	tp_buf_puts(b, "\":");
}

static inline void jnum(struct tp_buf *b, int *first, const char *k, double v, int dec)
{
	jkey(b, first, k);
	tp_buf_fixed(b, v, dec);
}

static inline void jint(struct tp_buf *b, int *first, const char *k, uint64_t v)
{
	jkey(b, first, k);
	tp_buf_printf(b, "%llu", (unsigned long long)v);
}

/* v as a JSON string value, quoted. */
static inline void jquote(struct tp_buf *b, const char *v)
{
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, v);
	tp_buf_putc(b, '"');
}

static inline void jstr(struct tp_buf *b, int *first, const char *k, const char *v)
{
	jkey(b, first, k);
	jquote(b, v);
}

/* The layer table, per-Function summary and what-if table as text (summary.txt) and as the
 * value of summary.json's "layer_table". */
void tp_summary_ltab_text(const struct tp_profile *p, const struct tp_ltab *t, struct tp_buf *b);
void tp_summary_ltab_json(const struct tp_profile *p, const struct tp_ltab *t, struct tp_buf *b);

#endif /* TP_SUMMARY_INT_H */
