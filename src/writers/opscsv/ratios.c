/*
 * ratios.c — the weight-shape x target-sparsity perf-ratio table behind the sparse what-if
 * columns of ops.csv: the built-in defaults and the parser of the user file given with
 * --sparse-ratios. The file format is documented in docs/sparse-ratios.md; every parse error
 * says "FILE:LINE: message". Owns the table's rows array.
 */
#include "writers/opscsv/opscsv.h"

#include <string.h>

/* Built-in figures: the example values of the Intel Neural Engine profiling docs
 * (neural-engine-cambricon.md §A.2: 256x256 -> 4 / 2.5 / 2; 256x1024 -> 4.5 / 3 / 2.5;
 * 1024x256 -> 5 / 3.5 / 3; "others" is 1 there). They are illustrations, not measurements
 * of any machine, which is why docs/sparse-ratios.md tells users to supply their own. */
static const struct tp_sparse_ratio_row builtin[] = {
    {"256x256", {4.0, 2.5, 2.0, 1.0}, 0},
    {"256x1024", {4.5, 3.0, 2.5, 1.0}, 0},
    {"1024x256", {5.0, 3.5, 3.0, 1.0}, 0},
};
static const struct tp_sparse_ratio_row builtin_fallback = {"*", {4.0, 2.5, 2.0, 1.0}, 0};

#define AIM_DEFAULT 90
#define RATIO_MAX 1000.0

static int push_row(struct tp_sparse_ratios *r, const struct tp_sparse_ratio_row *row)
{
	struct tp_sparse_ratio_row *g = tp_grow(r->rows, sizeof *r->rows, r->count + 1, &r->cap);
	if (!g)
		return TP_ENOMEM;
	r->rows = g;
	r->rows[r->count++] = *row;
	return TP_OK;
}

int tp_sparse_ratios_defaults(struct tp_sparse_ratios *r)
{
	memset(r, 0, sizeof *r);
	r->fallback = builtin_fallback;
	r->aim_pct = AIM_DEFAULT;
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		if (push_row(r, &builtin[i])) {
			tp_sparse_ratios_free(r);
			return TP_ENOMEM;
		}
	return TP_OK;
}

void tp_sparse_ratios_free(struct tp_sparse_ratios *r)
{
	tp_free(r->rows);
	memset(r, 0, sizeof *r);
}

/* Canonical form of a shape token: positive decimal dims joined by 'x' (1..TP_MAX_DIMS of
 * them, each < 2^31), reprinted without leading zeros. Returns 0 on success. */
static int canon_shape(const char *s, size_t n, char out[TP_SPARSE_SHAPE_MAX])
{
	size_t pos = 0, o = 0;
	int dims = 0;
	while (pos <= n) {
		size_t e = tp_field_end(s, n, pos, 'x');
		uint64_t v;
		if (tp_parse_u64(s + pos, e - pos, &v) || v == 0 || v > INT32_MAX ||
		    ++dims > TP_MAX_DIMS)
			return -1;
		int w = snprintf(out + o, TP_SPARSE_SHAPE_MAX - o, "%s%llu", o ? "x" : "",
		                 (unsigned long long)v);
		if (w < 0 || (size_t)w >= TP_SPARSE_SHAPE_MAX - o)
			return -1;
		o += (size_t)w;
		pos = e + 1;
	}
	return 0;
}

/* A locale-independent positive decimal: digits, optionally '.' and digits. */
static int parse_ratio(const char *s, size_t n, double *out)
{
	double v = 0, scale = 1;
	size_t i = 0, digits = 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
		v = v * 10 + (s[i] - '0');
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			scale /= 10;
			v += (s[i] - '0') * scale;
		}
	}
	if (i != n || digits == 0 || digits > 15 || !(v > 0) || v > RATIO_MAX)
		return -1;
	*out = v;
	return 0;
}

#define MAX_FIELDS 6

/* One line of a ratio file split into fields (at most MAX_FIELDS; nf = MAX_FIELDS + 1 when
 * there are more), with where it is for messages. */
struct fields {
	const char *path;
	unsigned long line;
	const char *f[MAX_FIELDS];
	size_t fl[MAX_FIELDS], nf;
};

/* Splits ln[0..n) on blanks and commas (so rows pasted from a CSV also parse). */
static void split_fields(const char *ln, size_t n, struct fields *x)
{
	x->nf = 0;
	for (size_t i = 0; i < n;) {
		while (i < n && (ln[i] == ' ' || ln[i] == '\t' || ln[i] == '\r' || ln[i] == ','))
			i++;
		if (i == n)
			break;
		size_t b = i;
		while (i < n && !(ln[i] == ' ' || ln[i] == '\t' || ln[i] == '\r' || ln[i] == ','))
			i++;
		if (x->nf == MAX_FIELDS) {
			x->nf++;
			break;
		}
		x->f[x->nf] = ln + b;
		x->fl[x->nf++] = i - b;
	}
}

/* An "aim PERCENT" line; *aim_line is the line of an earlier one (0: none). TP_OK or
 * TP_EFORMAT with d set. */
static int parse_aim(struct tp_sparse_ratios *r, const struct fields *x, unsigned long *aim_line,
                     struct tp_diag *d)
{
	int64_t v;
	size_t al = x->nf == 2 ? x->fl[1] : 0;
	if (al && x->f[1][al - 1] == '%')
		al--;
	if (x->nf != 2 || tp_parse_i64(x->f[1], al, &v) || v < 1 || v > 99)
		return tp_diag_line(d, TP_EFORMAT, x->path, x->line,
		                    "expected 'aim PERCENT' with a whole percent from 1 to 99");
	if (*aim_line)
		return tp_diag_line(d, TP_EFORMAT, x->path, x->line,
		                    "aim already given on line %lu", *aim_line);
	*aim_line = x->line;
	r->aim_pct = (int)v;
	return TP_OK;
}

/* A row "SHAPE R90 R80 R70 ROTHERS" (SHAPE '*': the fallback row; *star_line is the line of an
 * earlier one, 0: none). TP_OK, TP_EFORMAT or TP_ENOMEM with d set. */
static int parse_row(struct tp_sparse_ratios *r, const struct fields *x, unsigned long *star_line,
                     struct tp_diag *d)
{
	int st;
	struct tp_sparse_ratio_row row;
	memset(&row, 0, sizeof row);
	row.line = x->line;
	int is_star = x->fl[0] == 1 && x->f[0][0] == '*';
	if (is_star) {
		row.shape[0] = '*';
	} else if (canon_shape(x->f[0], x->fl[0], row.shape)) {
		return tp_diag_line(
		    d, TP_EFORMAT, x->path, x->line,
		    "bad weight shape '%.*s': expected positive dims joined by 'x', "
		    "e.g. 256x1024",
		    (int)(x->fl[0] > 40 ? 40 : x->fl[0]), x->f[0]);
	}
	if (x->nf != 5) {
		return tp_diag_line(d, TP_EFORMAT, x->path, x->line,
		                    "expected 5 fields (weight shape and ratios for 90%%, 80%%, "
		                    "70%% and others), found %s%zu",
		                    x->nf > MAX_FIELDS ? "more than " : "",
		                    x->nf > MAX_FIELDS ? MAX_FIELDS : x->nf);
	}
	for (int k = 0; k < 4; k++)
		if (parse_ratio(x->f[k + 1], x->fl[k + 1], &row.ratio[k])) {
			static const char *const col[] = {"90%", "80%", "70%", "others"};
			return tp_diag_line(
			    d, TP_EFORMAT, x->path, x->line,
			    "bad %s ratio '%.*s': expected a decimal number greater than "
			    "0 and at most 1000, e.g. 2.5",
			    col[k], (int)(x->fl[k + 1] > 40 ? 40 : x->fl[k + 1]), x->f[k + 1]);
		}
	if (is_star) {
		if (*star_line) {
			return tp_diag_line(d, TP_EFORMAT, x->path, x->line,
			                    "fallback row '*' already given on line %lu",
			                    *star_line);
		}
		*star_line = x->line;
		r->fallback = row;
		return TP_OK;
	}
	for (size_t i = 0; i < r->count; i++)
		if (strcmp(r->rows[i].shape, row.shape) == 0) {
			return tp_diag_line(d, TP_EFORMAT, x->path, x->line,
			                    "weight shape %s already given on line %lu", row.shape,
			                    r->rows[i].line);
		}
	if ((st = push_row(r, &row))) {
		tp_diag_set(d, st, "%s: %s", x->path, tp_strerror(st));
		return st;
	}
	return TP_OK;
}

int tp_sparse_ratios_parse(struct tp_sparse_ratios *r, const char *text, size_t len,
                           const char *path, struct tp_diag *d)
{
	int st = tp_sparse_ratios_defaults(r);
	if (st)
		return tp_diag_set(d, st, "%s: %s", path, tp_strerror(st));
	/* A user file replaces the built-in shapes entirely; only the fallback row survives
	 * until the file gives its own. */
	r->count = 0;
	r->from_file = 1;
	unsigned long aim_line = 0, star_line = 0;
	struct fields x = {.path = path, .line = 0};
	size_t pos = 0;
	while (pos < len) {
		size_t eol = pos;
		while (eol < len && text[eol] != '\n')
			eol++;
		x.line++;
		const char *ln = text + pos;
		size_t n = eol - pos;
		pos = eol + 1;
		if (memchr(ln, '\0', n)) {
			st = tp_diag_line(d, TP_EFORMAT, path, x.line, "NUL byte in a text file");
			goto fail;
		}
		const char *hash = memchr(ln, '#', n);
		if (hash)
			n = (size_t)(hash - ln);
		split_fields(ln, n, &x);
		if (x.nf == 0)
			continue;
		if (x.fl[0] == 3 && memcmp(x.f[0], "aim", 3) == 0)
			st = parse_aim(r, &x, &aim_line, d);
		else
			st = parse_row(r, &x, &star_line, d);
		if (st)
			goto fail;
	}
	return TP_OK;
fail:
	tp_sparse_ratios_free(r);
	return st;
}

int tp_sparse_ratios_load(struct tp_sparse_ratios *r, const char *path, struct tp_diag *d)
{
	struct tp_file f;
	memset(r, 0, sizeof *r);
	int st = tp_file_load(&f, path, d);
	if (st)
		return st;
	st = tp_sparse_ratios_parse(r, (const char *)f.data, f.size, path, d);
	tp_file_release(&f);
	return st;
}

const struct tp_sparse_ratio_row *tp_sparse_ratios_lookup(const struct tp_sparse_ratios *r,
                                                          const char *shape)
{
	char canon[TP_SPARSE_SHAPE_MAX];
	if (canon_shape(shape, strlen(shape), canon) == 0)
		for (size_t i = 0; i < r->count; i++)
			if (strcmp(r->rows[i].shape, canon) == 0)
				return &r->rows[i];
	return &r->fallback;
}

double tp_sparse_ratio_at(const struct tp_sparse_ratio_row *row, int aim_pct)
{
	switch (aim_pct) {
	case 90:
		return row->ratio[0];
	case 80:
		return row->ratio[1];
	case 70:
		return row->ratio[2];
	default:
		return row->ratio[3];
	}
}
