/*
 * json.c — the JSON layer of the Chrome-trace reader: a recursive-descent parser over the
 * contiguous bytes of one event object (trace_json_event keeps the members the reader knows and
 * skips nested values by bracket counting; trace_json_members parses an args object strictly),
 * JSON string decoding, and µs numbers to exact nanoseconds. Owns no state: strings are decoded
 * into the reader's scratch buffer.
 */
#include "readers/traceread/traceread_int.h"

#include <stdlib.h>

/* ---------------------------------------------------------------------------------------- */
/* Strings                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* The byte each one-letter JSON escape (after the backslash) stands for; 0: not one. */
static const char unescape[128] = {['"'] = '"',  ['\\'] = '\\', ['/'] = '/',  ['b'] = '\b',
                                   ['f'] = '\f', ['n'] = '\n',  ['r'] = '\r', ['t'] = '\t'};

int trace_decode_str(struct trace_rd *r, const struct json_val *v)
{
	struct tp_buf *b = &r->tmp;
	b->len = 0;
	const uint8_t *p = (const uint8_t *)v->p, *e = p + v->n;
	while (p < e) {
		if (*p == '\\') {
			if (e - p < 2)
				return -1;
			unsigned char c = p[1];
			p += 2;
			if (c != 'u') {
				if (c >= sizeof unescape || !unescape[c])
					return -1;
				tp_buf_putc(b, unescape[c]);
				continue;
			}
			uint32_t cp, lo;
			if (e - p < 4 || tp_parse_hex4((const char *)p, &cp))
				return -1;
			p += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF && e - p >= 6 && p[0] == '\\' &&
			    p[1] == 'u' && !tp_parse_hex4((const char *)p + 2, &lo) &&
			    lo >= 0xDC00 && lo <= 0xDFFF) {
				p += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			} else if (cp >= 0xD800 && cp <= 0xDFFF) {
				cp = 0xFFFD;
				r->utf8_fixed++;
			}
			if (cp)
				tp_buf_utf8(b, cp);
			continue;
		}
		int32_t cp;
		size_t l = tp_utf8_decode(p, (size_t)(e - p), &cp);
		if (cp < 0) {
			tp_buf_utf8(b, 0xFFFD);
			r->utf8_fixed++;
			p++;
			continue;
		}
		if (*p)
			tp_buf_put(b, p, l);
		p += l;
	}
	tp_buf_putc(b, 0);
	b->len--;
	return b->oom ? -2 : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Numbers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* The common case without any of the general path's work: plain digits, at most 18 of them,
 * then optionally '.' and one to three fraction digits (whole ns, no rounding). Returns 0 and
 * sets *ns, or -1 to fall back to the general path (which gives the same value wherever both
 * apply). */
static int us_to_ns_plain(const char *s, size_t n, int64_t *ns)
{
	size_t i = 0;
	uint64_t ip = 0;
	while (i < n && (unsigned)(s[i] - '0') < 10u) {
		ip = ip * 10 + (uint64_t)(s[i] - '0');
		if (++i > 18)
			return -1;
	}
	if (i == 0)
		return -1;
	uint64_t frac = 0;
	if (i < n) {
		if (s[i] != '.')
			return -1;
		size_t f0 = ++i;
		while (i < n && (unsigned)(s[i] - '0') < 10u && i - f0 < 3)
			frac = frac * 10 + (uint64_t)(s[i++] - '0');
		if (i != n || i == f0)
			return -1;
		for (size_t k = i - f0; k < 3; k++)
			frac *= 10;
	}
	if (ip > ((uint64_t)INT64_MAX - 999) / 1000)
		return -1;
	*ns = (int64_t)(ip * 1000 + frac);
	return 0;
}

int tp_traceread_us_to_ns(const char *s, size_t n, int64_t *ns)
{
	if (us_to_ns_plain(s, n, ns) == 0)
		return 0;
	size_t i = 0;
	int neg = 0;
	while (i < n && is_ws((unsigned char)s[i]))
		i++;
	while (n > i && is_ws((unsigned char)s[n - 1]))
		n--;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	uint64_t mant = 0;
	int sig = 0;    /* significant digits held in mant */
	long exp10 = 3; /* µs -> ns */
	int digits = 0, dot = 0;
	for (; i < n; i++) {
		char c = s[i];
		if (c == '.' && !dot) {
			dot = 1;
			continue;
		}
		if (c < '0' || c > '9')
			break;
		digits++;
		if (sig < 19) {
			if (mant || c != '0')
				sig++;
			mant = mant * 10 + (uint64_t)(c - '0');
			if (dot)
				exp10--;
		} else if (!dot) {
			exp10++; /* integer digits past 19 significant ones scale the value */
		}
	}
	if (!digits)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		int eneg = 0;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		long e = 0;
		int ed = 0;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, ed++)
			if (e < 100000)
				e = e * 10 + (s[i] - '0');
		if (!ed)
			return -1;
		exp10 += eneg ? -e : e;
	}
	if (i != n)
		return -1;
	if (mant == 0) {
		*ns = 0;
		return 0;
	}
	if (exp10 >= 0) {
		for (long k = 0; k < exp10; k++) {
			if (mant > UINT64_MAX / 10)
				return -1;
			mant *= 10;
		}
	} else if (exp10 < -19) {
		mant = 0;
	} else {
		uint64_t div = 1;
		for (long k = 0; k < -exp10; k++)
			div *= 10;
		uint64_t q = mant / div, rem = mant % div;
		/* Digits past the nanosecond: round half away from zero (on the magnitude). */
		if (rem >= div - rem)
			q++;
		mant = q;
	}
	return tp_i64_from_magnitude(neg, mant, ns);
}

int trace_val_real(const struct json_val *v, double *out)
{
	if (v->kind != 'n' && v->kind != 's')
		return -1;
	char tmp[64];
	if (v->n == 0 || v->n >= sizeof tmp)
		return -1;
	memcpy(tmp, v->p, v->n);
	tmp[v->n] = 0;
	char *end;
	double x = strtod(tmp, &end);
	if (end == tmp || *end)
		return -1;
	*out = x;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Event parser (contiguous bytes of one event object)                                      */
/* ---------------------------------------------------------------------------------------- */

/* Characters that may continue a JSON number (digits, sign, point, exponent). */
static const unsigned char num_char[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1,
};

static int json_fail(struct json_cur *j, const char *msg)
{
	if (!j->err) {
		j->err = msg;
		j->err_at = j->p < j->e ? j->p : j->e;
		j->short_ = j->p >= j->e;
	}
	return -1;
}

static int json_string(struct json_cur *j, struct json_val *v)
{
	/* at '"' */
	const char *q = ++j->p;
	int esc = 0;
	/* Fast path: plain ASCII up to the closing quote, eight bytes per step: a word is skipped
	 * when none of its bytes is '"', '\\' or >= 0x80 (the zero-byte test of
	 * w ^ 0x22.. and w ^ 0x5c..; its lowest flagged byte is exact, which is the one used). */
	unsigned char hi = 0;
	while (j->e - q >= 8) {
		uint64_t w;
		memcpy(&w, q, 8);
		const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
		uint64_t a = w ^ (ones * '"'), b = w ^ (ones * '\\');
		uint64_t m = ((a - ones) & ~a) | ((b - ones) & ~b) | w;
		m &= highs;
		if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			q += (unsigned)__builtin_ctzll(m) / 8;
#endif
			break;
		}
		q += 8;
	}
	while (q < j->e && *q != '"' && *q != '\\')
		hi |= (unsigned char)*q++;
	esc = hi >= 0x80;
	while (q < j->e && *q != '"') {
		if (*q == '\\') {
			esc = 1;
			q++;
		} else if ((unsigned char)*q >= 0x80)
			esc = 1;
		q++;
	}
	if (q >= j->e) {
		j->p = j->e;
		return json_fail(j, "unterminated string");
	}
	v->kind = 's';
	v->p = j->p;
	v->n = (size_t)(q - j->p);
	v->esc = esc;
	j->p = q + 1;
	return 0;
}

/* The member name at j->p into *k, and the ':' after it. Returns 0 or -1 (j->err set). */
static inline int json_member_name(struct json_cur *j, struct json_val *k)
{
	if (j->p >= j->e || *j->p != '"')
		return json_fail(j, "expected a member name");
	if (json_string(j, k))
		return -1;
	json_ws(j);
	if (j->p >= j->e || *j->p != ':')
		return json_fail(j, "expected ':' after a member name");
	j->p++;
	return 0;
}

/* The extent of the object / array at j->p by bracket counting with string awareness (the
 * first pass over an event; its args are parsed strictly by the second). */
static const unsigned char skip_class[256] = {
    ['"'] = 1, ['{'] = 2, ['['] = 2, ['}'] = 3, [']'] = 3,
};

static int json_skip(struct json_cur *j, struct json_val *v)
{
	const char *q = j->p;
	int depth = 0;
	while (q < j->e) {
		unsigned cls = skip_class[(unsigned char)*q++];
		if (!cls)
			continue;
		if (cls == 1) {
			/* To the closing quote, eight bytes per step while no '"' or '\\' is near.
			 */
			while (j->e - q >= 8) {
				uint64_t w;
				memcpy(&w, q, 8);
				const uint64_t ones = 0x0101010101010101ull;
				uint64_t a = w ^ (ones * '"'), b = w ^ (ones * '\\');
				if ((((a - ones) & ~a) | ((b - ones) & ~b)) & (ones << 7))
					break;
				q += 8;
			}
			while (q < j->e && *q != '"')
				q += *q == '\\' ? 2 : 1;
			if (q >= j->e)
				break;
			q++;
		} else if (cls == 2) {
			depth++;
		} else if (--depth == 0) {
			v->kind = j->p[0] == '{' ? 'o' : 'a';
			v->p = j->p;
			v->n = (size_t)(q - j->p);
			v->esc = 0;
			j->p = q;
			return 0;
		}
	}
	j->p = j->e;
	return json_fail(j, "unterminated object or array");
}

static int json_container(struct json_cur *j, struct json_val *v, int depth)
{
	char close = *j->p == '{' ? '}' : ']';
	int obj = close == '}';
	const char *start = j->p++;
	if (depth > MAX_DEPTH)
		return json_fail(j, "nesting too deep");
	json_ws(j);
	if (j->p < j->e && *j->p == close) {
		j->p++;
	} else {
		for (;;) {
			struct json_val k, x;
			json_ws(j);
			if (obj && json_member_name(j, &k))
				return -1;
			if (trace_json_value(j, &x, depth + 1))
				return -1;
			json_ws(j);
			if (j->p < j->e && *j->p == ',') {
				j->p++;
				json_ws(j);
				/* A trailing comma before the close is tolerated. */
				if (j->p < j->e && *j->p == close) {
					j->p++;
					break;
				}
				continue;
			}
			if (j->p < j->e && *j->p == close) {
				j->p++;
				break;
			}
			return json_fail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		}
	}
	v->kind = obj ? 'o' : 'a';
	v->p = start;
	v->n = (size_t)(j->p - start);
	v->esc = 0;
	return 0;
}

int trace_json_value(struct json_cur *j, struct json_val *v, int depth)
{
	json_ws(j);
	if (j->p >= j->e)
		return json_fail(j, "expected a value");
	char c = *j->p;
	if (c == '"')
		return json_string(j, v);
	if ((c == '{' || c == '[') && j->lazy && depth > 0)
		return json_skip(j, v);
	if (c == '{' || c == '[')
		return json_container(j, v, depth);
	const char *q = j->p;
	if (c == '-' || (c >= '0' && c <= '9')) {
		while (q < j->e && num_char[(unsigned char)*q])
			q++;
		if (q == j->e) {
			/* A number may continue past the bytes at hand. */
			j->p = q;
			return json_fail(j, "number cut short");
		}
		v->kind = 'n';
	} else {
		static const char *const lits[] = {"true", "false", "null", "NaN", "Infinity"};
		static const unsigned char lit_len[] = {4, 5, 4, 3, 8};
		size_t k = c == 't'   ? 0
		           : c == 'f' ? 1
		           : c == 'n' ? 2
		           : c == 'N' ? 3
		           : c == 'I' ? 4
		                      : 5;
		if (k < 5) {
			size_t l = lit_len[k], have = (size_t)(j->e - q);
			if (have < l && memcmp(q, lits[k], have) == 0) {
				j->p = j->e; /* a literal cut short */
				return json_fail(j, "literal cut short");
			}
			if (have < l || memcmp(q, lits[k], l) != 0)
				k = 5;
			else
				q += l;
		}
		if (k == 5)
			return json_fail(j, "unexpected character");
		v->kind = 'l';
	}
	v->p = j->p;
	v->n = (size_t)(q - j->p);
	v->esc = 0;
	j->p = q;
	return 0;
}

/* Parses the object at j->p ('{'), calling cb for each member, and leaves j->p after its '}'.
 * Commas are required between members; one before the '}' is tolerated. Returns 0, -1 on a
 * syntax error (j->err, j->short_), or cb's non-zero status. */
static int parse_object(struct json_cur *j,
                        int (*cb)(void *ctx, const struct json_val *k, const struct json_val *v),
                        void *ctx)
{
	j->p++; /* '{' */
	for (;;) {
		json_ws(j);
		if (j->p >= j->e)
			return json_fail(j, "expected a member name or '}'");
		if (*j->p == '}') {
			j->p++;
			return 0;
		}
		struct json_val k, v;
		if (json_member_name(j, &k) || trace_json_value(j, &v, 1))
			return -1;
		int st = cb(ctx, &k, &v);
		if (st)
			return st;
		json_ws(j);
		if (j->p >= j->e)
			return json_fail(j, "expected ',' or '}'");
		if (*j->p == ',')
			j->p++;
		else if (*j->p != '}')
			return json_fail(j, "expected ',' or '}'");
	}
}

int trace_json_members(struct json_cur *j, const struct json_val *obj, json_member_fn cb, void *ctx)
{
	struct json_cur sub = {obj->p, obj->p + obj->n, NULL, NULL, 0, 0};
	int st = parse_object(&sub, cb, ctx);
	if (st == -1) {
		j->err = sub.err;
		j->err_at = sub.err_at;
	}
	return st;
}

/* The event members the reader keeps and where each goes, by key length: the keys of n bytes
 * are ev_keys[ev_key_from[n] .. ev_key_from[n + 1]). Names are zero-padded to 4 bytes. */
#define EV_OFF(f) offsetof(struct trace_ev, f)
static const struct ev_key {
	char name[5];
	uint16_t off;
} ev_keys[] = {{"ph", EV_OFF(ph)},    {"ts", EV_OFF(ts)},   {"id", EV_OFF(id)},
               {"bp", EV_OFF(bp)},    {"pid", EV_OFF(pid)}, {"tid", EV_OFF(tid)},
               {"cat", EV_OFF(cat)},  {"dur", EV_OFF(dur)}, {"name", EV_OFF(name)},
               {"args", EV_OFF(args)}};
#undef EV_OFF
static const uint8_t ev_key_from[6] = {0, 0, 0, 4, 8, 10};

static int ev_member(void *ctx, const struct json_val *k, const struct json_val *v)
{
	/* This runs for every member of every event: the key's length leaves at most four
	 * candidates, each compared as one 4-byte word. */
	if (k->n < 2 || k->n > 4)
		return 0;
	char w[4] = {0};
	memcpy(w, k->p, k->n);
	for (unsigned i = ev_key_from[k->n]; i < ev_key_from[k->n + 1]; i++)
		if (memcmp(w, ev_keys[i].name, 4) == 0) {
			*(struct json_val *)((char *)ctx + ev_keys[i].off) = *v;
			break;
		}
	return 0;
}

int trace_json_event(struct json_cur *j, struct trace_ev *e)
{
	return parse_object(j, ev_member, e);
}
