/*
 * vf_dict.c — the vendor-files writer's record type (an ordered dict with Python's update
 * semantics) and the number formats of the vendor's Python printers. Owns each record's
 * value buffer (vf_dict_free).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers/vendor/vendor_int.h"

void vf_dict_init(struct vf_dict *d)
{
	d->n = 0;
	memset(d->slot, 0, sizeof d->slot);
	tp_buf_init(&d->val);
}

void vf_dict_clear(struct vf_dict *d)
{
	d->n = 0;
	memset(d->slot, 0, sizeof d->slot);
	d->val.len = 0;
}

void vf_dict_free(struct vf_dict *d)
{
	tp_buf_free(&d->val);
	d->n = 0;
}

static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The slot holding key, or the empty slot where it goes. */
static uint16_t *find(struct vf_dict *d, const char *key)
{
	unsigned i = hash(key) & (VF_SLOTS - 1);
	while (d->slot[i] && strcmp(d->key[d->slot[i] - 1], key) != 0)
		i = (i + 1) & (VF_SLOTS - 1);
	return &d->slot[i];
}

void vf_set(struct vf_dict *d, const char *key, const char *val)
{
	uint16_t *s = find(d, key);
	size_t i;
	if (*s) {
		i = *s - 1u;
	} else {
		if (d->n >= VF_MAX_KEYS)
			return;
		i = d->n++;
		d->key[i] = key;
		*s = (uint16_t)(i + 1);
	}
	d->off[i] = d->val.len;
	tp_buf_puts(&d->val, val);
	tp_buf_putc(&d->val, 0);
	if (d->val.oom) /* keep vf_val valid: every value reads as "" */
		d->off[i] = 0;
}

void vf_set_u64(struct vf_dict *d, const char *key, uint64_t v)
{
	char b[TP_FMT_INT_MAX + 1];
	b[tp_fmt_u64(b, v)] = 0;
	vf_set(d, key, b);
}

void vf_set_i64(struct vf_dict *d, const char *key, int64_t v)
{
	char b[TP_FMT_INT_MAX + 1];
	b[tp_fmt_i64(b, v)] = 0;
	vf_set(d, key, b);
}

const char *vf_get(const struct vf_dict *d, const char *key)
{
	unsigned i = hash(key) & (VF_SLOTS - 1);
	while (d->slot[i]) {
		size_t k = d->slot[i] - 1u;
		if (strcmp(d->key[k], key) == 0)
			return d->val.oom ? "" : vf_val(d, k);
		i = (i + 1) & (VF_SLOTS - 1);
	}
	return NULL;
}

void vf_pyfloat(char *out, size_t n, double v)
{
	if (!isfinite(v)) {
		snprintf(out, n, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
		return;
	}
	if (v == 0) {
		snprintf(out, n, "%s", signbit(v) ? "-0.0" : "0.0");
		return;
	}
	/* The shortest digits that read back as v, as repr() chooses them. */
	char e[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof e, "%.*e", prec - 1, v);
		if (strtod(e, NULL) == v)
			break;
	}
	char digits[24];
	size_t nd = 0;
	const char *q = e;
	int neg = *q == '-';
	if (neg)
		q++;
	for (; *q && *q != 'e'; q++)
		if (*q >= '0' && *q <= '9' && nd < sizeof digits - 1)
			digits[nd++] = *q;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = 0;
	int x = *q == 'e' ? atoi(q + 1) : 0;
	char r[64];
	size_t k = 0;
	if (neg)
		r[k++] = '-';
	if (x >= -4 && x < 16) {
		if (x < 0) {
			r[k++] = '0';
			r[k++] = '.';
			for (int z = -1; z > x; z--)
				r[k++] = '0';
			for (size_t j = 0; j < nd; j++)
				r[k++] = digits[j];
		} else {
			for (int j = 0; j <= x; j++)
				r[k++] = (size_t)j < nd ? digits[j] : '0';
			r[k++] = '.';
			if ((size_t)x + 1 < nd)
				for (size_t j = (size_t)x + 1; j < nd; j++)
					r[k++] = digits[j];
			else
				r[k++] = '0';
		}
		r[k] = 0;
	} else {
		r[k++] = digits[0];
		if (nd > 1) {
			r[k++] = '.';
			for (size_t j = 1; j < nd; j++)
				r[k++] = digits[j];
		}
		snprintf(r + k, sizeof r - k, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
	}
	snprintf(out, n, "%s", r);
}

void vf_arg_text(const struct tp_profile *p, const struct tp_arg *a, char *out, size_t n)
{
	switch (a->type) {
	case TP_ARG_INT:
		snprintf(out, n, "%lld", (long long)a->v.i);
		break;
	case TP_ARG_UINT:
		snprintf(out, n, "%llu", (unsigned long long)a->v.u);
		break;
	case TP_ARG_REAL:
		vf_pyfloat(out, n, a->v.d);
		break;
	default:
		tp_text_copy(out, n, tp_str(p, a->v.s), TP_TEXT_CTRL | TP_TEXT_LINE);
		break;
	}
}
