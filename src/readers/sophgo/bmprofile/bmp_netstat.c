/*
 * bmp_netstat.c — parser for net_stat.sim, the compiler's cycle-simulator log copied into the
 * profile directory (sophgo-bmprofile.md §7). Only its totals are kept (as profile metadata, a
 * comparison figure, not a timeline); every item is still checked so a damaged file is
 * reported with its line.
 *
 * Lines understood (everything else — rules, the legend, "ENGINE_BD ENGINE_GDMA" headers,
 * "DDR BW USAGE", "#####" — is ignored):
 *   <item> [<item>]          items: [Name]|OP|s:<n>|b:<n>|g:<n>|e:<n>|t:<n>[|dr:<n>|sz:<n>|bw:<x>]
 *   API_END total_cycle:<n>|b:<n>|g:<n>
 *   TCYC : <n>. (bdc_cycle:<n>, gdma_cycle:<n>)
 *   GDMA SUMMARY : |dr[0] S2L:<n>|dr[1] L2S:<n>|dr[2] S2S:<n>|dr[3] L2L:<n>
 *   flops: <n>, runtime: <x>ms, ComputationAbility: <x>T      (summed over sections)
 * Tolerance (a side file): blanks around every ':' separator ("TCYC : 224969",
 * "total_cycle : 5"), CRLF, trailing blanks, lines in any order, unknown item keys and extra
 * columns are accepted; TCYC without its (bdc_cycle, gdma_cycle) part gives the total alone.
 * A line that still does not parse is skipped and counted (bad_lines, first_bad_line,
 * bad_what) for the caller's one warning; the parse itself never fails.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <stdio.h>
#include <string.h>

static int is_num(const char *s, size_t n, int allow_dot)
{
	if (n == 0)
		return 0;
	size_t i = 0;
	if (s[0] == '-')
		i++;
	if (i == n)
		return 0;
	int dots = 0;
	for (; i < n; i++) {
		if (s[i] == '.' && allow_dot && !dots++)
			continue;
		if (s[i] < '0' || s[i] > '9')
			return 0;
	}
	return 1;
}

/* Number after `key` in s[0..n): key, optional blanks, ':' (part of key or not), optional
 * blanks, digits. Returns 1 if found and parsed. */
static int num_after(const char *s, size_t n, const char *key, uint64_t *out)
{
	size_t k = strlen(key);
	int colon = k && key[k - 1] == ':';
	if (colon)
		k--;
	for (size_t i = 0; i + k <= n; i++) {
		if (memcmp(s + i, key, k) != 0)
			continue;
		size_t b = i + k;
		while (b < n && (s[b] == ' ' || s[b] == '\t'))
			b++;
		if (colon) {
			if (b >= n || s[b] != ':')
				continue;
			b++;
			while (b < n && (s[b] == ' ' || s[b] == '\t'))
				b++;
		}
		size_t e = b;
		while (e < n && s[e] >= '0' && s[e] <= '9')
			e++;
		if (e > b && tp_parse_u64(s + b, e - b, out) == 0)
			return 1;
	}
	return 0;
}

static void bad(struct bmp_netstat *ns, unsigned long no, const char *what, const char *s, size_t n)
{
	if (ns->bad_lines++)
		return;
	ns->first_bad_line = no;
	snprintf(ns->bad_what, sizeof ns->bad_what, "%s \"%.*s\"", what, (int)(n > 60 ? 60 : n), s);
}

/* The layer id an item's name ends in ("Conv2D_26" -> 26), -1 when it ends in no "_<digits>". */
static int64_t name_layer(const char *s, size_t n)
{
	size_t d = n;
	while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
		d--;
	if (d == n || d == 0 || s[d - 1] != '_' || n - d > 9)
		return -1;
	uint64_t v = 0;
	tp_parse_u64(s + d, n - d, &v);
	return (int64_t)v;
}

/* Checks one item token; returns 1 if well formed, and counts it (and keeps its ids and
 * cost in *it when it is not NULL). */
static int item(const char *s, size_t n, struct bmp_netstat *ns, struct bmp_sim_item *it)
{
	size_t fields = 0, i = 0;
	int is_gdma = 0;
	uint64_t b = 0, g = 0, t = 0;
	int64_t layer = -1;
	while (i <= n) {
		size_t e = tp_field_end(s, n, i, '|');
		if (fields == 0)
			layer = name_layer(s + i, e - i);
		if (fields >= 2) {
			/* key:value */
			size_t colon = tp_field_end(s, e, i, ':');
			if (colon == e || colon == i)
				return 0;
			size_t kn = colon - i;
			const char *k = s + i;
			int known = (kn == 1 && strchr("sbget", k[0])) ||
			            (kn == 2 && !memcmp(k, "dr", 2)) ||
			            (kn == 2 && (!memcmp(k, "sz", 2) || !memcmp(k, "bw", 2)));
			/* Known keys must carry numbers; other keys (a newer compiler's) are
			 * ignored. */
			if (known && !is_num(s + colon + 1, e - colon - 1, kn == 2 && k[0] == 'b'))
				return 0;
			if (kn == 2 && !memcmp(k, "dr", 2))
				is_gdma = 1;
			if (kn == 1 && strchr("bgt", k[0])) {
				uint64_t v = 0;
				tp_parse_u64(s + colon + 1, e - colon - 1, &v);
				*(k[0] == 'b' ? &b : k[0] == 'g' ? &g : &t) = v;
			}
		} else if (fields == 1 && e == i) {
			return 0; /* empty op (the name may be empty: sync commands have none) */
		}
		fields++;
		i = e + 1;
	}
	if (fields < 7)
		return 0;
	if (is_gdma)
		ns->gdma_items++;
	else
		ns->bd_items++;
	if (it)
		*it = (struct bmp_sim_item){.b = (uint32_t)b,
		                            .g = (uint32_t)g,
		                            .t = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t,
		                            .gdma = (uint8_t)is_gdma,
		                            .layer = layer};
	return 1;
}

/* Appends *it to the engine's list of items (out may be NULL: not kept). 0 when out of
 * memory. */
static int keep(struct bmp_sim_items *out, const struct bmp_sim_item *it)
{
	if (!out)
		return 1;
	int e = it->gdma;
	struct bmp_sim_item *v = tp_grow(out->v[e], sizeof *v, out->n[e] + 1, &out->cap[e]);
	if (!v)
		return 0;
	out->v[e] = v;
	v[out->n[e]++] = *it;
	return 1;
}

void bmp_sim_items_free(struct bmp_sim_items *it)
{
	for (int e = 0; e < 2; e++)
		tp_free(it->v[e]);
	memset(it, 0, sizeof *it);
}

int bmp_netstat_parse(const char *text, size_t len, const char *path, struct bmp_netstat *ns,
                      struct tp_diag *d)
{
	return bmp_netstat_parse_items(text, len, path, ns, d, NULL);
}

int bmp_netstat_parse_items(const char *text, size_t len, const char *path, struct bmp_netstat *ns,
                            struct tp_diag *d, struct bmp_sim_items *items)
{
	(void)path;
	(void)d;
	memset(ns, 0, sizeof *ns);
	size_t pos = 0;
	unsigned long no = 0;
	uint64_t tcyc = 0;
	int have_tcyc = 0;
	const char *s;
	size_t n;
	while (sg_lines_next(text, len, &pos, &s, &n)) {
		no++;
		while (n && (*s == ' ' || *s == '\t')) {
			s++; /* indentation (item lines are split on blanks anyway) */
			n--;
		}
		uint64_t v;
		if (n >= 7 && !memcmp(s, "API_END", 7)) {
			if (!num_after(s, n, "total_cycle:", &v)) {
				bad(ns, no, "API_END line without total_cycle", s, n);
				continue;
			}
			ns->total_cycle = v;
			ns->have_total = 1;
			continue;
		}
		if (n >= 4 && !memcmp(s, "TCYC", 4)) {
			if (!num_after(s, n, "TCYC:", &tcyc)) {
				bad(ns, no, "malformed TCYC line", s, n);
				continue;
			}
			have_tcyc = 1;
			num_after(s, n, "bdc_cycle:", &ns->bdc_cycle);
			num_after(s, n, "gdma_cycle:", &ns->gdma_cycle);
			continue;
		}
		if (n >= 12 && !memcmp(s, "GDMA SUMMARY", 12)) {
			static const char *const keys[4] = {"S2L:", "L2S:", "S2S:", "L2L:"};
			int got = 0;
			for (int k = 0; k < 4; k++)
				got += num_after(s, n, keys[k], &ns->dr_bytes[k]);
			if (!got)
				bad(ns, no, "malformed GDMA SUMMARY line", s, n);
			continue;
		}
		if (n >= 5 && !memcmp(s, "flops", 5) && (n == 5 || s[5] == ':' || s[5] == ' ')) {
			if (!num_after(s, n, "flops:", &v)) {
				bad(ns, no, "malformed flops line", s, n);
				continue;
			}
			ns->flops += v;
			const char *r = NULL;
			for (size_t i = 0; i + 7 <= n; i++)
				if (!memcmp(s + i, "runtime", 7)) {
					size_t j = i + 7;
					while (j < n && s[j] == ' ')
						j++;
					if (j < n && s[j] == ':') {
						j++;
						while (j < n && s[j] == ' ')
							j++;
						r = s + j;
					}
					break;
				}
			if (r) {
				size_t rn = 0;
				while (r + rn < s + n &&
				       ((r[rn] >= '0' && r[rn] <= '9') || r[rn] == '.'))
					rn++;
				snprintf(ns->runtime_ms, sizeof ns->runtime_ms, "%.*s",
				         (int)(rn > 30 ? 30 : rn), r);
			}
			continue;
		}
		/* Item lines: whitespace-separated tokens; any token with '|' is an item. */
		size_t i = 0;
		while (i < n) {
			while (i < n && (s[i] == ' ' || s[i] == '\t'))
				i++;
			size_t b = i;
			while (i < n && s[i] != ' ' && s[i] != '\t')
				i++;
			if (i == b)
				break;
			if (!memchr(s + b, '|', i - b))
				continue;
			struct bmp_sim_item it;
			if (!item(s + b, i - b, ns, &it)) {
				bad(ns, no, "malformed item", s + b, i - b);
				break;
			}
			if (!keep(items, &it))
				return TP_ENOMEM;
		}
	}
	if (!ns->have_total && have_tcyc) {
		ns->total_cycle = tcyc;
		ns->have_total = 1;
	}
	return TP_OK;
}
