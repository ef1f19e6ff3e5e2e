/*
 * bmp_gline.c — the key=value lines of global.profile (sophgo-bmprofile.md §3) that the chunked
 * scan of bmp_global.c hands over as whole lines: the key lookup with its harmless variants, the
 * tensor, memory, core-list and header lines (arch, clocks, net name, subnet and parallel
 * markers), and the generic fallback for node and layer lines the fast forms did not take. Owns
 * no state: everything goes into the parse context (struct bmp_gctx) and the profile.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <string.h>

/* The body starts with p. A p ending in '=' also matches with blanks before and after the
 * '=' ("arch = 8", a harmless variant). */
int bmp_line_starts(const struct bmp_line *l, const char *p)
{
	size_t k = strlen(p);
	if (l->n >= k && memcmp(l->s, p, k) == 0)
		return 1;
	if (!k || p[k - 1] != '=' || l->n < k || memcmp(l->s, p, k - 1) != 0)
		return 0;
	size_t i = k - 1;
	while (i < l->n && (l->s[i] == ' ' || l->s[i] == '\t'))
		i++;
	return i < l->n && l->s[i] == '=';
}

static int is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Splits the line once into key=value pairs: a key is the run of word characters right
 * before a '=', its value the run of non-blank characters after it. Harmless variant: blanks
 * around the '=' ("arch = 8"); after the '=' they are skipped only when the next token is not
 * itself a key=value pair (so "gsize= loffset=0" still gives an empty gsize). */
static void split_kv(struct bmp_line *l)
{
	l->parsed = 1;
	l->nkv = 0;
	for (size_t i = 0; i < l->n && l->nkv < BMP_MAX_KV; i++) {
		if (l->s[i] != '=')
			continue;
		size_t ke = i;
		while (ke > 0 && (l->s[ke - 1] == ' ' || l->s[ke - 1] == '\t'))
			ke--;
		size_t kb = ke;
		while (kb > 0 && is_word(l->s[kb - 1]))
			kb--;
		if (kb == ke)
			continue;
		size_t vb = i + 1;
		if (vb < l->n && (l->s[vb] == ' ' || l->s[vb] == '\t')) {
			size_t t = vb;
			while (t < l->n && (l->s[t] == ' ' || l->s[t] == '\t'))
				t++;
			size_t te = t;
			while (te < l->n && l->s[te] != ' ' && l->s[te] != '\t' && l->s[te] != '=')
				te++;
			if (t < l->n && (te == l->n || l->s[te] != '='))
				vb = t;
		}
		size_t e = vb;
		while (e < l->n && l->s[e] != ' ' && l->s[e] != '\t')
			e++;
		l->kv[l->nkv].k = l->s + kb;
		l->kv[l->nkv].kn = ke - kb;
		l->kv[l->nkv].v = l->s + vb;
		l->kv[l->nkv].vn = e - vb;
		l->nkv++;
		i = e > i ? e - 1 : i;
	}
}

/* Finds `key=` (as a whole word) and returns its value: a run of non-blank characters, or the
 * rest of the line when `rest` is set. Returns 1 if found. */
int bmp_line_kv(struct bmp_line *l, const char *key, int rest, const char **v, size_t *vn)
{
	if (!l->parsed) {
		split_kv(l);
		l->hint = 0;
	}
	size_t k = strlen(key);
	for (unsigned j = 0; j < l->nkv; j++) {
		unsigned i = (l->hint + j) % l->nkv;
		if (l->kv[i].kn != k || memcmp(l->kv[i].k, key, k) != 0)
			continue;
		*v = l->kv[i].v;
		*vn = rest ? (size_t)(l->s + l->n - l->kv[i].v) : l->kv[i].vn;
		l->hint = i + 1;
		return 1;
	}
	return 0;
}

/* Reads `key=` as a signed (into *i) or, with i NULL, unsigned (into *u) number. */
static int line_num(struct bmp_gctx *c, struct bmp_line *l, const char *key, int64_t *i,
                    uint64_t *u)
{
	const char *v;
	size_t n;
	if (!bmp_line_kv(l, key, 0, &v, &n))
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no, "missing %s=", key);
	if ((i ? tp_parse_i64(v, n, i) : tp_parse_u64(v, n, u)) != 0)
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no, "bad %s value \"%.*s\"", key,
		                    (int)(n > 40 ? 40 : n), v);
	return TP_OK;
}

int bmp_line_i64(struct bmp_gctx *c, struct bmp_line *l, const char *key, int64_t *out)
{
	return line_num(c, l, key, out, NULL);
}

int bmp_line_u64(struct bmp_gctx *c, struct bmp_line *l, const char *key, uint64_t *out)
{
	return line_num(c, l, key, NULL, out);
}

int bmp_gline_tensor_parse(struct bmp_gctx *c, struct bmp_line *l, struct tp_tensor *tp)
{
	struct tp_tensor t = {0};
	int64_t v;
	uint64_t u;
	int rc;
	if ((rc = bmp_line_i64(c, l, "tensor_id", &t.id)))
		return rc;
	if ((rc = bmp_line_i64(c, l, "is_in", &v)))
		return rc;
	t.is_in = v != 0;
	if ((rc = bmp_line_i64(c, l, "dtype", &v)))
		return rc;
	/* global.profile DataType 0..8 (§3.3) maps onto tp_dtype 1..9. */
	t.dtype = v >= 0 && v <= 8 ? (uint8_t)(v + 1) : TP_DT_NONE;
	if ((rc = bmp_line_i64(c, l, "is_const", &v)))
		return rc;
	t.is_const = v != 0;
	if ((rc = bmp_line_u64(c, l, "gaddr", &t.gaddr)) ||
	    (rc = bmp_line_u64(c, l, "gsize", &t.gsize)) ||
	    (rc = bmp_line_u64(c, l, "loffset", &t.loffset)))
		return rc;
	if ((rc = bmp_line_u64(c, l, "nslice", &u)))
		return rc;
	t.nslice = (uint32_t)u;
	if ((rc = bmp_line_u64(c, l, "hslice", &u)))
		return rc;
	t.hslice = (uint32_t)u;
	const char *sv;
	size_t sn;
	if (bmp_line_kv(l, "l2addr", 0, &sv, &sn) && tp_parse_u64(sv, sn, &t.l2addr) != 0)
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no, "bad l2addr value");
	if (!bmp_line_kv(l, "shape", 0, &sv, &sn))
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no, "missing shape=");
	if (sn < 2 || sv[0] != '[' || sv[sn - 1] != ']')
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no, "bad shape \"%.*s\"",
		                    (int)(sn > 40 ? 40 : sn), sv);
	size_t i = 1;
	while (i < sn - 1) {
		size_t e = i;
		while (e < sn - 1 && sv[e] != 'x' && sv[e] != ',')
			e++;
		if (t.ndim >= TP_MAX_DIMS)
			return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no,
			                    "shape has more than %d dimensions", TP_MAX_DIMS);
		if (tp_parse_i64(sv + i, e - i, &t.shape[t.ndim]) != 0)
			return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no, "bad shape \"%.*s\"",
			                    (int)(sn > 40 ? 40 : sn), sv);
		t.ndim++;
		i = e + 1;
	}
	*tp = t;
	return TP_OK;
}

int bmp_gline_tensor_add(struct bmp_gctx *c, struct tp_tensor *t)
{
	t->layer = c->cur_layer;
	if (tp_profile_add_tensor(c->p, t) < 0)
		return bmp_gctx_oom(c);
	if (c->cur_layer >= 0 &&
	    c->pend.first_tensor + c->pend.num_tensors + 1 == c->p->num_tensors)
		c->pend.num_tensors++;
	return TP_OK;
}

static int do_tensor(struct bmp_gctx *c, struct bmp_line *l)
{
	struct tp_tensor t;
	int rc = bmp_gline_tensor_parse(c, l, &t);
	if (rc || c->g->no_layers || c->g->no_tensors)
		return rc;
	return bmp_gline_tensor_add(c, &t);
}

static int do_mem(struct bmp_gctx *c, struct bmp_line *l)
{
	struct tp_mem m = {0};
	int64_t mt;
	int rc;
	if ((rc = bmp_line_i64(c, l, "mtype", &mt)) || (rc = bmp_line_u64(c, l, "addr", &m.addr)) ||
	    (rc = bmp_line_u64(c, l, "size", &m.size)) ||
	    (rc = bmp_line_u64(c, l, "alloc", &m.alloc_usec)) ||
	    (rc = bmp_line_u64(c, l, "free", &m.free_usec)))
		return rc;
	m.mtype = (int32_t)mt;
	const char *v;
	size_t n;
	if (!bmp_line_kv(l, "desc", 1, &v, &n))
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no, "missing desc=");
	m.desc = tp_profile_strn(c->p, v, n);
	if (tp_profile_add_mem(c->p, &m) < 0)
		return bmp_gctx_oom(c);
	return TP_OK;
}

static int do_core_list(struct bmp_gctx *c, struct bmp_line *l)
{
	const char *v;
	size_t n;
	bmp_line_kv(l, "core_list", 0, &v, &n);
	struct bmp_global *g = c->g;
	g->n_cores = 0;
	size_t i = 0;
	while (i < n) {
		size_t e = i;
		while (e < n && v[e] != ',')
			e++;
		if (e > i) {
			int64_t core;
			if (tp_parse_i64(v + i, e - i, &core) != 0 || core < 0 || core > 4096)
				return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no,
				                    "bad core_list \"%.*s\"",
				                    (int)(n > 40 ? 40 : n), v);
			if (g->n_cores >= BMP_MAX_CORES)
				return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no,
				                    "core_list has more than %d cores",
				                    BMP_MAX_CORES);
			g->cores[g->n_cores++] = (int)core;
		}
		i = e + 1;
	}
	g->have_core_list = 1;
	char buf[256];
	snprintf(buf, sizeof buf, "%.*s", (int)(n > 255 ? 255 : n), v);
	return tp_profile_set_meta(c->p, "core_list", buf) == TP_OK ? TP_OK : bmp_gctx_oom(c);
}

int bmp_gline_apply(struct bmp_gctx *c, struct bmp_line *l)
{
	struct bmp_global *g = c->g;
	const char *v;
	size_t n;
	int64_t x;
	char buf[512];
	/* Most lines are tensor and node lines: test them first. */
	if (l->n && l->s[0] == 't' && bmp_line_starts(l, "tensor_id=")) {
		/* Huge dumps keep no tensors: skip their lines unparsed (the one place where a
		 * malformed line may go unreported, to keep multi-GB logs fast). */
		if (g->no_tensors || g->no_layers)
			return TP_OK;
		return do_tensor(c, l);
	}
	if (l->n && l->s[0] == 'g' && bmp_line_starts(l, "gdma cmd_id"))
		return g->no_nodes ? TP_OK : bmp_gline_node(c, l, 0);
	if (g->no_nodes && g->no_layers && l->n &&
	    (bmp_line_starts(l, "local_layer:") || bmp_line_starts(l, "global_layer:") ||
	     bmp_line_starts(l, "bd cmd_id")))
		return TP_OK; /* nothing of them is kept: do not parse them */
	if (bmp_line_starts(l, "arch=")) {
		if (g->have_arch)
			return TP_OK; /* the first arch= line fixes the arch (§3.2) */
		int rc = bmp_line_i64(c, l, "arch", &x);
		if (rc)
			return rc;
		g->have_arch = 1;
		g->arch_raw = x < -1000000 || x > 1000000 ? -1 : (int)x;
		g->arch = bmp_arch_from_raw(g->arch_raw);
		g->arch_line = l->no;
		return TP_OK;
	}
	if (bmp_line_starts(l, "tpu_freq=") || bmp_line_starts(l, "freq=")) {
		int rc = bmp_line_i64(c, l, bmp_line_starts(l, "freq=") ? "freq" : "tpu_freq", &x);
		if (rc)
			return rc;
		g->have_freq = 1;
		g->tpu_freq = x;
		snprintf(buf, sizeof buf, "%lld", (long long)x);
		return tp_profile_set_meta(c->p, "tpu_freq", buf) == TP_OK ? TP_OK
		                                                           : bmp_gctx_oom(c);
	}
	if (bmp_line_starts(l, "net_name=")) {
		bmp_line_kv(l, "net_name", 1, &v, &n);
		c->p->net_name = tp_profile_strn(c->p, v, n);
		snprintf(buf, sizeof buf, "%.*s", (int)(n > 511 ? 511 : n), v);
		return tp_profile_set_meta(c->p, "net_name", buf) == TP_OK ? TP_OK
		                                                           : bmp_gctx_oom(c);
	}
	if (bmp_line_starts(l, "start to run subnet_id=") ||
	    bmp_line_starts(l, "end to run subnet_id=")) {
		int rc = bmp_line_i64(c, l, "subnet_id", &x);
		if (rc)
			return rc;
		c->cur_subnet = bmp_line_starts(l, "start") ? (int32_t)x : -1;
		c->cur_layer = -1;
		return TP_OK;
	}
	if (bmp_line_starts(l, "end parallel")) {
		bmp_end_parallel(c);
		return TP_OK;
	}
	if (bmp_line_starts(l, "global_layer:"))
		return bmp_gline_layer(c, l, 0);
	if (bmp_line_starts(l, "local_layer:"))
		return bmp_gline_layer(c, l, 1);
	if (bmp_line_starts(l, "bd cmd_id"))
		return bmp_gline_node(c, l, 1);
	if (bmp_line_starts(l, "core_list="))
		return do_core_list(c, l);
	if (bmp_line_starts(l, "mtype="))
		return do_mem(c, l);
	return TP_OK;
}
