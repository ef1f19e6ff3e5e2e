/*
 * cdm_file.c — parsers of the two file kinds of a `cdm_profile_data_dev{D}[-{N}]/` directory
 * (BM1690/SG2260 and SG2260E multi-core profiles; specs/sophgo-cdm.md): global.profile and
 * the TLV block files cdmlib0_{core}.profile / cdma*_{port}.profile. Pure functions over
 * memory buffers (the reader, unit tests and the fuzz target share them); they own nothing
 * but the arrays inside struct cdm_walk.
 *
 * global.profile (§3): text, one `key=value` per line. Read: arch (required), tpu_freq,
 * max_record_num, tail_offset_ns, core{c}_{tiu,gdma,sdma}_record, cdma_port{p}_record; a line
 * containing `bmodel` marks the model-runtime path. Tolerated: spaces/tabs around key and
 * value, CRLF, a UTF-8 BOM, blank lines, lines without '=', unknown keys (counted), a
 * "[bmprofile] " prefix.
 * Rejected (path:LINE): a known key whose value is not an integer, a *_record value of 1 or
 * >= max_record_num (the vendor's "profile raw data is invalid" / "exceed max_record_num"; 0 is
 * accepted as "this engine recorded nothing"), no arch line.
 *
 * Block files (§4), little-endian, no header, blocks until EOF:
 *
 *   OFFSET  SIZE  FIELD
 *   0       4     block type
 *   4       4     payload length L
 *   8       L     payload
 *
 *   type  payload                                    handling
 *   3     MONITOR_BD: N x 16 B TIU PMU record        span kept (engine TIU)
 *   4     MONITOR_GDMA: N x 64 B GDMA PMU record     span kept (GDMA)
 *   11    MONITOR_SDMA: N x 64 B (GDMA layout)       span kept (SDMA)
 *   12    MONITOR_CDMA: N x 128 B CDMA PMU record    span kept (CDMA)
 *   5     DYN_DATA: N x 8 B command records          decoded (layout v1, below)
 *   6     DYN_EXTRA: nested {u32 profile_id, u32 type, u32 n, n bytes descriptor}
 *                                                    joined to DYN_DATA commands (mode 2)
 *   13-16 BLOCK_DES_BDC/GDMA/SDMA/CDMA: raw descriptor stream, decoded with cdm_desc_decode
 *   17    BLOCK_DES_KV, 1, 2, 7-10, anything else    skipped by length and counted
 *
 *   TIU PMU record (16 B): 0 u32 inst_start_time, 4 u32 inst_end_time, 8 u32 inst_id,
 *     12 u32 bit 0 thread_id, bits 1..31 bank_conflict.
 *   GDMA/SDMA PMU record (64 B): 0 start, 4 end, 8 inst_id, 12 bit 0 thread_id,
 *     16 gif_wr_rd_stall_cntr, 20 axi_d0_w_cntr, 40 gif_mem_w_cntr (others unused here).
 *   CDMA PMU record (128 B): 0 start, 4 end, 8 bits 0..23 inst_id, bit 24 thread_id,
 *     16 m0_data_aw_cntr (upstream's "data size").
 *   DYN_DATA record v1 (8 B): word0 bits 0..7 type, 8..10 engine, 11..15 tsk_typ/cmd_type,
 *     16..20 eu_typ/special function, 21..31 extra_info; word1 inst_id. Record 0 is the init
 *     record (skipped); type 1 NODE_SET is a command. extra_info: DMA bits 0..3 data type,
 *     4..6 direction (0 DDR->LMEM, 1 LMEM->DDR, 2 DDR->DDR, 3 LMEM->LMEM); CDMA port >> 7.
 *
 * A block running past the end of the file is an error (TP_ETRUNC, `path@0xOFF`); a payload
 * that is not a whole number of records keeps the whole records (the rest is counted in
 * partial_bytes); a PMU block ends at its first all-zero record (the writer stops there).
 * DYN_DATA that fits layout v2 (bigTpuProfile ≈0.3.x, bits 0..6 type, 7..9 engine) but not v1
 * is refused (dyn_v2 = 1, the PMU records still convert): v2 is unverified (§5).
 */
#include "readers/sophgo/cdm/cdm_int.h"

#include <string.h>

/* ---- global.profile -------------------------------------------------------------------- */

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int parse_int(const char *s, size_t n, long long *out)
{
	int64_t v;
	if (tp_parse_i64(s, n, &v) != 0)
		return -1;
	*out = (long long)v;
	return 0;
}

/* "core12_tiu_record" -> core 12, engine 0; returns 1 if the key has that shape. */
static int core_record_key(const char *k, size_t n, unsigned *core, unsigned *eng)
{
	static const char *const suf[3] = {"_tiu_record", "_gdma_record", "_sdma_record"};
	if (n < 5 || memcmp(k, "core", 4) != 0)
		return 0;
	size_t i = 4;
	unsigned c = 0;
	while (i < n && k[i] >= '0' && k[i] <= '9' && c < 100000)
		c = c * 10 + (unsigned)(k[i++] - '0');
	if (i == 4)
		return 0;
	for (unsigned e = 0; e < 3; e++) {
		size_t sl = strlen(suf[e]);
		if (n - i == sl && memcmp(k + i, suf[e], sl) == 0) {
			*core = c;
			*eng = e;
			return 1;
		}
	}
	return 0;
}

static int cdma_record_key(const char *k, size_t n, unsigned *port)
{
	static const char pre[] = "cdma_port", suf[] = "_record";
	size_t pl = sizeof pre - 1, sl = sizeof suf - 1;
	if (n <= pl + sl || memcmp(k, pre, pl) != 0 || memcmp(k + n - sl, suf, sl) != 0)
		return 0;
	unsigned p = 0;
	for (size_t i = pl; i < n - sl; i++) {
		if (k[i] < '0' || k[i] > '9' || p > 100000)
			return 0;
		p = p * 10 + (unsigned)(k[i] - '0');
	}
	*port = p;
	return 1;
}

/* The key and value of a trimmed global.profile line l[0..n): the key before the first '=',
 * blanks around both trimmed, an older writer's "[bmprofile] " prefix skipped. 0 when the line
 * has no '='. */
static int split_line(const char *l, size_t n, const char **k, size_t *kn, const char **v,
                      size_t *vn)
{
	/* Older writers prefix lines with "[bmprofile] ". */
	if (l[0] == '[') {
		size_t i = 1;
		while (i < n && l[i] != ']')
			i++;
		if (i < n) {
			l += i + 1;
			n -= i + 1;
			while (n && is_space(*l)) {
				l++;
				n--;
			}
		}
	}
	const char *eq = memchr(l, '=', n);
	if (!eq)
		return 0;
	*k = l;
	*kn = (size_t)(eq - l);
	while (*kn && is_space(l[*kn - 1]))
		(*kn)--;
	*v = eq + 1;
	*vn = n - (size_t)(*v - l);
	while (*vn && is_space(**v)) {
		(*v)++;
		(*vn)--;
	}
	return 1;
}

/* The largest record count seen and its line, checked against max_record_num at the end. */
struct rec_worst {
	uint64_t max;
	unsigned long line;
};

/* A record-count key (core c engine e, or CDMA port c when cdma) with value val. */
static int record_count(struct cdm_global *g, const char *path, unsigned long line, const char *k,
                        size_t kn, int cdma, unsigned c, unsigned e, long long val,
                        struct rec_worst *rw, struct tp_diag *d)
{
	if (val < 0 || val == 1)
		return tp_diag_line(d, TP_EFORMAT, path, line,
		                    "%.*s=%lld: profile raw data is invalid (a recording "
		                    "holds at least the 2 init records)",
		                    (int)kn, k, val);
	if (!cdma && c < CDM_MAX_CORES)
		g->rec[c][e] = (uint64_t)val + 1;
	else if (cdma && c < CDM_MAX_PORTS)
		g->cdma_rec[c] = (uint64_t)val + 1;
	if ((uint64_t)val >= rw->max) {
		rw->max = (uint64_t)val;
		rw->line = line;
	}
	return TP_OK;
}

/* One key=value line: the keys of §3, unknown keys counted. */
static int apply_key(struct cdm_global *g, const char *path, unsigned long line, const char *k,
                     size_t kn, const char *v, size_t vn, struct rec_worst *rw, struct tp_diag *d)
{
	long long val;
	unsigned c, e;
	int known = 1;
	if (kn == 4 && memcmp(k, "arch", 4) == 0) {
		if (parse_int(v, vn, &val))
			return tp_diag_line(d, TP_EFORMAT, path, line,
			                    "arch '%.*s' is not a number", (int)(vn > 40 ? 40 : vn),
			                    v);
		g->have_arch = 1;
		g->arch_raw = val;
		g->arch_line = line;
		return TP_OK;
	}
	if (kn == 8 && memcmp(k, "tpu_freq", 8) == 0) {
		known = 1;
	} else if (kn == 14 && memcmp(k, "max_record_num", 14) == 0) {
		known = 2;
	} else if (kn == 14 && memcmp(k, "tail_offset_ns", 14) == 0) {
		known = 3;
	} else if (core_record_key(k, kn, &c, &e)) {
		known = 4;
	} else if (cdma_record_key(k, kn, &c)) {
		known = 5;
	} else {
		g->unknown_keys++;
		return TP_OK;
	}
	if (parse_int(v, vn, &val))
		return tp_diag_line(d, TP_EFORMAT, path, line, "%.*s: '%.*s' is not an integer",
		                    (int)kn, k, (int)(vn > 40 ? 40 : vn), v);
	switch (known) {
	case 1:
		g->have_freq = 1;
		g->tpu_freq = val;
		return TP_OK;
	case 2:
		if (val <= 0)
			return tp_diag_line(d, TP_EFORMAT, path, line, "max_record_num %lld", val);
		g->have_max = 1;
		g->max_record_num = (uint64_t)val;
		return TP_OK;
	case 3:
		g->have_tail = 1;
		g->tail_offset_ns = val;
		return TP_OK;
	default:
		return record_count(g, path, line, k, kn, known == 5, c, known == 4 ? e : 0, val,
		                    rw, d);
	}
}

int cdm_global_parse(const char *text, size_t len, const char *path, struct cdm_global *g,
                     struct tp_diag *d)
{
	memset(g, 0, sizeof *g);
	/* Record-count lines are checked against max_record_num after the whole file is read
	 * (the key may come after them); remember the worst line. */
	struct rec_worst rw = {0, 0};
	size_t pos = 0;
	unsigned long line = 0;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		pos = 3; /* a UTF-8 byte-order mark written by a Windows editor */
	while (pos < len) {
		size_t end = pos;
		while (end < len && text[end] != '\n')
			end++;
		line++;
		size_t a = pos, b = end;
		pos = end < len ? end + 1 : end;
		while (a < b && is_space(text[a]))
			a++;
		while (b > a && is_space(text[b - 1]))
			b--;
		if (a == b)
			continue;
		const char *l = text + a;
		size_t n = b - a;
		for (size_t i = 0; i + 6 <= n; i++)
			if (memcmp(l + i, "bmodel", 6) == 0) {
				g->bmodel = 1;
				break;
			}
		const char *k, *v;
		size_t kn, vn;
		if (!split_line(l, n, &k, &kn, &v, &vn))
			continue;
		int rc = apply_key(g, path, line, k, kn, v, vn, &rw, d);
		if (rc)
			return rc;
	}
	g->lines = line;
	if (g->have_max && rw.line && rw.max >= g->max_record_num)
		return tp_diag_line(
		    d, TP_EFORMAT, path, rw.line,
		    "%llu records exceed max_record_num=%llu: the PMU buffer overflowed",
		    (unsigned long long)rw.max, (unsigned long long)g->max_record_num);
	if (!g->have_arch)
		return tp_diag_set(d, TP_EFORMAT, "%s: no arch= line", path);
	return TP_OK;
}

/* ---- block files ----------------------------------------------------------------------- */

static int push_cmd(struct cdm_cmds *l, const struct cdm_cmd *c)
{
	struct cdm_cmd *e = tp_push(&l->v, sizeof *l->v, &l->n, &l->cap);
	if (!e)
		return TP_ENOMEM;
	*e = *c;
	return TP_OK;
}

void cdm_walk_free(struct cdm_walk *w)
{
	tp_free(w->pmu);
	for (int e = 0; e < CDM_NENG; e++) {
		tp_free(w->des[e].v);
		tp_free(w->dyn[e].v);
	}
	memset(w, 0, sizeof *w);
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Decodes one BLOCK_DES_* stream into w->des[engine], ids continuing the engine's count. A
 * stream ends at its sys command when only zero bytes follow (costmodel §1.4). */
static int decode_des(struct cdm_walk *w, const struct sg_decoder *dec, int engine,
                      const uint8_t *p, size_t len, uint64_t origin)
{
	/* The last non-zero byte bounds "only zeros follow" in O(1) per sys command. */
	size_t last_nz = len;
	while (last_nz > 0 && p[last_nz - 1] == 0)
		last_nz--;
	size_t off = 0;
	while (off < last_nz) {
		struct cdm_cmd c;
		size_t n = dec ? cdm_desc_decode_dec(dec, engine, p + off, len - off, &c)
		               : cdm_desc_decode(engine, p + off, len - off, &c);
		if (n == 0) {
			if (!w->des_stop_off[engine])
				w->des_stop_off[engine] = origin + off;
			return TP_OK;
		}
		c.id = (uint32_t)(w->des[engine].n + 1);
		if (push_cmd(&w->des[engine], &c) != TP_OK)
			return TP_ENOMEM;
		off += n;
		if (cdm_desc_is_sys(engine, &c) && off >= last_nz)
			return TP_OK;
	}
	return TP_OK;
}

/* Engine of a DYN_DATA engine code: AKS BD 0, GDMA 1, HAU 2, SDMA 3, CDMA 4, VSDMA 5; AKSV
 * (4 cores) BD 0, GDMA 1, SDMA 2, CDMA 3, VSDMA 4 (§4.5). VSDMA merges into SDMA. -1 = none. */
static int dyn_engine(const struct sg_chip *chip, unsigned code)
{
	static const int aks[6] = {CDM_TIU, CDM_GDMA, -1, CDM_SDMA, CDM_CDMA, CDM_SDMA};
	static const int aksv[5] = {CDM_TIU, CDM_GDMA, CDM_SDMA, CDM_CDMA, CDM_SDMA};
	if (chip && chip->c.arch == TP_ARCH_SG2260E)
		return code < 5 ? aksv[code] : -1;
	return code < 6 ? aks[code] : -1;
}

static unsigned dyn_max_engine(const struct sg_chip *chip)
{
	return chip && chip->c.arch == TP_ARCH_SG2260E ? 4u : 5u;
}

static int dyn_is_v2(const uint8_t *p, size_t n, const struct sg_chip *chip)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t w0 = tp_le32(p + i * CDM_DYN_REC_SIZE);
		if ((w0 & 0x7Fu) > 15 || ((w0 >> 7) & 7u) > dyn_max_engine(chip))
			return 0;
	}
	return 1;
}

struct extra_entry {
	const uint8_t *p;
	size_t n;
};

/* What the block walk gathers before it decodes: DYN_DATA and DYN_EXTRA may come in any order
 * and more than once. Owned by cdm_walk_jobs for one call. */
struct gather {
	struct tp_cursor *dyn, *extra;
	size_t ndyn, cap_dyn, nextra, cap_extra;
	struct extra_entry *ent;
	size_t nent, cap_ent;
};

/* A MONITOR block of engine eng: its span, all its whole records; the first all-zero record
 * ends it (walk_pmu_ends, after the walk). */
static int add_pmu(struct cdm_walk *w, int eng, const struct tp_cursor *b)
{
	size_t rs = cdm_pmu_rec_size(eng);
	size_t count = b->len / rs;
	w->partial_bytes += b->len % rs;
	if (!count)
		return TP_OK;
	if (w->npmu == w->cap_pmu) {
		struct cdm_span *v = tp_grow(w->pmu, sizeof *v, w->npmu + 1, &w->cap_pmu);
		if (!v)
			return TP_ENOMEM;
		w->pmu = v;
	}
	w->pmu[w->npmu++] =
	    (struct cdm_span){.engine = (uint8_t)eng, .off = b->origin, .count = count};
	return TP_OK;
}

/* Keeps a DYN_DATA or DYN_EXTRA block for after the walk. */
static int gather_dyn(struct gather *g, uint32_t type, const struct tp_cursor *b)
{
	struct tp_cursor **arr = type == SG_BLK_DYN_DATA ? &g->dyn : &g->extra;
	size_t *n = type == SG_BLK_DYN_DATA ? &g->ndyn : &g->nextra;
	size_t *cap = type == SG_BLK_DYN_DATA ? &g->cap_dyn : &g->cap_extra;
	if (*n == *cap) {
		struct tp_cursor *v = tp_grow(*arr, sizeof *v, *n + 1, cap);
		if (!v)
			return TP_ENOMEM;
		*arr = v;
	}
	(*arr)[(*n)++] = *b;
	return TP_OK;
}

/* One block of the walk, by type. */
static int walk_block(struct cdm_walk *w, struct gather *g, const struct sg_decoder *dec,
                      uint32_t type, const struct tp_cursor *b)
{
	switch (type) {
	case SG_BLK_MONITOR_BD:
		return add_pmu(w, CDM_TIU, b);
	case SG_BLK_MONITOR_GDMA:
		return add_pmu(w, CDM_GDMA, b);
	case SG_BLK_MONITOR_SDMA:
		return add_pmu(w, CDM_SDMA, b);
	case SG_BLK_MONITOR_CDMA:
		return add_pmu(w, CDM_CDMA, b);
	case SG_BLK_DYN_DATA:
	case SG_BLK_DYN_EXTRA:
		return gather_dyn(g, type, b);
	case SG_BLK_DES_BDC:
	case SG_BLK_DES_GDMA:
	case SG_BLK_DES_SDMA:
	case SG_BLK_DES_CDMA:
		w->have_des = 1;
		return decode_des(w, dec, (int)(type - SG_BLK_DES_BDC), b->base, b->len, b->origin);
	case SG_BLK_DES_KV:
		w->des_kv_blocks++;
		w->blocks_skipped++;
		return TP_OK;
	default:
		w->blocks_skipped++;
		return TP_OK;
	}
}

/* DYN_EXTRA entries, in order (§6), into g->ent. */
static int walk_extra(struct cdm_walk *w, struct gather *g, const char *path, struct tp_diag *d)
{
	for (size_t k = 0; k < g->nextra; k++) {
		struct tp_cursor *e = &g->extra[k];
		w->have_extra = 1;
		while (tp_cur_left(e) > 0) {
			uint64_t at = tp_cur_offset(e);
			if (tp_cur_left(e) < 12)
				return tp_diag_at(
				    d, TP_ETRUNC, path, at,
				    "truncated DYN_EXTRA entry header: %zu bytes left, need 12",
				    tp_cur_left(e));
			(void)tp_cur_u32(e);
			(void)tp_cur_u32(e);
			uint32_t n = tp_cur_u32(e);
			if (n > tp_cur_left(e))
				return tp_diag_at(
				    d, TP_ETRUNC, path, at,
				    "DYN_EXTRA entry of %u bytes, only %zu left in its block", n,
				    tp_cur_left(e));
			if (g->nent == g->cap_ent) {
				struct extra_entry *v =
				    tp_grow(g->ent, sizeof *v, g->nent + 1, &g->cap_ent);
				if (!v)
					return TP_ENOMEM;
				g->ent = v;
			}
			g->ent[g->nent].p = tp_cur_bytes(e, n);
			g->ent[g->nent++].n = n;
		}
	}
	w->extra_entries = g->nent;
	return TP_OK;
}

/* The command of a DYN_DATA command record (w0, id) on engine e, from its own bits. */
static struct cdm_cmd dyn_cmd(int e, uint32_t w0, uint32_t id)
{
	unsigned op = (w0 >> 11) & 31u, sub = (w0 >> 16) & 31u, extra_info = w0 >> 21;
	struct cdm_cmd cmd = {
	    .id = id, .engine = (uint8_t)e, .op = (uint8_t)op, .sub = (uint8_t)sub, .known = 1};
	cmd.kind = cdm_kind(e, op, sub);
	if (e == CDM_TIU) {
		if (cmd.kind == TP_CMD_NORMAL)
			cmd.dtype = cdm_dtype(extra_info & 0xFu);
	} else if (e == CDM_CDMA) {
		cmd.port = (uint8_t)((extra_info >> 7) & (CDM_MAX_PORTS - 1));
		if (cmd.kind == TP_CMD_NORMAL)
			cmd.dir =
			    TP_DIR_DDR_TO_DDR; /* mode 1 CDMA: forced DDR->DDR (analysis §2.3) */
	} else if (cmd.kind == TP_CMD_NORMAL) {
		static const uint8_t dirs[8] = {TP_DIR_DDR_TO_LMEM, TP_DIR_LMEM_TO_DDR,
		                                TP_DIR_DDR_TO_DDR, TP_DIR_LMEM_TO_LMEM};
		cmd.dtype = cdm_dtype(extra_info & 0xFu);
		cmd.dir = dirs[(extra_info >> 4) & 7u];
	}
	return cmd;
}

/* ---- the walk's records in parts ------------------------------------------------------- */

/* A part of a walk's records: records [from, to) of block blk (of w->pmu, or of the gathered
 * DYN_DATA blocks), found or decoded by one thread. */
struct wpart {
	size_t blk, from, to;
	size_t rec;         /* DYN_DATA: the stream's record index of record `from` */
	size_t hit;         /* first all-zero PMU record / first record not of layout v1 */
	size_t n[CDM_NENG]; /* DYN_DATA commands per engine; after walk_dyn's prefix sum, the
	                       place of the part's first command of each engine */
	size_t other, used; /* non-command records, DYN_EXTRA entries used */
};

enum { WP_PMU_END, WP_DYN_V1, WP_DYN_COUNT, WP_DYN_PUT };

struct wpar {
	int step;
	const uint8_t *data;
	struct cdm_walk *w;
	const struct gather *g;
	const struct sg_chip *chip;
	struct wpart *part;
};

/* Appends the parts of `count` records of block blk (rec: the record index of its first)
 * to *v. */
static int add_parts(struct wpart **v, size_t *n, size_t *cap, size_t blk, size_t count, size_t rec,
                     size_t part)
{
	size_t np = count ? tp_split_count(count, part) : 0;
	for (size_t q = 0; q < np; q++) {
		struct wpart *x = tp_push(v, sizeof **v, n, cap);
		if (!x)
			return TP_ENOMEM;
		*x = (struct wpart){.blk = blk, .hit = SIZE_MAX};
		tp_split_at(count, np, q, &x->from, &x->to);
		x->rec = rec + x->from;
	}
	return TP_OK;
}

/* The engine of DYN_DATA record p, -1 when it is no command. */
static int dyn_record_engine(const struct wpar *a, const uint8_t *p)
{
	uint32_t w0 = tp_le32(p);
	int e = dyn_engine(a->chip, (w0 >> 8) & 7u);
	return (w0 & 0xFFu) != 1 ? -1 : e;
}

/* The DYN_DATA command of record p (stream index rec > 0) of the stream, or 0 with *e < 0
 * when it is no command; *used: a DYN_EXTRA entry gave its descriptor. */
static struct cdm_cmd dyn_record(const struct wpar *a, const uint8_t *p, size_t rec, int *e,
                                 int *used)
{
	*e = dyn_record_engine(a, p);
	*used = 0;
	if (*e < 0)
		return (struct cdm_cmd){0};
	struct cdm_cmd cmd = dyn_cmd(*e, tp_le32(p), tp_le32(p + 4));
	/* Mode 2: the descriptor of DYN_DATA record r is DYN_EXTRA entry r - 1. */
	const struct gather *g = a->g;
	if (rec - 1 < g->nent) {
		struct cdm_cmd full;
		if (cdm_desc_decode(*e, g->ent[rec - 1].p, g->ent[rec - 1].n, &full)) {
			full.id = cmd.id;
			full.port = cmd.port;
			if (*e == CDM_TIU && !full.dtype)
				full.dtype = cmd.dtype;
			cmd = full;
			*used = 1;
		}
	}
	return cmd;
}

/* Part x of step a->step (wpar_one's work). */
static void wpar_part(const struct wpar *a, struct wpart *x)
{
	if (a->step == WP_PMU_END) {
		const struct cdm_span *sp = &a->w->pmu[x->blk];
		size_t rs = cdm_pmu_rec_size(sp->engine);
		for (size_t i = x->from; i < x->to; i++)
			if (all_zero(a->data + sp->off + i * rs, rs)) {
				x->hit = i;
				return;
			}
		return;
	}
	const uint8_t *base = a->g->dyn[x->blk].base;
	if (a->step == WP_DYN_V1) {
		/* Layout v1: a known type and engine in every record but each block's first. */
		for (size_t i = x->from ? x->from : 1; i < x->to; i++) {
			uint32_t w0 = tp_le32(base + i * CDM_DYN_REC_SIZE);
			unsigned type = w0 & 0xFFu, eng = (w0 >> 8) & 7u;
			if ((type > 9 && type != 100) || eng > dyn_max_engine(a->chip)) {
				x->hit = i;
				return;
			}
		}
		return;
	}
	for (size_t i = x->from; i < x->to; i++) {
		size_t rec = x->rec + (i - x->from);
		if (rec == 0)
			continue;              /* init record */
		if (a->step == WP_DYN_COUNT) { /* the engine alone, no descriptor decoded */
			int e = dyn_record_engine(a, base + i * CDM_DYN_REC_SIZE);
			if (e < 0)
				x->other++;
			else
				x->n[e]++;
			continue;
		}
		int e, used;
		struct cdm_cmd cmd = dyn_record(a, base + i * CDM_DYN_REC_SIZE, rec, &e, &used);
		if (e < 0)
			continue;
		a->w->dyn[e].v[x->n[e]++] = cmd;
		x->used += (size_t)used;
	}
}

static void wpar_one(void *arg, size_t k)
{
	const struct wpar *a = arg;
	/* On a copy, stored back once: the parts sit side by side, and other threads count
	 * into their neighbours per record. */
	struct wpart part = a->part[k], *x = &part;
	wpar_part(a, x);
	a->part[k] = part;
}

/* The parts on `threads` threads; on this thread alone with one (not a parallel section of
 * --timings: the caller's one-thread work stays its own). */
static void wpar_run(unsigned threads, size_t n, struct wpar *a)
{
	if (threads > 1) {
		tp_par_run(threads, n, wpar_one, a);
		return;
	}
	for (size_t k = 0; k < n; k++)
		wpar_one(a, k);
}

/* Each PMU span ends at its first all-zero record (the writer stops there; anything after it
 * is padding); a span that starts with one is dropped. Found in parts on `threads`. */
static int walk_pmu_ends(struct cdm_walk *w, const uint8_t *data, unsigned threads, size_t part)
{
	struct wpart *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t k = 0; k < w->npmu; k++)
		if (add_parts(&v, &n, &cap, k, w->pmu[k].count, 0, part) != TP_OK) {
			tp_free(v);
			return TP_ENOMEM;
		}
	struct wpar a = {.step = WP_PMU_END, .data = data, .w = w, .part = v};
	wpar_run(threads, n, &a);
	for (size_t i = n; i-- > 0;) /* the first hit of a span is its end */
		if (v[i].hit != SIZE_MAX)
			w->pmu[v[i].blk].count = v[i].hit;
	tp_free(v);
	size_t m = 0;
	for (size_t k = 0; k < w->npmu; k++)
		if (w->pmu[k].count)
			w->pmu[m++] = w->pmu[k];
	w->npmu = m;
	return TP_OK;
}

/* Which DYN_DATA blocks are layout v1 (v1[k]), with the stream's records counted over them;
 * the first block of neither layout is an error. */
static int dyn_layouts(struct cdm_walk *w, const struct gather *g, const char *path,
                       const struct sg_chip *chip, unsigned threads, size_t part, uint8_t *v1,
                       struct tp_diag *d)
{
	struct wpart *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t k = 0; k < g->ndyn; k++)
		if (add_parts(&v, &n, &cap, k, g->dyn[k].len / CDM_DYN_REC_SIZE, 0, part) !=
		    TP_OK) {
			tp_free(v);
			return TP_ENOMEM;
		}
	struct wpar a = {.step = WP_DYN_V1, .g = g, .chip = chip, .part = v};
	wpar_run(threads, n, &a);
	size_t i = 0;
	int rc = TP_OK;
	for (size_t k = 0; k < g->ndyn && rc == TP_OK; k++) {
		const struct tp_cursor *dc = &g->dyn[k];
		size_t nrec = dc->len / CDM_DYN_REC_SIZE, bad = SIZE_MAX;
		for (; i < n && v[i].blk == k; i++)
			if (bad == SIZE_MAX)
				bad = v[i].hit;
		w->partial_bytes += dc->len % CDM_DYN_REC_SIZE;
		w->have_dyn = 1;
		v1[k] = bad == SIZE_MAX;
		if (v1[k]) {
			w->dyn_records += nrec;
		} else if (dyn_is_v2(dc->base, nrec, chip)) {
			w->dyn_v2 = 1;
		} else {
			uint32_t w0 = tp_le32(dc->base + bad * CDM_DYN_REC_SIZE);
			rc = tp_diag_at(d, TP_EFORMAT, path, dc->origin + bad * CDM_DYN_REC_SIZE,
			                "DYN_DATA record %zu has type %u / engine %u, not a known "
			                "command record (layout v1 or v2)",
			                bad, w0 & 0xFFu, (w0 >> 8) & 7u);
		}
	}
	tp_free(v);
	return rc;
}

/* DYN_DATA: the layout-v1 blocks form one stream; record 0 is the init record. Its commands
 * are counted per engine in parts, each engine's list made at its size, then filled in parts
 * at each part's place: the lists one pass in record order would give. */
static int walk_dyn(struct cdm_walk *w, const struct gather *g, const char *path,
                    const struct sg_chip *chip, unsigned threads, size_t part, struct tp_diag *d)
{
	uint8_t *v1 = tp_calloc(g->ndyn ? g->ndyn : 1, 1);
	if (!v1)
		return TP_ENOMEM;
	int rc = dyn_layouts(w, g, path, chip, threads, part, v1, d);
	struct wpart *v = NULL;
	size_t n = 0, cap = 0, rec = 0;
	for (size_t k = 0; k < g->ndyn && rc == TP_OK; k++)
		if (v1[k]) {
			size_t nrec = g->dyn[k].len / CDM_DYN_REC_SIZE;
			rc = add_parts(&v, &n, &cap, k, nrec, rec, part);
			rec += nrec;
		}
	tp_free(v1);
	struct wpar a = {.step = WP_DYN_COUNT, .w = w, .g = g, .chip = chip, .part = v};
	if (rc == TP_OK)
		wpar_run(threads, n, &a);
	size_t at[CDM_NENG] = {0};
	for (size_t i = 0; i < n && rc == TP_OK; i++) {
		w->dyn_other += v[i].other;
		for (int e = 0; e < CDM_NENG; e++) {
			size_t c = v[i].n[e];
			v[i].n[e] = at[e];
			at[e] += c;
		}
	}
	for (int e = 0; e < CDM_NENG && rc == TP_OK; e++) {
		if (!at[e])
			continue;
		if (at[e] > SIZE_MAX / sizeof *w->dyn[e].v ||
		    !(w->dyn[e].v = tp_malloc(at[e] * sizeof *w->dyn[e].v)))
			rc = TP_ENOMEM;
		else
			w->dyn[e].n = w->dyn[e].cap = at[e];
	}
	a.step = WP_DYN_PUT;
	if (rc == TP_OK)
		wpar_run(threads, n, &a);
	for (size_t i = 0; i < n && rc == TP_OK; i++)
		w->extra_used += v[i].used;
	tp_free(v);
	return rc;
}

int cdm_walk(const uint8_t *data, size_t len, const char *path, const struct sg_chip *chip,
             struct cdm_walk *w, struct tp_diag *d)
{
	return cdm_walk_jobs(data, len, path, chip, NULL, 1, 0, w, d);
}

int cdm_walk_jobs(const uint8_t *data, size_t len, const char *path, const struct sg_chip *chip,
                  const struct sg_decoder *dec, unsigned threads, size_t part, struct cdm_walk *w,
                  struct tp_diag *d)
{
	memset(w, 0, sizeof *w);
	if (!part)
		part = CDM_WALK_PART;
	struct tp_cursor c;
	tp_cur_init(&c, data, len, 0);
	struct gather g;
	memset(&g, 0, sizeof g);
	int rc = TP_OK;
	while (tp_cur_left(&c) > 0) {
		uint64_t at = tp_cur_offset(&c);
		if (tp_cur_left(&c) < 8) {
			rc = tp_diag_at(d, TP_ETRUNC, path, at,
			                "truncated block header: %zu bytes left, a header is 8",
			                tp_cur_left(&c));
			goto out;
		}
		uint32_t type = tp_cur_u32(&c), blen = tp_cur_u32(&c);
		struct tp_cursor b;
		if (blen > tp_cur_left(&c)) {
			rc =
			    tp_diag_at(d, TP_ETRUNC, path, at,
			               "block type %u declares %u bytes, only %zu left in the file",
			               type, blen, tp_cur_left(&c));
			goto out;
		}
		tp_cur_sub(&c, blen, &b);
		w->blocks_read++;
		if ((rc = walk_block(w, &g, dec, type, &b)))
			goto out;
	}
	rc = walk_pmu_ends(w, data, threads, part);
	if (!rc)
		rc = walk_extra(w, &g, path, d);
	if (!rc)
		rc = walk_dyn(w, &g, path, chip, threads, part, d);
out:
	tp_free(g.dyn);
	tp_free(g.extra);
	tp_free(g.ent);
	if (rc == TP_ENOMEM)
		tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
	if (rc != TP_OK)
		cdm_walk_free(w);
	return rc;
}
