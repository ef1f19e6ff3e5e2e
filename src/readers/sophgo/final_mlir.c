/*
 * final_mlir.c — parser for the compiler's final.mlir as far as the profilers use it
 * (sophgo-cdm.md §9, sophgo-bmprofile.md §8.3): the MLIR `loc` name of the op on every line
 * (the names users recognise: "80_Relu", "load_0"), the layer groups (`tpu.Group` ... `tpu.Yield`
 * line ranges) and a few module attributes (name, chip, mode, cores, FLOPs). Works on a memory
 * buffer; owns nothing but the struct sg_mlir it fills (sg_mlir_free).
 *
 * Lines understood (1-based line numbers, the `file-line` of tensor_location.json):
 *   module @<name> attributes {module.FLOPs = <n> : i64, module.chip = "<s>", module.mode =
 *       "<s>", module.cores = <n> : i64, ...}          first `module @` line only
 *   <anything> loc(<loc>)                           an op line; the last ` loc(` names it
 *   #loc[<n>] = loc(<loc>)                          alias definitions (usually at the end)
 *   <loc> := "name" | "name"(<loc>) | #loc<n> | fused[<loc>, ...] | unknown | callsite(...)
 *       a quoted string names it; otherwise the first #loc reference inside, resolved through
 *       the aliases (at most 16 levels, so cycles end); fused names join with ", "
 *   a line containing "Group" and not "Parallel" opens a group; each open group is closed by
 *   the first later line containing "Yield"; its members are the lines strictly between
 *   (the vendor's rule: PerfAI_web mlir_json.py, members range(group+2, yield+1) 0-based).
 * Tolerance: this is a side file. Nothing here fails except out of memory; lines that look
 * like alias definitions or loc()s but do not parse (unterminated quote, bad number) are
 * skipped and counted (bad_lines, first_bad_line) for the caller to warn about. CRLF line
 * ends, trailing blanks and indentation are accepted; unknown attributes are ignored.
 */
#include "readers/sophgo/sg_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define ALIAS_MAX (1u << 30) /* highest #loc number understood */
#define RESOLVE_DEPTH 16

/* An alias (#locN) or an op's own loc(...): the span of its body inside the text. */
struct span {
	size_t off, len;
	uint8_t set;
};

/* Alias definitions, sorted by key after the pass (key 0 = "#loc", k + 1 = "#loc<k>"); kept
 * sparse so a huge #loc number costs nothing. A key defined twice keeps its last definition. */
struct alias {
	size_t key, order;
	struct span sp;
};

struct parse {
	const char *t;
	size_t n;
	struct sg_mlir *m;
	struct alias *alias;
	size_t nalias, cap_alias;
};

static int cmp_alias(const void *a, const void *b)
{
	const struct alias *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static const struct span *alias_get(const struct parse *ps, size_t key)
{
	size_t lo = 0, hi = ps->nalias;
	while (lo < hi) { /* last entry with this key */
		size_t mid = lo + (hi - lo) / 2;
		if (ps->alias[mid].key <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ps->alias[lo - 1].key == key ? &ps->alias[lo - 1].sp : NULL;
}

static int grow(void **arr, size_t elem, size_t need, size_t *cap)
{
	void *p = tp_grow(*arr, elem, need, cap);
	if (!p)
		return 0;
	*arr = p;
	return 1;
}

static const char *find(const char *s, size_t n, const char *pat)
{
	size_t k = strlen(pat);
	const char *end = s + n, *q = s;
	while (k <= (size_t)(end - q) &&
	       (q = memchr(q, pat[0], (size_t)(end - q) - k + 1)) != NULL) {
		if (!memcmp(q, pat, k))
			return q;
		q++;
	}
	return NULL;
}

/* Last occurrence of pat in s[0..n). */
static const char *rfind(const char *s, size_t n, const char *pat)
{
	const char *hit = NULL, *q = s, *f;
	while ((f = find(q, (size_t)(s + n - q), pat)) != NULL) {
		hit = f;
		q = f + 1;
	}
	return hit;
}

/* End of the quoted string starting at s[0] == '"' (index of the closing quote), or 0. */
static size_t quote_end(const char *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == '"')
			return i;
	}
	return 0;
}

/* The body of `loc(` ... `)` at s (s points at "loc("): balanced parentheses outside quotes.
 * Returns 1 and the body span, or 0 when unterminated. */
static int loc_body(const char *base, const char *s, size_t n, struct span *out)
{
	size_t i = 4, depth = 1;
	while (i < n) {
		char c = s[i];
		if (c == '"') {
			size_t q = quote_end(s + i, n - i);
			if (!q)
				return 0;
			i += q + 1;
			continue;
		}
		if (c == '(')
			depth++;
		else if (c == ')' && --depth == 0) {
			out->off = (size_t)(s - base) + 4;
			out->len = i - 4;
			out->set = 1;
			return 1;
		}
		i++;
	}
	return 0;
}

/* "#loc" -> 0, "#loc<k>" -> k + 1; sets *used to the characters read. 0 if not a reference
 * or the number is out of range. */
static int alias_ref(const char *s, size_t n, size_t *key, size_t *used)
{
	if (n < 4 || memcmp(s, "#loc", 4) != 0)
		return 0;
	size_t i = 4, v = 0;
	if (i < n && s[i] >= '0' && s[i] <= '9') {
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			v = v * 10 + (size_t)(s[i] - '0');
			if (v >= ALIAS_MAX)
				return 0;
			i++;
		}
		v++;
	}
	if (i < n && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
		return 0; /* #locfoo: not a reference */
	*key = v;
	*used = i;
	return 1;
}

/* Appends the unescaped quoted string s[1..q) to m->strs. */
static int put_str(struct parse *ps, const char *s, size_t q)
{
	struct sg_mlir *m = ps->m;
	if (!grow((void **)&m->strs, 1, m->nstrs + q + 1, &m->cap_strs))
		return 0;
	for (size_t i = 1; i < q; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < q && (s[i + 1] == '"' || s[i + 1] == '\\'))
			c = s[++i];
		m->strs[m->nstrs++] = c;
	}
	return 1;
}

/* Appends the name of a loc body to m->strs (no terminator). */
static int resolve(struct parse *ps, struct span sp, unsigned depth)
{
	const char *s = ps->t + sp.off;
	size_t n = sp.len;
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	if (n && *s == '"') {
		size_t q = quote_end(s, n);
		return q ? put_str(ps, s, q) : 1;
	}
	if (depth >= RESOLVE_DEPTH)
		return 1;
	int fused = n >= 6 && !memcmp(s, "fused", 5);
	int wrote = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' && !fused) {
			size_t q = quote_end(s + i, n - i);
			return q ? put_str(ps, s + i, q) : 1;
		}
		size_t key, used;
		if (s[i] != '#' || !alias_ref(s + i, n - i, &key, &used))
			continue;
		i += used - 1;
		const struct span *as = alias_get(ps, key);
		if (!as)
			continue;
		size_t before = ps->m->nstrs;
		if (wrote) {
			if (!grow((void **)&ps->m->strs, 1, ps->m->nstrs + 2, &ps->m->cap_strs))
				return 0;
			ps->m->strs[ps->m->nstrs++] = ',';
			ps->m->strs[ps->m->nstrs++] = ' ';
		}
		size_t mid = ps->m->nstrs;
		if (!resolve(ps, *as, depth + 1))
			return 0;
		if (ps->m->nstrs == mid)
			ps->m->nstrs = before; /* nothing resolved: drop the separator */
		else
			wrote = 1;
		if (!fused && wrote)
			return 1;
	}
	return 1;
}

static void bad(struct sg_mlir *m, unsigned long line)
{
	if (!m->bad_lines++)
		m->first_bad_line = line;
}

/* Where the value of attribute `key = ...` starts inside s[0..n) (*at, may be n); 0 when the
 * key or its '=' is absent. */
static int attr_at(const char *s, size_t n, const char *key, size_t *at)
{
	const char *k = find(s, n, key);
	if (!k)
		return 0;
	size_t i = (size_t)(k - s) + strlen(key);
	while (i < n && s[i] == ' ')
		i++;
	if (i >= n || s[i] != '=')
		return 0;
	i++;
	while (i < n && s[i] == ' ')
		i++;
	*at = i;
	return 1;
}

/* Numeric attribute `key = <n>` inside s[0..n). */
static int attr_num(const char *s, size_t n, const char *key, int64_t *out)
{
	size_t i;
	if (!attr_at(s, n, key, &i))
		return 0;
	size_t b = i;
	while (i < n && s[i] >= '0' && s[i] <= '9' && i - b < 18)
		i++;
	if (i == b)
		return 0;
	int64_t v = 0;
	for (size_t j = b; j < i; j++)
		v = v * 10 + (s[j] - '0');
	*out = v;
	return 1;
}

/* String attribute `key = "<s>"` copied to out (cut to outn - 1 bytes). */
static int attr_str(const char *s, size_t n, const char *key, char *out, size_t outn)
{
	size_t i;
	if (!attr_at(s, n, key, &i))
		return 0;
	if (i >= n || s[i] != '"')
		return 0;
	size_t q = quote_end(s + i, n - i);
	if (!q)
		return 0;
	size_t len = q - 1 < outn - 1 ? q - 1 : outn - 1;
	memcpy(out, s + i + 1, len);
	out[len] = 0;
	return 1;
}

static void module_line(struct sg_mlir *m, const char *s, size_t n)
{
	if (m->have_module)
		return;
	const char *at = find(s, n, "module @");
	if (!at)
		return;
	m->have_module = 1;
	size_t i = (size_t)(at - s) + 8, b = i;
	while (i < n && s[i] != ' ' && s[i] != '{' && i - b < sizeof m->module - 1)
		i++;
	memcpy(m->module, s + b, i - b);
	m->module[i - b] = 0;
	m->have_flops = attr_num(s, n, "module.FLOPs", &m->flops);
	m->have_cores = attr_num(s, n, "module.cores", &m->cores);
	attr_str(s, n, "module.chip", m->chip, sizeof m->chip);
	attr_str(s, n, "module.mode", m->mode, sizeof m->mode);
}

int sg_mlir_parse(const char *text, size_t len, struct sg_mlir *m)
{
	memset(m, 0, sizeof *m);
	struct parse ps = {.t = text, .n = len, .m = m};
	struct span *own = NULL; /* per op: its loc body */
	size_t cap_own = 0, cap_ops = 0, cap_groups = 0;
	size_t pos = 0;
	unsigned long no = 0;
	int rc = TP_OK;
	const char *s;
	size_t n;
	while (sg_lines_next(text, len, &pos, &s, &n)) {
		no++;
		size_t ind = 0;
		while (ind < n && (s[ind] == ' ' || s[ind] == '\t'))
			ind++;
		if (no > UINT32_MAX)
			break;
		/* Alias definition: #loc[N] = loc(...) */
		size_t key, used;
		if (n - ind > 4 && s[ind] == '#' && alias_ref(s + ind, n - ind, &key, &used)) {
			const char *l = find(s + ind + used, n - ind - used, "loc(");
			struct span sp;
			if (!l || !loc_body(text, l, (size_t)(s + n - l), &sp)) {
				bad(m, no);
				continue;
			}
			if (!grow((void **)&ps.alias, sizeof *ps.alias, ps.nalias + 1,
			          &ps.cap_alias)) {
				rc = TP_ENOMEM;
				break;
			}
			ps.alias[ps.nalias] =
			    (struct alias){.key = key, .order = ps.nalias, .sp = sp};
			ps.nalias++;
			continue;
		}
		module_line(m, s, n);
		if (find(s, n, "Group") && !find(s, n, "Parallel")) {
			if (!grow((void **)&m->groups, sizeof *m->groups, m->ngroups + 1,
			          &cap_groups)) {
				rc = TP_ENOMEM;
				break;
			}
			m->groups[m->ngroups++] = (struct sg_mlir_group){.line = (uint32_t)no};
		}
		if (find(s, n, "Yield"))
			for (size_t g = m->ngroups; g-- > 0 && !m->groups[g].yield;)
				m->groups[g].yield = (uint32_t)no;
		const char *l = rfind(s, n, " loc(");
		if (!l)
			continue;
		struct span sp;
		if (!loc_body(text, l + 1, (size_t)(s + n - l - 1), &sp)) {
			bad(m, no);
			continue;
		}
		if (!grow((void **)&m->ops, sizeof *m->ops, m->nops + 1, &cap_ops) ||
		    !grow((void **)&own, sizeof *own, m->nops + 1, &cap_own)) {
			rc = TP_ENOMEM;
			break;
		}
		own[m->nops] = sp;
		m->ops[m->nops++] = (struct sg_mlir_op){.line = (uint32_t)no};
	}
	m->lines = no;
	if (ps.nalias > 1)
		qsort(ps.alias, ps.nalias, sizeof *ps.alias, cmp_alias);
	/* Names, now that every alias is known. */
	for (size_t i = 0; rc == TP_OK && i < m->nops; i++) {
		m->ops[i].name = (uint32_t)m->nstrs;
		if (!resolve(&ps, own[i], 0) ||
		    !grow((void **)&m->strs, 1, m->nstrs + 1, &m->cap_strs)) {
			rc = TP_ENOMEM;
			break;
		}
		m->strs[m->nstrs++] = 0;
		if (m->nstrs > UINT32_MAX / 2) {
			rc = TP_ENOMEM;
			break;
		}
	}
	/* Groups without a Yield have no members (the vendor's rule). */
	for (size_t g = 0; g < m->ngroups; g++) {
		struct sg_mlir_group *gr = &m->groups[g];
		if (gr->yield > gr->line + 1) {
			gr->first = gr->line + 1;
			gr->last = gr->yield - 1;
		}
	}
	tp_free(own);
	tp_free(ps.alias);
	if (rc != TP_OK)
		sg_mlir_free(m);
	return rc;
}

/* The first of n records (stride bytes apart, sorted by the uint32_t `line` at offset off)
 * whose line is not below `line`; n when none. */
static size_t lower_line(const void *base, size_t n, size_t stride, size_t off, uint32_t line)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t v;
		memcpy(&v, (const char *)base + mid * stride + off, sizeof v);
		if (v < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *sg_mlir_name(const struct sg_mlir *m, uint32_t line)
{
	size_t lo =
	    lower_line(m->ops, m->nops, sizeof *m->ops, offsetof(struct sg_mlir_op, line), line);
	if (lo < m->nops && m->ops[lo].line == line)
		return m->strs + m->ops[lo].name;
	return NULL;
}

int sg_mlir_group_of(const struct sg_mlir *m, uint32_t line)
{
	/* Groups are in line order and their ranges do not nest in compiler output. The vendor
	 * takes the first group whose range holds the line: binary search for the groups opened
	 * before the line, then try the last 64 of them in order, in case ranges overlap (a Group
	 * line without its own Yield shares the next one). */
	size_t lo = lower_line(m->groups, m->ngroups, sizeof *m->groups,
	                       offsetof(struct sg_mlir_group, line), line);
	for (size_t g = lo > 64 ? lo - 64 : 0; g < lo; g++)
		if (m->groups[g].first && line >= m->groups[g].first && line <= m->groups[g].last)
			return (int)g;
	return -1;
}

void sg_mlir_free(struct sg_mlir *m)
{
	tp_free(m->ops);
	tp_free(m->groups);
	tp_free(m->strs);
	memset(m, 0, sizeof *m);
}
