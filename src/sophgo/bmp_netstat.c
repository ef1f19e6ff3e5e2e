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
 */
#include "sophgo/sophgo_int.h"

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

/* Number right after `key` in line[0..n) (digits only). Returns 1 if found and parsed. */
static int num_after(const char *s, size_t n, const char *key, uint64_t *out)
{
	size_t k = strlen(key);
	for (size_t i = 0; i + k <= n; i++) {
		if (memcmp(s + i, key, k) != 0)
			continue;
		size_t b = i + k, e = b;
		while (e < n && s[e] >= '0' && s[e] <= '9')
			e++;
		return e > b && tp_parse_u64(s + b, e - b, out) == 0;
	}
	return 0;
}

/* Checks one item token; returns 1 if well formed, and counts it. */
static int item(const char *s, size_t n, struct bmp_netstat *ns)
{
	size_t fields = 0, i = 0;
	int is_gdma = 0;
	while (i <= n) {
		size_t e = i;
		while (e < n && s[e] != '|')
			e++;
		if (fields >= 2) {
			/* key:value */
			size_t colon = i;
			while (colon < e && s[colon] != ':')
				colon++;
			if (colon == e || colon == i)
				return 0;
			size_t kn = colon - i;
			const char *k = s + i;
			int ok_key = (kn == 1 && strchr("sbget", k[0])) || (kn == 2 && !memcmp(k, "dr", 2)) ||
			             (kn == 2 && (!memcmp(k, "sz", 2) || !memcmp(k, "bw", 2)));
			if (!ok_key || !is_num(s + colon + 1, e - colon - 1, kn == 2 && k[0] == 'b'))
				return 0;
			if (kn == 2 && !memcmp(k, "dr", 2))
				is_gdma = 1;
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
	return 1;
}

int bmp_netstat_parse(const char *text, size_t len, const char *path, struct bmp_netstat *ns,
                      struct tp_diag *d)
{
	memset(ns, 0, sizeof *ns);
	size_t pos = 0;
	unsigned long no = 0;
	while (pos < len) {
		size_t e = pos;
		while (e < len && text[e] != '\n')
			e++;
		no++;
		const char *s = text + pos;
		size_t n = e - pos;
		pos = e + 1;
		if (n && s[n - 1] == '\r')
			n--;
		uint64_t v;
		if (n >= 7 && !memcmp(s, "API_END", 7)) {
			if (!num_after(s, n, "total_cycle:", &v))
				return tp_diag_line(d, TP_EFORMAT, path, no, "API_END line without total_cycle");
			ns->total_cycle = v;
			ns->have_total = 1;
			continue;
		}
		if (n >= 4 && !memcmp(s, "TCYC", 4)) {
			if (!num_after(s, n, "bdc_cycle:", &ns->bdc_cycle) ||
			    !num_after(s, n, "gdma_cycle:", &ns->gdma_cycle))
				return tp_diag_line(d, TP_EFORMAT, path, no, "malformed TCYC line");
			continue;
		}
		if (n >= 12 && !memcmp(s, "GDMA SUMMARY", 12)) {
			static const char *const keys[4] = {"S2L:", "L2S:", "S2S:", "L2L:"};
			for (int k = 0; k < 4; k++)
				if (!num_after(s, n, keys[k], &ns->dr_bytes[k]))
					return tp_diag_line(d, TP_EFORMAT, path, no, "malformed GDMA SUMMARY line");
			continue;
		}
		if (n >= 6 && !memcmp(s, "flops:", 6)) {
			if (!num_after(s, n, "flops: ", &v))
				return tp_diag_line(d, TP_EFORMAT, path, no, "malformed flops line");
			ns->flops += v;
			const char *r = NULL;
			for (size_t i = 0; i + 9 <= n; i++)
				if (!memcmp(s + i, "runtime: ", 9)) {
					r = s + i + 9;
					break;
				}
			if (r) {
				size_t rn = 0;
				while (r + rn < s + n && ((r[rn] >= '0' && r[rn] <= '9') || r[rn] == '.'))
					rn++;
				snprintf(ns->runtime_ms, sizeof ns->runtime_ms, "%.*s", (int)(rn > 30 ? 30 : rn),
				         r);
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
			if (!item(s + b, i - b, ns))
				return tp_diag_line(d, TP_EFORMAT, path, no, "malformed item \"%.*s\"",
				                    (int)(i - b > 80 ? 80 : i - b), s + b);
		}
	}
	return TP_OK;
}
