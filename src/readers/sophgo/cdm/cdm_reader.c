/*
 * cdm_reader.c — the reader of `cdm_profile_data_dev{D}[-{N}]/` directories (BM1690/SG2260,
 * SG2260E; specs/sophgo-cdm.md). It finds the files (§2), parses them with cdm_file.c, turns
 * every PMU record into a slice of a per-core TIU / GDMA / SDMA track (CDMA: one track per
 * port, on the owning core), runs the normalisation pipeline of §8.2 and the PMU <-> command
 * matching of §8.3, and fills the model. Owns nothing after it returns: the profile goes to
 * the caller.
 *
 * Pipeline (per core, then over all cores), the order bigTpuProfile uses:
 *   1 inst_id unwrap (>65000 then <1000: +65536)   2 timestamp unwrap (+2^32; see below)
 *   3 SDMA/CDMA thread reorder                      4 init trimming (2 PMU records per engine,
 *     anchor = end of TIU record #1), match        5 CDMA ports onto the owner's first SDMA
 *   6 cross-core alignment on the anchors           7 shift to zero   8 pmu_tail_cycle
 *   9 leading / trailing sys commands omitted.
 * Deliberate differences from the vendor tools, each told to the user in a profile note:
 *   - engines of one core are NOT shifted onto each other (tpu-mlir's PerfAI shifts each DMA
 *     stream so its 2nd init record ends at the TIU anchor): the PMU of a core has one cycle
 *     counter, and on the real BM1690 dump the shift makes TIU commands start before the GDMA
 *     loads they depend on (cmd_id_dep) have finished; unshifted they start after.
 *   - the timestamp unwrap adds 2^32 (the tools add 2^32-1) and only when the counter went
 *     back by more than 2^31 cycles, so the overlap of SDMA's two threads is not a "wrap".
 *   - PMU records outside every command section are kept (as tpu-mlir does, unlike
 *     bigTpuProfile's bmodel path), named "unknown", with no direction: tpu-mlir labels them
 *     DDR->LMEM although their counters show no local-memory write.
 * The figures tpu_profile.py prints (its shifted timeline, its labels) are computed as well
 * (vendor_timeline, vendor_rows) and handed over in profile->vendor, with one note per figure
 * that differs; docs/input-cdm.md "The vendor's figures beside tpuprof's" says how.
 *
 * Threads (opts.jobs > 1): read_cores reads the core files that many at a time, one per
 * thread, each on a copy of the reader state whose notes and statistics stay in its struct
 * core_read; names, notes, statistics and the track list change only on the calling thread,
 * in core order, so the profile is the same for every thread count.
 *
 * Slices are built in place: until the end of the pipeline start_ns/end_ns hold raw cycles,
 * cmd_id the unwrapped inst_id and depth the PMU thread bit; finalize() turns them into the
 * model's fields.
 */
#include "readers/sophgo/cdm/cdm_int.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NAME_CACHE_BITS 18

struct core_info {
	int track[3]; /* TIU, GDMA, SDMA track or -1 */
	int have_anchor;
	int64_t anchor;      /* raw end of TIU PMU record #1 (§8.2 step 4) */
	int64_t init_end[3]; /* raw end of each engine's record #1, for the vendor note */
	int have_init[3];
	uint64_t unmatched[3], unmatched_bytes[3];
	/* The vendor's timeline of this core (vendor_timeline), raw cycles: */
	int have_v;       /* 1 when the core has an anchor and records */
	int64_t v_sh[3];  /* shift of each engine onto the TIU anchor */
	int64_t v_span;   /* first start to the end of the last record listed */
	int64_t v_latest; /* first start to the latest end (the workbook's) */
	int64_t hw_span;  /* the same core as recorded */
	uint64_t dep_n, dep_bad_rec, dep_bad_shift; /* dep_check evidence */
};

struct port_info {
	int track;            /* -1 none */
	int owner;            /* core index */
	struct cdm_cmds cmds; /* CDMA commands of this port from the owner's DYN_DATA */
	uint64_t unmatched;
};

struct rd {
	const char *dir;
	struct tp_profile *p;
	struct tp_diag *d;
	const struct sg_chip *chip;
	double tiu_mhz, dma_mhz;
	int device;
	struct cdm_global g;
	char **cores; /* cdmlib file names in core order (owned) */
	size_t ncores;
	char **cdma; /* cdma file names (owned) */
	unsigned *cdma_port;
	size_t ncdma;
	struct core_info *ci;
	struct port_info port[CDM_MAX_PORTS];
	int cdma_owner;         /* core whose DYN_DATA holds CDMA commands, -1 none */
	uint32_t (*cache)[2];   /* (name, type) string ids by command key */
	int mode;               /* 0 PMU only, 1 DYN_DATA, 2 DYN_EXTRA, 3 bmodel descriptors */
	struct sg_decoder *dec; /* owned: BM1690 register tables (regdef_bm1690.c) */
	int detail_opt;         /* enum tp_bmprofile_detail from the options */
	int detail;             /* argument sets for the commands of the core being read */
	/* Interned argument keys of each class's fields ([table engine][class][field], 0 = a
	 * name the class repeats), built the first time a class is seen. Owned. */
	uint32_t **keys[SG_ENG_COUNT];
	/* pmu_of's last hit: walk, engine, PMU span and the engine's records before it. */
	const struct cdm_walk *pmu_w;
	int pmu_eng;
	size_t pmu_k, pmu_base;
	uint64_t id_wraps, ts_wraps, reordered, sys_omitted, des_unknown;
	unsigned jobs;         /* threads for the core files (read_cores); 1 = the caller only */
	struct core_read *job; /* the core being read: notes and statistics go there (rnote,
	                        * RSTATS) until read_cores applies them in core order */
};

/* One core file in read_cores: its file and walk, the core's own settings, and what reading
 * it produces that the calling thread applies afterwards in core order (notes, statistics,
 * wrap counters, the first error, the names it needs), so the profile is the same for every
 * thread count. */
struct core_read {
	size_t core;
	struct tp_file f;
	char *path;
	struct cdm_walk w;
	int loaded, walked;
	size_t have[CDM_NENG]; /* PMU records per engine */
	int cmode;  /* this core's command source: 3 descriptors, 2 DYN_EXTRA, 1 DYN_DATA, 0 none */
	int mode;   /* r->mode once this core is read (the highest source so far) */
	int detail; /* argument sets for this core's commands (then read on the calling thread) */
	int keyed;  /* no detail: names are left as name-cache keys in the labels, each key's
	             * first command kept in first[] (set_names), and core_names interns them */
	int rc;
	struct tp_diag d;
	struct sg_aside aside; /* its notes and statistics (oom: also first[] could not grow) */
	uint64_t id_wraps, ts_wraps, reordered;
	uint8_t *seen;         /* keyed: bitmap of the name-cache keys met (owned) */
	struct cdm_cmd *first; /* keyed: each key's first command, in order of first use (owned) */
	size_t nfirst, cap_first;
};

/* The statistics a reader adds to: the core's while it is read, else the profile's. */
#define RSTATS(r) ((r)->job ? &(r)->job->aside.stats : &(r)->p->stats)

static int nomem(struct rd *r)
{
	return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->dir);
}

/* tp_profile_note, or kept in the core being read. */
__attribute__((format(printf, 2, 3))) static void rnote(struct rd *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sg_vnote(r->p, r->job ? &r->job->aside : NULL, fmt, ap);
	va_end(ap);
}

/* ---- directory ------------------------------------------------------------------------- */

/* The integers in a file name, compared as a tuple (§2: core order). */
static int cmp_int_tuple(const char *a, const char *b)
{
	for (;;) {
		while (*a && (*a < '0' || *a > '9'))
			a++;
		while (*b && (*b < '0' || *b > '9'))
			b++;
		if (!*a || !*b)
			return *a ? 1 : *b ? -1 : 0;
		unsigned long long x = strtoull(a, (char **)&a, 10),
		                   y = strtoull(b, (char **)&b, 10);
		if (x != y)
			return x < y ? -1 : 1;
	}
}

static int qcmp_names(const void *x, const void *y)
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;
	int c = cmp_int_tuple(a, b);
	return c ? c : strcmp(a, b);
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

static int is_core_file(const char *n)
{
	return strncmp(n, "cdmlib", 6) == 0 && ends_with(n, ".profile");
}
static int is_cdma_file(const char *n)
{
	return strncmp(n, "cdma", 4) == 0 && !is_core_file(n) && ends_with(n, ".profile");
}

/* Port = the last integer in the name (cdma{lib}_{port}.profile); -1 if none. */
static long last_int(const char *n)
{
	long v = -1;
	for (const char *s = n; *s;) {
		if (*s >= '0' && *s <= '9') {
			v = strtol(s, (char **)&s, 10);
			continue;
		}
		s++;
	}
	return v;
}

int tp_cdm_probe(const char *dir)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return 0;
	struct dirent *e;
	int found = 0;
	while (!found && (e = readdir(dp)) != NULL)
		found = is_core_file(e->d_name);
	closedir(dp);
	return found;
}

static int push_name(char ***v, size_t *n, size_t *cap, const char *s)
{
	if (*n == *cap) {
		char **nv = tp_grow(*v, sizeof *nv, *n + 1, cap);
		if (!nv)
			return TP_ENOMEM;
		*v = nv;
	}
	if (!((*v)[*n] = tp_strdup(s)))
		return TP_ENOMEM;
	(*n)++;
	return TP_OK;
}

static int scan(struct rd *r)
{
	DIR *dp = opendir(r->dir);
	if (!dp)
		return tp_diag_set(r->d, tp_is_dir(r->dir) ? TP_EIO : TP_ENOTFOUND,
		                   "%s: cannot open the directory", r->dir);
	size_t cap_c = 0, cap_d = 0;
	struct dirent *e;
	int rc = TP_OK;
	while (rc == TP_OK && (e = readdir(dp)) != NULL) {
		if (is_core_file(e->d_name))
			rc = push_name(&r->cores, &r->ncores, &cap_c, e->d_name);
		else if (is_cdma_file(e->d_name))
			rc = push_name(&r->cdma, &r->ncdma, &cap_d, e->d_name);
	}
	closedir(dp);
	if (rc)
		return nomem(r);
	if (!r->ncores)
		return tp_diag_set(r->d, TP_ENOTFOUND, "%s: no cdmlib*.profile file", r->dir);
	if (r->ncores > CDM_MAX_CORES)
		return tp_diag_set(r->d, TP_EUNSUPPORTED,
		                   "%s: %zu cdmlib*.profile files; at most %d "
		                   "cores are supported",
		                   r->dir, r->ncores, CDM_MAX_CORES);
	qsort(r->cores, r->ncores, sizeof *r->cores, qcmp_names);
	if (r->ncdma)
		qsort(r->cdma, r->ncdma, sizeof *r->cdma, qcmp_names);
	if (r->ncdma && !(r->cdma_port = tp_calloc(r->ncdma, sizeof *r->cdma_port)))
		return nomem(r);
	for (size_t i = 0; i < r->ncdma; i++) {
		long pt = last_int(r->cdma[i]);
		if (pt < 0 || pt >= CDM_MAX_PORTS)
			return tp_diag_set(r->d, TP_EFORMAT,
			                   "%s/%s: CDMA port %ld out of range 0..%d", r->dir,
			                   r->cdma[i], pt, CDM_MAX_PORTS - 1);
		r->cdma_port[i] = (unsigned)pt;
	}
	return TP_OK;
}

static int load(struct rd *r, const char *name, struct tp_file *f, char **path)
{
	*path = tp_path_join(r->dir, name);
	if (!*path)
		return nomem(r);
	return tp_file_load(f, *path, r->d);
}

/* ---- names ----------------------------------------------------------------------------- */

/* The name-cache key of command c (NULL = none): every field its names depend on. */
static uint32_t name_key(const struct cdm_cmd *c)
{
	if (!c || !c->known)
		return 0;
	return 1u | (uint32_t)(c->engine & 3u) << 1 | (uint32_t)(c->is_short & 1u) << 3 |
	       (uint32_t)(c->op & 31u) << 4 | (uint32_t)(c->sub & 31u) << 9 |
	       (uint32_t)(c->dir & 15u) << 14; /* < 2^NAME_CACHE_BITS */
}

/* The interned (name, type) of key `key`, those of c on the key's first use. Interns strings:
 * calling thread only. */
static const uint32_t *cached_names(struct rd *r, uint32_t key, const struct cdm_cmd *c)
{
	uint32_t *e = r->cache[key];
	if (!e[0]) {
		const char *type, *name;
		char buf[96];
		struct cdm_cmd none = {0};
		cdm_cmd_names(c ? c : &none, &type, &name, buf, sizeof buf);
		e[0] = tp_profile_str(r->p, name);
		e[1] = tp_profile_str(r->p, type);
	}
	return e;
}

static void set_names(struct rd *r, struct tp_label *s, const struct cdm_cmd *c)
{
	uint32_t key = name_key(c);
	struct core_read *j = r->job;
	if (j && j->keyed) {
		/* Names later (core_names): the key stands in the label meanwhile. */
		if (!(j->seen[key >> 3] & (1u << (key & 7)))) {
			struct cdm_cmd *v =
			    tp_grow(j->first, sizeof *v, j->nfirst + 1, &j->cap_first);
			if (!v) {
				j->aside.oom = 1; /* read_cores reports it */
				return;
			}
			j->first = v;
			v[j->nfirst++] = c ? *c : (struct cdm_cmd){0};
			j->seen[key >> 3] |= (uint8_t)(1u << (key & 7));
		}
		s->name = key;
		s->type = 0;
		return;
	}
	const uint32_t *e = cached_names(r, key, c);
	s->name = e[0];
	s->type = e[1];
}

/* ---- pipeline steps -------------------------------------------------------------------- */

/* Step 1: ids that fall from above 65000 to below 1000 wrapped their 16-bit counter. */
static void unwrap_ids(struct rd *r, struct tp_track *t)
{
	uint32_t delta = 0, last = 0;
	for (size_t i = 0; i < t->count; i++) {
		uint32_t id = t->slices[i].cmd_id;
		if (i && last > 65000 && id < 1000) {
			delta += 65536;
			r->id_wraps++;
		}
		last = id;
		t->slices[i].cmd_id = id + delta;
	}
}

/* The same rule over a command list (DYN_DATA ids are the firmware's 16-bit ids). */
static void unwrap_cmd_ids(struct cdm_cmds *l)
{
	uint32_t delta = 0, last = 0;
	for (size_t i = 0; i < l->n; i++) {
		uint32_t id = l->v[i].id;
		if (i && last > 65000 && id < 1000)
			delta += 65536;
		last = id;
		l->v[i].id = id + delta;
	}
}

#define WRAP ((int64_t)1 << 32)

/* Step 2. TIU/GDMA/SDMA: a start more than 2^31 cycles before the previous end is a counter
 * wrap; CDMA: only when start and end both went back. */
static void unwrap_times(struct rd *r, struct tp_track *t, int cdma)
{
	int64_t off = 0, prev_s = 0, prev_e = 0;
	for (size_t i = 0; i < t->count; i++) {
		struct tp_slice *s = &t->slices[i];
		int64_t st = s->start_ns + off, en = tp_slice_end(t, s) + off;
		if (i) {
			int back = cdma ? (prev_s - st > WRAP / 2 && prev_e - en > WRAP / 2)
			                : prev_e - st > WRAP / 2;
			if (back) {
				off += WRAP;
				st += WRAP;
				en += WRAP;
				r->ts_wraps++;
			}
		}
		if (en < st)
			en += WRAP;
		s->start_ns = st;
		tp_slice_set_end(r->p, t, s, en);
		prev_s = st;
		prev_e = en;
	}
}

/* Step 3: the two threads of SDMA/CDMA retire out of order; put a record back before its
 * predecessor when its id is smaller and the predecessor ran on thread 1, or when the
 * predecessor's id is exactly one larger. */
static void reorder(struct rd *r, struct tp_track *t)
{
	for (size_t i = 1; i < t->count; i++) {
		struct tp_slice *a = &t->slices[i - 1], *b = &t->slices[i];
		if (b->cmd_id < a->cmd_id &&
		    (tp_slice_depth(t, a) == 1 || (a->cmd_id == b->cmd_id + 1 && b->cmd_id != 0))) {
			struct tp_slice x = *a;
			*a = *b;
			*b = x;
			r->reordered++;
		}
	}
}

static void drop_front(struct rd *r, struct tp_track *t, size_t n)
{
	if (n > t->count)
		n = t->count;
	if (n == 0)
		return;
	memmove(t->slices, t->slices + n, (t->count - n) * sizeof *t->slices);
	t->count -= n;
	RSTATS(r)->records_dropped += n;
}

/* Sections: maximal runs of strictly increasing ids (§8.3). */
struct section {
	size_t first, count;
	uint64_t len; /* last id - first id + 1 */
};

static int sections_of(const uint32_t *ids, size_t n, size_t stride, struct section **out,
                       size_t *nout)
{
	size_t ns = 0, cap = 0;
	struct section *v = NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = *(const uint32_t *)((const uint8_t *)ids + i * stride);
		uint32_t prev =
		    i ? *(const uint32_t *)((const uint8_t *)ids + (i - 1) * stride) : 0;
		if (i == 0 || id <= prev) {
			if (ns == cap) {
				struct section *nv = tp_grow(v, sizeof *nv, ns + 1, &cap);
				if (!nv) {
					tp_free(v);
					return TP_ENOMEM;
				}
				v = nv;
			}
			v[ns++] = (struct section){.first = i, .count = 0};
		}
		v[ns - 1].count++;
		uint32_t first =
		    *(const uint32_t *)((const uint8_t *)ids + v[ns - 1].first * stride);
		v[ns - 1].len = (uint64_t)id - first + 1;
	}
	*out = v;
	*nout = ns;
	return TP_OK;
}

/* Pairs PMU sections with command sections by the minimum edit distance on their lengths
 * (match 0 when equal, insertion/deletion 1, substitution 2) and writes pair[i] = command
 * section of PMU section i or -1. Falls back to pairing in order when the table would be
 * larger than 16 M cells. */
static int align_sections(const struct section *ps, size_t np, const struct section *cs, size_t nc,
                          long *pair)
{
	for (size_t i = 0; i < np; i++)
		pair[i] = -1;
	if (np + 1 > ((size_t)16 << 20) / (nc + 1)) {
		for (size_t i = 0; i < np && i < nc; i++)
			pair[i] = (long)i;
		return TP_OK;
	}
	size_t w = nc + 1;
	uint32_t *dp = tp_malloc((np + 1) * w * sizeof *dp);
	if (!dp)
		return TP_ENOMEM;
	for (size_t i = 0; i <= np; i++)
		dp[i * w] = (uint32_t)i;
	for (size_t j = 0; j <= nc; j++)
		dp[j] = (uint32_t)j;
	for (size_t i = 1; i <= np; i++)
		for (size_t j = 1; j <= nc; j++) {
			uint32_t sub =
			    dp[(i - 1) * w + j - 1] + (ps[i - 1].len == cs[j - 1].len ? 0 : 2);
			uint32_t del = dp[(i - 1) * w + j] + 1, ins = dp[i * w + j - 1] + 1;
			uint32_t m = sub < del ? sub : del;
			dp[i * w + j] = m < ins ? m : ins;
		}
	size_t i = np, j = nc;
	while (i > 0 && j > 0) {
		uint32_t here = dp[i * w + j];
		int eq = ps[i - 1].len == cs[j - 1].len;
		if (eq && here == dp[(i - 1) * w + j - 1]) {
			pair[i - 1] = (long)(j - 1);
			i--;
			j--;
		} else if (here == dp[(i - 1) * w + j] + 1) {
			i--;
		} else if (here == dp[i * w + j - 1] + 1) {
			j--;
		} else {
			i--; /* substitution: lengths differ, leave the PMU section unpaired */
			j--;
		}
	}
	tp_free(dp);
	return TP_OK;
}

/* ---- per-command detail (table-decoded descriptors) -------------------------------------- */

/* The argument keys of one class's fields (sg_class_keys: TIU `des_` + regdef name, DMA/CDMA
 * the plain name), built once per class. NULL when out of memory. */
static const uint32_t *class_keys(struct rd *r, int eng, const struct sg_dclass *dc)
{
	size_t ci = (size_t)(dc - r->dec->cls[eng]);
	if (!r->keys[eng] && !(r->keys[eng] = tp_calloc(r->dec->ncls[eng], sizeof *r->keys[eng])))
		return NULL;
	if (r->keys[eng][ci])
		return r->keys[eng][ci];
	uint32_t *k = sg_class_keys(r->p, dc, eng == SG_ENG_TIU, 0);
	if (!k)
		return NULL;
	r->keys[eng][ci] = k;
	return k;
}

static double round4(double x)
{
	return floor(x * 10000.0 + 0.5) / 10000.0;
}

/* The argument set of a table-decoded command (costmodel §3.14, §5 items 1-4, 8-9, BM1690
 * printers bm1690_defs.py::get_tiu_info / get_dma_info): every field under the vendor's
 * name; TIU "Data Type" A -> B and the cost figures (both ratios 0.0%, the rate 0.0% when
 * uArch Ops is 0); GDMA/SDMA the mask and joined address fields, the data type and, from the
 * PMU record `m` (NULL = none), the byte / bandwidth / transaction counters with no clock
 * factor, the bandwidth under DDR or L2M by the direction. */
static void add_detail(struct rd *r, const struct tp_track *t, const struct tp_slice *s,
                       const struct cdm_cmd *c, const struct sg_desc *d, const struct tp_cost *k,
                       const struct cdm_pmu *m)
{
	struct tp_profile *p = r->p;
	int eng = c->engine == CDM_TIU    ? SG_ENG_TIU
	          : c->engine == CDM_CDMA ? SG_ENG_CDMA
	                                  : SG_ENG_DMA;
	const struct sg_dclass *dc = d->cls;
	const uint32_t *keys = class_keys(r, eng, dc);
	if (!keys) {
		p->oom = 1;
		return;
	}
	for (uint16_t i = 0; i < dc->rc->nfields; i++)
		if (keys[i])
			tp_args_add(p,
			            &(struct tp_arg){.key = keys[i],
			                             .type = TP_ARG_UINT,
			                             .v.u = sg_field(d, c->raw, dc->dict_src[i])});
	char buf[40];
	if (eng == SG_ENG_TIU) {
		const char *b = sg_has(d, SG_F_OPT_RES0_PREC)
		                    ? sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_OPT_RES0_PREC))
		                    : "None";
		const char *a = sg_has(d, SG_F_OPT_OPD0_PREC)
		                    ? sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_OPT_OPD0_PREC))
		                    : b;
		snprintf(buf, sizeof buf, "%s -> %s", a, b);
		tp_args_add_str(p, "Data Type", buf);
		if (k->valid) {
			tp_args_add_uint(p, "Alg Ops", k->alg_ops);
			tp_args_add_uint(p, "uArch Ops", k->uarch_ops);
			tp_args_add_uint(p, "Alg Cycle", k->alg_cycle);
			sg_pct1(buf, sizeof buf, (double)k->alg_ops, (double)k->uarch_ops);
			tp_args_add_str(p, "uArch Rate", buf);
			tp_args_add_str(p, "Initial Cycle Ratio", "0.0%");
			tp_args_add_str(p, "Bank Conflict Ratio", "0.0%");
		}
		return;
	}
	if (eng != SG_ENG_DMA)
		return;
	/* sDMA_sys has no address registers: the printer gives it zero addresses, whose tags
	 * (0) read as DDR, and prints that direction. */
	if (strcmp(dc->rc->op_name, "DMA_masked_select") != 0) {
		tp_args_add_uint(p, "mask_start_addr_h8", 0);
		tp_args_add_uint(p, "mask_start_addr_l32", 0);
	}
	uint64_t sa = sg_get(d, c->raw, SG_F_SRC_H8) << 32 | sg_get(d, c->raw, SG_F_SRC_L32);
	uint64_t da = sg_get(d, c->raw, SG_F_DST_H8) << 32 | sg_get(d, c->raw, SG_F_DST_L32);
	tp_args_add_uint(p, "dst_start_addr", da);
	tp_args_add_uint(p, "src_start_addr", sa);
	if (c->kind != TP_CMD_NORMAL)
		tp_args_add_str(p, "Direction", "DDR->DDR");
	if (sg_has(d, SG_F_SRC_FMT))
		tp_args_add_str(p, "Data Type",
		                sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_SRC_FMT)));
	if (!m)
		return;
	/* Slices still hold raw cycles here (finalize() converts them): Asic = end - start + 1. */
	uint64_t x = m->bytes;
	int64_t end = tp_slice_end(t, s);
	double asic = end >= s->start_ns ? (double)(end - s->start_ns + 1) : 1.0;
	double bw = round4((double)x / asic);
	int ddr = tp_dir_touches_ddr((enum tp_dir)c->dir);
	int l2 = !ddr && tp_dir_touches_l2((enum tp_dir)c->dir); /* DDR wins, as the printer's */
	tp_args_add_uint(p, "Stall Cycle", m->stall);
	tp_args_add_uint(p, "gmem_xfer_bytes(B)", x);
	tp_args_add_real(p, "gmem_bandwidth", bw);
	tp_args_add_uint(p, "gmem_dma_data_size(B)", x);
	tp_args_add_uint(p, "lmem_xfer_bytes", x);
	tp_args_add_real(p, "lmem_bandwidth", bw);
	tp_args_add_uint(p, "lmem_dma_data_size(B)", x);
	tp_args_add_uint(p, "DMA data size(B)", x);
	tp_args_add_uint(p, "lmem_xact_cnt", m->lxact);
	tp_args_add_uint(p, "gmem_xact_cnt", m->gxact);
	tp_args_add_real(p, "DDR Bandwidth(GB/s)", ddr ? bw : 0.0);
	tp_args_add_real(p, "L2M Bandwidth(GB/s)", l2 ? bw : 0.0);
	static const char *const zero[] = {"gmem_bl_sum",       "gmem_avg_burst_length",
	                                   "lmem_bl_sum",       "lmem_avg_burst_length",
	                                   "lmem_msk_wr_cnt",   "gmem_msk_wr_cnt",
	                                   "lmem_n32Ba_sa_cnt", "gmem_n32Ba_sa_cnt"};
	for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
		tp_args_add_uint(p, zero[i], 0);
}

/* The PMU record of a GDMA/SDMA slice: fill_track leaves its position among the core file's
 * records of that engine (+1) in s->args until the command is applied. Lookups come mostly
 * in record order, so the span of the previous one is tried first (r->pmu_*). */
static int pmu_of(struct rd *r, const struct cdm_walk *w, const uint8_t *data, int eng,
                  uint32_t pos, struct cdm_pmu *m)
{
	if (!w || !data || !pos)
		return 0;
	size_t i = pos - 1, k = 0, base = 0;
	if (r->pmu_w == w && r->pmu_eng == eng && i >= r->pmu_base) {
		k = r->pmu_k;
		base = r->pmu_base;
	}
	for (; k < w->npmu; k++) {
		if (w->pmu[k].engine != eng)
			continue;
		if (i - base < w->pmu[k].count) {
			r->pmu_w = w;
			r->pmu_eng = eng;
			r->pmu_k = k;
			r->pmu_base = base;
			cdm_pmu_decode(data, &w->pmu[k], i - base, m);
			return 1;
		}
		base += w->pmu[k].count;
	}
	return 0;
}

/* Gives slice `index` of track t its command c (NULL = none): names, kind, direction, data
 * type, dependency; with a table-decoded descriptor the TIU cost (kept beside the slice) and,
 * with detail, the argument set. `data`/`w` are the core file and its walk (NULL for CDMA
 * ports), for the PMU counters. */
static void apply_cmd(struct rd *r, int t, size_t index, const struct cdm_cmd *c,
                      const uint8_t *data, const struct cdm_walk *w)
{
	struct tp_slice *s = &r->p->tracks[t].slices[index];
	uint32_t pos = s->args;
	s->args = 0;
	struct tp_label lb = *tp_slice_label(&r->p->tracks[t], s);
	set_names(r, &lb, c);
	if (c) {
		lb.kind = c->kind;
		lb.dir = c->dir;
		lb.dtype = c->dtype;
	}
	tp_slice_set_label(r->p, &r->p->tracks[t], s, &lb);
	if ((!c || !c->cls) && r->dec && r->mode == 3 && r->p->tracks[t].kind == TP_TRACK_TIU) {
		/* A TIU record without a descriptor in a dump that has them (the profiler's and the
		 * runtime's sync): the vendor's printer counts it as 1 Alg op and 1 uArch op with
		 * no cycles (bm1690_defs.py get_tiu_info_dyn, costmodel §3.14), and its workbook
		 * totals include them (PROVENANCE.txt: totalAlgOps 175461253 = 4 such + the
		 * commands'). */
		tp_track_set_cost(r->p, t, index,
		                  &(struct tp_cost){.alg_ops = 1, .uarch_ops = 1, .valid = 1});
		s = &r->p->tracks[t].slices[index];
	}
	if (!c)
		return;
	s->dep_id = c->dep;
	if (!c->cls || !r->dec)
		return;
	int eng = c->engine == CDM_TIU    ? SG_ENG_TIU
	          : c->engine == CDM_CDMA ? SG_ENG_CDMA
	                                  : SG_ENG_DMA;
	struct sg_desc d = {.cls = c->cls,
	                    .is_short = c->is_short,
	                    .op = c->op,
	                    .sub = c->sub,
	                    .bytes = c->cls->bytes};
	d.sub_name = eng == SG_ENG_TIU
	                 ? r->dec->tiu_sub[c->op & 15][c->sub & 31]
	                 : r->dec->dma_sub[eng == SG_ENG_CDMA][c->op & 31][c->sub & 7];
	struct tp_cost k = {0};
	if (eng == SG_ENG_TIU) {
		sg_tiu_cost(r->chip, &d, c->raw, &k);
		tp_track_set_cost(r->p, t, index, &k);
		s = &r->p->tracks[t].slices[index];
	}
	if (!r->detail)
		return;
	struct cdm_pmu m;
	int have_m = eng == SG_ENG_DMA && pmu_of(r, w, data, c->engine, pos, &m);
	tp_args_begin(r->p);
	add_detail(r, &r->p->tracks[t], s, c, &d, &k, have_m ? &m : NULL);
	s->args = tp_args_end(r->p);
}

/* §8.3: gives every slice of track t its command from cmds (or the "unknown" fallback). */
static int match(struct rd *r, int t, const struct cdm_cmds *cmds, uint64_t *unmatched,
                 uint64_t *unmatched_bytes, const uint8_t *data, const struct cdm_walk *w)
{
	struct tp_track *tr = &r->p->tracks[t];
	size_t n = tr->count;
	if (n == 0)
		return TP_OK;
	if (cmds->n == n) {
		for (size_t i = 0; i < n; i++)
			apply_cmd(r, t, i, &cmds->v[i], data, w);
		return TP_OK;
	}
	struct section *ps = NULL, *cs = NULL;
	size_t np = 0, nc = 0;
	long *pair = NULL;
	int rc = sections_of(&tr->slices[0].cmd_id, n, sizeof *tr->slices, &ps, &np);
	if (rc == TP_OK && cmds->n)
		rc = sections_of(&cmds->v[0].id, cmds->n, sizeof *cmds->v, &cs, &nc);
	if (rc == TP_OK && !(pair = tp_malloc(np * sizeof *pair)))
		rc = TP_ENOMEM;
	if (rc == TP_OK)
		rc = align_sections(ps, np, cs, nc, pair);
	if (rc != TP_OK)
		goto out;
	for (size_t i = 0; i < np; i++) {
		const struct section *p = &ps[i];
		uint32_t id0 = tr->slices[p->first].cmd_id;
		for (size_t k = p->first; k < p->first + p->count; k++) {
			struct tp_slice *s = &tr->slices[k];
			const struct cdm_cmd *c = NULL;
			if (pair[i] >= 0) {
				const struct section *q = &cs[pair[i]];
				uint64_t off = (uint64_t)s->cmd_id - id0;
				if (off < q->count)
					c = &cmds->v[q->first + off];
			}
			apply_cmd(r, t, k, c, data, w);
			s = &r->p->tracks[t].slices[k];
			if (!c) {
				(*unmatched)++;
				*unmatched_bytes += tp_slice_bytes(&r->p->tracks[t], s);
			}
		}
	}
out:
	tp_free(ps);
	tp_free(cs);
	tp_free(pair);
	return rc == TP_ENOMEM ? nomem(r) : rc;
}

/* Step 9: profiler-inserted sync commands at the head and tail of an engine's list. */
/* Returns how many records it omitted. Touches only t: any thread. (cdm_int.h) */
size_t cdm_omit_sys(struct tp_track *t)
{
	size_t lo = 0, hi = t->count;
	while (lo < hi && tp_slice_kind(t, &t->slices[lo]) != TP_CMD_NORMAL)
		lo++;
	while (hi > lo && tp_slice_kind(t, &t->slices[hi - 1]) != TP_CMD_NORMAL)
		hi--;
	if (lo == 0 && hi == t->count)
		return 0;
	memmove(t->slices, t->slices + lo, (hi - lo) * sizeof *t->slices);
	/* The per-slice cost ids (TIU, set by match) follow their slices. */
	if (t->cost && lo)
		memmove(t->cost, (char *)t->cost + lo * t->cost_width, (hi - lo) * t->cost_width);
	size_t n = t->count - (hi - lo);
	t->count = hi - lo;
	return n;
}

/* ---- files ----------------------------------------------------------------------------- */

static const enum tp_track_kind kind_of[CDM_NENG] = {TP_TRACK_TIU, TP_TRACK_GDMA, TP_TRACK_SDMA,
                                                     TP_TRACK_CDMA};

static int fill_track(struct rd *r, int t, const uint8_t *data, const struct cdm_walk *w, int eng)
{
	size_t total = 0;
	for (size_t k = 0; k < w->npmu; k++)
		if (w->pmu[k].engine == eng)
			total += w->pmu[k].count;
	if (tp_track_reserve(r->p, t, total) != TP_OK)
		return nomem(r);
	/* GDMA/SDMA slices carry their record's position (+1) in args until apply_cmd reads the
	 * PMU counters for their argument set (detail with table-decoded descriptors only). */
	int stash = r->detail && r->dec && (eng == CDM_GDMA || eng == CDM_SDMA);
	uint32_t pos = 0;
	for (size_t k = 0; k < w->npmu; k++) {
		if (w->pmu[k].engine != eng)
			continue;
		for (size_t i = 0; i < w->pmu[k].count; i++) {
			struct cdm_pmu m;
			cdm_pmu_decode(data, &w->pmu[k], i, &m);
			struct tp_slice *s = tp_track_push(r->p, t);
			if (!s)
				return nomem(r);
			pos++;
			if (stash)
				s->args = pos;
			s->start_ns = m.start;
			tp_slice_set_end(r->p, &r->p->tracks[t], s, m.end);
			s->cmd_id = m.id;
			tp_slice_set_bytes(r->p, &r->p->tracks[t], s, m.bytes);
			tp_slice_set_stall(r->p, &r->p->tracks[t], s, m.stall);
			tp_slice_set_depth(r->p, &r->p->tracks[t], s, m.thread);
		}
	}
	RSTATS(r)->records_read += total;
	return TP_OK;
}

/* Opens core file cr->core and walks it (any thread: errors go to d). */
static int core_open(const struct rd *r, struct core_read *cr, struct tp_diag *d)
{
	cr->path = tp_path_join(r->dir, r->cores[cr->core]);
	if (!cr->path)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", r->dir);
	int rc = tp_file_load(&cr->f, cr->path, d);
	if (rc)
		return rc;
	cr->loaded = 1;
	rc = cdm_walk_dec(cr->f.data, cr->f.size, cr->path, r->chip, r->dec, &cr->w, d);
	cr->walked = rc == TP_OK;
	return rc;
}

static void core_close(struct core_read *cr)
{
	if (cr->walked)
		cdm_walk_free(&cr->w);
	if (cr->loaded)
		tp_file_release(&cr->f);
	tp_free(cr->path);
	sg_aside_free(&cr->aside);
	tp_free(cr->seen);
	tp_free(cr->first);
	memset(cr, 0, sizeof *cr);
}

/* What a walked core file says before its records are read: statistics, notes, its command
 * source, whether it keeps argument sets; creates its TIU / GDMA / SDMA tracks. Calling
 * thread, core order (r->job = cr). */
static int core_setup(struct rd *r, struct core_read *cr)
{
	const struct cdm_walk *w = &cr->w;
	size_t core = cr->core;
	RSTATS(r)->files_read++;
	RSTATS(r)->blocks_read += w->blocks_read;
	RSTATS(r)->blocks_skipped += w->blocks_skipped;
	size_t *have = cr->have;
	for (size_t k = 0; k < w->npmu; k++)
		have[w->pmu[k].engine] += w->pmu[k].count;
	/* Argument sets: always with DETAIL_ON, never with OFF, and by default while the core
	 * file holds at most TP_BMPROFILE_DETAIL_AUTO_LIMIT records. */
	cr->detail =
	    r->detail_opt == TP_BMPROFILE_DETAIL_ON ||
	    (r->detail_opt == TP_BMPROFILE_DETAIL_AUTO &&
	     have[CDM_TIU] + have[CDM_GDMA] + have[CDM_SDMA] <= TP_BMPROFILE_DETAIL_AUTO_LIMIT);
	if (!cr->detail) {
		cr->keyed = 1;
		if (!(cr->seen = tp_calloc((1u << NAME_CACHE_BITS) / 8, 1)))
			return nomem(r);
	}
	if (have[CDM_CDMA])
		rnote(r,
		      "%s: MONITOR_CDMA blocks in a core file were skipped (CDMA PMU records come "
		      "from cdma*_N.profile)",
		      r->cores[core]);
	/* 3 = the bmodel's descriptor streams (also without the "bmodel" line), 2 = DYN_EXTRA,
	 * 1 = DYN_DATA, 0 = PMU only. */
	cr->cmode = w->have_des && r->g.bmodel ? 3
	            : w->have_extra            ? 2
	            : w->have_dyn              ? 1
	            : w->have_des              ? 3
	                                       : 0;
	if (cr->cmode > r->mode)
		r->mode = cr->cmode;
	cr->mode = r->mode;
	if (w->dyn_v2)
		rnote(r,
		      "%s: DYN_DATA is in the unverified layout v2 (bigTpuProfile 0.3.x); command "
		      "names were not read, the PMU timing was",
		      r->cores[core]);
	if (w->partial_bytes)
		rnote(r, "%s: %llu bytes of partial records at block ends were ignored",
		      r->cores[core], (unsigned long long)w->partial_bytes);
	if (w->des_kv_blocks)
		rnote(r, "%s: %llu BLOCK_DES_KV blocks (DES-mode dispatch) are not decoded",
		      r->cores[core], (unsigned long long)w->des_kv_blocks);
	for (int e = 0; e < CDM_NENG; e++)
		if (w->des_stop_off[e]) {
			r->des_unknown++;
			rnote(r,
			      "%s@0x%llx: descriptor decoding stopped at a header the BM1690 table "
			      "does not know; later commands are unnamed",
			      r->cores[core], (unsigned long long)w->des_stop_off[e]);
		}
	struct core_info *ci = &r->ci[core];
	for (int e = 0; e < 3; e++) {
		ci->track[e] = -1;
		if (!have[e] && !(e < 2 && (have[CDM_TIU] || have[CDM_GDMA])))
			continue;
		char name[16];
		snprintf(name, sizeof name, "%s", tp_track_kind_name(kind_of[e]));
		int t = tp_profile_add_track(r->p, r->device, (int32_t)core, kind_of[e], name,
		                             e == CDM_TIU ? r->tiu_mhz : r->dma_mhz);
		if (t < 0)
			return nomem(r);
		ci->track[e] = t;
	}
	return TP_OK;
}

/* Reads the records of core cr->core onto its tracks (core_setup made them): PMU records,
 * steps 1-4 of the pipeline and the commands (§8.3). Touches only the core's tracks, its
 * core_info and cr when cr->keyed: then any thread may run it, on a copy of the reader with
 * r->job = cr, r->d = &cr->d, r->detail and r->mode the core's. */
static int core_records(struct rd *r, struct core_read *cr)
{
	struct cdm_walk *w = &cr->w;
	size_t core = cr->core;
	struct core_info *ci = &r->ci[core];
	int rc = TP_OK;
	for (int e = 0; e < 3; e++) {
		int t = ci->track[e];
		if (t < 0)
			continue;
		if ((rc = fill_track(r, t, cr->f.data, w, e)))
			return rc;
		struct tp_track *tr = &r->p->tracks[t];
		unwrap_ids(r, tr);
		unwrap_times(r, tr, 0);
		if (e == CDM_SDMA)
			reorder(r, tr);
		uint64_t want = r->g.rec[core < CDM_MAX_CORES ? core : 0][e];
		if (want && want - 1 != tr->count)
			rnote(r, "%s: %zu %s PMU records, global.profile says %llu", r->cores[core],
			      tr->count, tp_track_kind_name(kind_of[e]),
			      (unsigned long long)(want - 1));
		/* Step 4: the first two records are the init handshake (GDMA send -> TIU wait). */
		if (tr->count >= 2) {
			ci->init_end[e] = tp_slice_end(tr, &tr->slices[1]);
			ci->have_init[e] = 1;
			if (e == CDM_TIU) {
				ci->anchor = tp_slice_end(tr, &tr->slices[1]);
				ci->have_anchor = 1;
			}
		}
		drop_front(r, tr, 2);
		/* Commands: the bmodel's descriptor streams, else the DYN_DATA stream (whose own
		 * first two commands are the init sync). */
		struct cdm_cmds *cmds = NULL;
		if (cr->cmode == 3) {
			cmds = &w->des[e];
		} else if (w->have_dyn && !w->dyn_v2) {
			cmds = &w->dyn[e];
			size_t k = cmds->n < 2 ? cmds->n : 2;
			if (k) {
				memmove(cmds->v, cmds->v + k, (cmds->n - k) * sizeof *cmds->v);
				cmds->n -= k;
			}
			unwrap_cmd_ids(cmds);
		}
		struct cdm_cmds none = {0};
		if ((rc = match(r, t, cmds ? cmds : &none, &ci->unmatched[e],
		                &ci->unmatched_bytes[e], cr->f.data, w)))
			return rc;
	}
	if (!ci->have_anchor && (cr->have[CDM_TIU] || cr->have[CDM_GDMA]))
		rnote(
		    r,
		    "%s: fewer than 2 TIU PMU records: no init handshake, the core is not aligned "
		    "with the others",
		    r->cores[core]);
	if (cr->aside.oom)
		return nomem(r);
	return TP_OK;
}

/* Interns the names a keyed core's commands need, in the order set_names would have at their
 * first use (the core's TIU, GDMA, SDMA records in order). Calling thread, core order. */
static void core_names(struct rd *r, struct core_read *cr)
{
	for (size_t i = 0; i < cr->nfirst; i++)
		cached_names(r, name_key(&cr->first[i]), &cr->first[i]);
}

/* Gives a keyed core's slices their names (core_names interned them): each label of its
 * tracks maps to the label with the key's names, then every slice follows the map. Reads the
 * name cache, writes the core's tracks: any thread. */
static int core_relabel(struct rd *r, struct core_read *cr)
{
	for (int e = 0; e < 3; e++) {
		int t = r->ci[cr->core].track[e];
		if (t < 0)
			continue;
		struct tp_track *tr = &r->p->tracks[t];
		uint32_t n = tr->num_labels;
		uint32_t *map = tp_malloc((size_t)n * sizeof *map);
		if (!map)
			return TP_ENOMEM;
		/* Every slice's label holds a key now (match gave each slice its command); labels
		 * no slice uses any more (fill_track's, name 0) map to something unused. */
		for (uint32_t i = 0; i < n; i++) {
			struct tp_label l = tr->labels[i];
			const uint32_t *names = r->cache[l.name & ((1u << NAME_CACHE_BITS) - 1)];
			l.name = names[0];
			l.type = names[1];
			if (tp_track_label(tr, &l, &map[i]) != TP_OK) {
				tp_free(map);
				return TP_ENOMEM;
			}
		}
		for (size_t k = 0; k < tr->count; k++)
			tr->slices[k].label = map[tr->slices[k].label];
		tp_free(map);
	}
	return TP_OK;
}

/* tp_par_run's calls of read_cores: step 0 opens and walks core k's file, step 1 reads a
 * keyed core's records, step 2 relabels them; each on a copy of the reader whose notes,
 * statistics and errors stay in the core's struct core_read. */
struct cores_par {
	struct rd *r;
	struct core_read *cr;
	int step;
};

static void cores_par_one(void *v, size_t k)
{
	struct cores_par *a = v;
	struct core_read *cr = &a->cr[k];
	if (a->step == 0) {
		cr->rc = core_open(a->r, cr, &cr->d);
		return;
	}
	if (!cr->keyed || cr->rc)
		return;
	struct rd rk = *a->r;
	rk.job = cr;
	rk.d = &cr->d;
	rk.detail = cr->detail;
	rk.mode = cr->mode;
	rk.pmu_w = NULL;
	rk.id_wraps = rk.ts_wraps = rk.reordered = 0;
	if (a->step == 1) {
		cr->rc = core_records(&rk, cr);
		cr->id_wraps = rk.id_wraps;
		cr->ts_wraps = rk.ts_wraps;
		cr->reordered = rk.reordered;
	} else if (core_relabel(&rk, cr) != TP_OK) {
		cr->rc = nomem(&rk);
	}
}

/* Reads the core files, r->jobs at a time (one thread each): open and walk them at once;
 * then on the calling thread in core order their statistics, notes and tracks (core_setup);
 * their records at once (core_records; a core that keeps argument sets is read afterwards on
 * the calling thread, in its turn, as the argument store is shared); the names in core order
 * (core_names) and the labels at once (core_relabel). Whatever is shared (strings, notes,
 * statistics, the track list, CDMA command lists) changes only on the calling thread, in core
 * order, so the profile is the same for every r->jobs. At most r->jobs core files (and their
 * walks) are held at a time. */
static int read_cores(struct rd *r)
{
	size_t wave = r->jobs > 1 ? r->jobs : 1;
	struct core_read *cr = tp_calloc(wave, sizeof *cr);
	if (!cr)
		return nomem(r);
	int rc = TP_OK;
	for (size_t c0 = 0; c0 < r->ncores && rc == TP_OK; c0 += wave) {
		size_t n = r->ncores - c0 < wave ? r->ncores - c0 : wave;
		for (size_t k = 0; k < n; k++)
			cr[k].core = c0 + k;
		struct cores_par a = {.r = r, .cr = cr, .step = 0};
		tp_par_run((unsigned)wave, n, cores_par_one, &a);
		for (size_t k = 0; k < n && rc == TP_OK; k++) {
			if (cr[k].rc) {
				*r->d = cr[k].d;
				rc = cr[k].rc;
				break;
			}
			r->job = &cr[k];
			rc = core_setup(r, &cr[k]);
			r->job = NULL;
		}
		if (rc == TP_OK) {
			a.step = 1;
			tp_par_run((unsigned)wave, n, cores_par_one, &a);
		}
		for (size_t k = 0; k < n && rc == TP_OK; k++) {
			struct core_read *x = &cr[k];
			r->job = x;
			if (!x->keyed) {
				int mode = r->mode;
				r->mode = x->mode;
				r->detail = x->detail;
				r->pmu_w = NULL; /* a new walk (possibly at the same address) */
				rc = core_records(r, x);
				r->mode = mode;
			} else if (x->rc) {
				*r->d = x->d;
				rc = x->rc;
			} else {
				core_names(r, x);
				r->id_wraps += x->id_wraps;
				r->ts_wraps += x->ts_wraps;
				r->reordered += x->reordered;
			}
			r->job = NULL;
			if (rc)
				break;
			if (sg_aside_apply(r->p, &x->aside) != TP_OK)
				rc = nomem(r);
			r->detail = x->detail; /* read_cdma's, as the last core file's */
		}
		if (rc == TP_OK) {
			a.step = 2;
			tp_par_run((unsigned)wave, n, cores_par_one, &a);
			for (size_t k = 0; k < n && rc == TP_OK; k++)
				if (cr[k].rc) {
					*r->d = cr[k].d;
					rc = cr[k].rc;
				}
		}
		/* CDMA commands ride in the owner core's DYN_DATA, one list per port (§8.2 step 5).
		 */
		for (size_t k = 0; k < n && rc == TP_OK; k++) {
			const struct cdm_cmds *cd = &cr[k].w.dyn[CDM_CDMA];
			if (!cd->n || cr[k].w.dyn_v2)
				continue;
			r->cdma_owner = (int)cr[k].core;
			for (size_t i = 0; i < cd->n && rc == TP_OK; i++) {
				struct cdm_cmds *l = &r->port[cd->v[i].port].cmds;
				if (l->n == l->cap) {
					struct cdm_cmd *v =
					    tp_grow(l->v, sizeof *v, l->n + 1, &l->cap);
					if (!v) {
						rc = nomem(r);
						break;
					}
					l->v = v;
				}
				l->v[l->n++] = cd->v[i];
			}
		}
		for (size_t k = 0; k < n; k++)
			core_close(&cr[k]);
	}
	tp_free(cr);
	return rc;
}

static int read_cdma(struct rd *r, size_t k)
{
	unsigned port = r->cdma_port[k];
	struct port_info *pi = &r->port[port];
	struct tp_file f;
	char *path = NULL;
	int rc = load(r, r->cdma[k], &f, &path);
	if (rc) {
		tp_free(path);
		return rc;
	}
	struct cdm_walk w;
	rc = cdm_walk_dec(f.data, f.size, path, r->chip, r->dec, &w, r->d);
	if (rc)
		goto out_file;
	r->p->stats.files_read++;
	r->p->stats.blocks_read += w.blocks_read;
	r->p->stats.blocks_skipped += w.blocks_skipped;
	size_t have = 0;
	for (size_t i = 0; i < w.npmu; i++)
		if (w.pmu[i].engine == CDM_CDMA)
			have += w.pmu[i].count;
	if (!have)
		goto out_walk;
	if (pi->track >= 0) {
		rc =
		    tp_diag_set(r->d, TP_EFORMAT, "%s: a second file for CDMA port %u", path, port);
		goto out_walk;
	}
	/* Owner: the core whose DYN_DATA carries CDMA commands; tpu-mlir's default is the last
	 * core (index 7 on an 8-core dump). */
	pi->owner = r->cdma_owner >= 0 ? r->cdma_owner : (int)r->ncores - 1;
	char name[32];
	snprintf(name, sizeof name, "CDMA port %u", port);
	int t = tp_profile_add_track(r->p, r->device, pi->owner, TP_TRACK_CDMA, name, r->dma_mhz);
	if (t < 0) {
		rc = nomem(r);
		goto out_walk;
	}
	pi->track = t;
	if ((rc = fill_track(r, t, f.data, &w, CDM_CDMA)))
		goto out_walk;
	struct tp_track *tr = &r->p->tracks[t];
	unwrap_ids(r, tr);
	unwrap_times(r, tr, 1);
	reorder(r, tr);
out_walk:
	cdm_walk_free(&w);
out_file:
	tp_file_release(&f);
	tp_free(path);
	return rc;
}

/* ---- whole-device steps ---------------------------------------------------------------- */

static void shift_track(struct tp_profile *p, int t, int64_t by)
{
	if (t < 0 || by == 0)
		return;
	struct tp_track *tr = &p->tracks[t];
	for (size_t i = 0; i < tr->count; i++)
		tr->slices[i].start_ns -= by; /* the end moves with the start */
}

/* Step 5: each CDMA port onto its owner's first SDMA record (a vSDMA send). */
static int align_cdma(struct rd *r)
{
	int used_sdma = -1;
	for (unsigned port = 0; port < CDM_MAX_PORTS; port++) {
		struct port_info *pi = &r->port[port];
		if (pi->track < 0)
			continue;
		struct tp_track *tr = &r->p->tracks[pi->track];
		int st = r->ci[pi->owner].track[CDM_SDMA];
		if (tr->count && st >= 0 && r->p->tracks[st].count) {
			int64_t off = tp_slice_end(tr, &tr->slices[0]) -
			              tp_slice_end(&r->p->tracks[st], &r->p->tracks[st].slices[0]);
			shift_track(r->p, pi->track, off);
			used_sdma = st;
		} else if (tr->count) {
			tp_profile_note(r->p,
			                "CDMA port %u: core %d has no SDMA record to align with; "
			                "left on its own clock",
			                port, pi->owner);
		}
		drop_front(r, tr, 2);
		/* CDMA ids start at 1 (§4.4); the commands of the port follow its 2 init records.
		 */
		struct cdm_cmds *l = &pi->cmds;
		size_t k = l->n < 2 ? l->n : 2;
		if (l->n) {
			memmove(l->v, l->v + k, (l->n - k) * sizeof *l->v);
			l->n -= k;
		}
		unwrap_cmd_ids(l);
		uint64_t ub = 0;
		int rc = match(r, pi->track, l, &pi->unmatched, &ub, NULL, NULL);
		if (rc)
			return rc;
	}
	if (used_sdma >= 0)
		drop_front(r, &r->p->tracks[used_sdma], 1);
	return TP_OK;
}

static int all_tracks_of(struct rd *r, size_t core, int *out)
{
	int n = 0;
	for (int e = 0; e < 3; e++)
		if (r->ci[core].track[e] >= 0)
			out[n++] = r->ci[core].track[e];
	for (unsigned port = 0; port < CDM_MAX_PORTS; port++)
		if (r->port[port].track >= 0 && r->port[port].owner == (int)core)
			out[n++] = r->port[port].track;
	return n;
}

static void finalize_track(struct tp_profile *p, struct tp_track *t, int64_t zero)
{
	double mhz = t->freq_mhz;
	for (size_t i = 0; i < t->count; i++) {
		struct tp_slice *s = &t->slices[i];
		int64_t cs = s->start_ns - zero, ce = tp_slice_end(t, s) - zero;
		uint64_t cyc = (uint64_t)(ce - cs) + 1;
		tp_slice_set_start_cycle(p, t, s, (uint64_t)cs);
		s->cycles = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
		s->start_ns = tp_cycles_to_ns((uint64_t)cs, mhz);
		tp_slice_set_end(p, t, s, tp_cycles_to_ns((uint64_t)ce, mhz));
		/* "Cmd Id" = inst_id + 1, except CDMA whose ids already start at 1 (§8.3). */
		if (t->kind != TP_TRACK_CDMA)
			s->cmd_id += 1;
		tp_slice_set_depth(p, t, s, 0);
	}
}

static int set_meta_i64(struct rd *r, const char *k, long long v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", v);
	return tp_profile_set_meta(r->p, k, buf);
}

/* Ends of the matched GDMA commands of a track by inst_id, for the dependency check. */
struct id_end {
	uint32_t id;
	int64_t end;
};

static int cmp_id_end(const void *x, const void *y)
{
	const struct id_end *a = x, *b = y;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The ends of core c's matched GDMA commands sorted by id (*out, caller frees; NULL when the
 * core lacks a TIU or GDMA track or memory ran out: the note is optional). The ids of a
 * stream are usually already in order: then no sort (the stable sort would not move
 * anything either). */
static size_t dep_ends(struct rd *r, size_t c, struct id_end **out)
{
	*out = NULL;
	int tt = r->ci[c].track[CDM_TIU], gt = r->ci[c].track[CDM_GDMA];
	if (tt < 0 || gt < 0)
		return 0;
	const struct tp_track *g = &r->p->tracks[gt];
	uint32_t unknown = tp_profile_find_str(r->p, "unknown");
	struct id_end *v = tp_malloc((g->count + 1) * sizeof *v);
	if (!v)
		return 0;
	size_t m = 0;
	int in_order = 1;
	for (size_t i = 0; i < g->count; i++)
		if (tp_slice_name(g, &g->slices[i]) != unknown) {
			v[m] = (struct id_end){g->slices[i].cmd_id, tp_slice_end(g, &g->slices[i])};
			if (m && v[m - 1].id > v[m].id)
				in_order = 0;
			m++;
		}
	if (!in_order)
		qsort(v, m, sizeof *v, cmp_id_end);
	*out = v;
	return m;
}

/* Counts the TIU commands of core `c` with a cmd_id_dep on a GDMA command (identified by a
 * unique id among the matched GDMA commands, v[0..m) from dep_ends) and those that start
 * before that GDMA command ends when GDMA is shifted by `shift` cycles. Raw-cycle phase
 * (cmd_id = inst_id). */
static void dep_check(struct rd *r, size_t c, const struct id_end *v, size_t m,
                      const int64_t *shift, uint64_t *n, uint64_t *bad)
{
	*n = *bad = 0;
	if (!v)
		return;
	const struct tp_track *t = &r->p->tracks[r->ci[c].track[CDM_TIU]];
	uint32_t unknown = tp_profile_find_str(r->p, "unknown");
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (!s->dep_id || tp_slice_name(t, s) == unknown)
			continue;
		struct id_end key = {s->dep_id - 1, 0};
		const struct id_end *hit = bsearch(&key, v, m, sizeof *v, cmp_id_end);
		if (!hit || (hit > v && hit[-1].id == key.id) ||
		    (hit + 1 < v + m && hit[1].id == key.id))
			continue;
		(*n)++;
		if (s->start_ns + shift[CDM_TIU] < hit->end + shift[CDM_GDMA])
			(*bad)++;
	}
}

/* The vendor's timeline of core c (tpu-mlir PerfAI / tpu_profile.py, sophgo-cdm.md §8.2 step
 * 4, the April-2025 variant): each DMA stream shifted so that its second init record ends at
 * the TIU anchor. Records its span the two ways the vendor's outputs take it and the
 * dependency evidence for the note; runs on raw cycles before the sys commands are omitted. */
static void vendor_timeline(struct rd *r, size_t c)
{
	struct core_info *ci = &r->ci[c];
	int64_t vz = INT64_MAX, vt = INT64_MIN, oz = INT64_MAX, ot = INT64_MIN;
	int64_t last_listed = INT64_MIN; /* shifted end of the last record of the last engine list
	                                    (TIU, GDMA, SDMA order) */
	if (!ci->have_anchor)
		return;
	for (int e = 0; e < 3; e++)
		ci->v_sh[e] = e && ci->have_init[e] ? ci->anchor - ci->init_end[e] : 0;
	for (int e = 0; e < 3; e++) {
		if (ci->track[e] < 0)
			continue;
		const struct tp_track *x = &r->p->tracks[ci->track[e]];
		int64_t sh = ci->v_sh[e];
		for (size_t i = 0; i < x->count; i++) {
			const struct tp_slice *s = &x->slices[i];
			vz = s->start_ns + sh < vz ? s->start_ns + sh : vz;
			vt = tp_slice_end(x, s) + sh > vt ? tp_slice_end(x, s) + sh : vt;
			oz = s->start_ns < oz ? s->start_ns : oz;
			ot = tp_slice_end(x, s) > ot ? tp_slice_end(x, s) : ot;
		}
		if (x->count)
			last_listed = tp_slice_end(x, &x->slices[x->count - 1]) + sh;
	}
	if (vz == INT64_MAX)
		return;
	ci->have_v = 1;
	ci->v_span = last_listed - vz;
	ci->v_latest = vt - vz;
	ci->hw_span = ot - oz;
	const int64_t none[3] = {0, 0, 0};
	struct id_end *v;
	size_t m = dep_ends(r, c, &v);
	dep_check(r, c, v, m, none, &ci->dep_n, &ci->dep_bad_rec);
	dep_check(r, c, v, m, ci->v_sh, &ci->dep_n, &ci->dep_bad_shift);
	tp_free(v);
}

/* tp_par_run's calls of align_all: step 0 shifts track k (step 6) and finds its first start
 * and last end; step 1 is core k's vendor timeline; step 2 finalizes track k at `zero` and
 * omits its leading and trailing sys commands (steps 7-9). Each touches only its own track
 * or core (and p->oom). */
struct track_par {
	struct rd *r;
	int step;
	int64_t zero;
	int64_t *shift, *lo, *hi; /* per track */
	size_t *omitted;          /* per track */
};

static void track_par_one(void *v, size_t k)
{
	struct track_par *a = v;
	struct tp_profile *p = a->r->p;
	if (a->step == 1) {
		vendor_timeline(a->r, k);
		return;
	}
	struct tp_track *x = &p->tracks[k];
	if (a->step == 2) {
		finalize_track(p, x, a->zero);
		a->omitted[k] = cdm_omit_sys(x);
		return;
	}
	shift_track(p, (int)k, a->shift[k]);
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < x->count; i++) {
		if (x->slices[i].start_ns < lo)
			lo = x->slices[i].start_ns;
		if (tp_slice_end(x, &x->slices[i]) > hi)
			hi = tp_slice_end(x, &x->slices[i]);
	}
	a->lo[k] = lo;
	a->hi[k] = hi;
}

/* Steps 6-9 plus the notes about them. */
static int align_all(struct rd *r)
{
	int rc = align_cdma(r);
	if (rc)
		return rc;
	size_t ref = r->ncores;
	for (size_t c = 0; c < r->ncores && ref == r->ncores; c++)
		if (r->ci[c].have_anchor)
			ref = c;
	size_t nt = r->p->num_tracks;
	struct track_par a = {.r = r,
	                      .shift = tp_calloc(nt + 1, sizeof *a.shift),
	                      .lo = tp_malloc((nt + 1) * sizeof *a.lo),
	                      .hi = tp_malloc((nt + 1) * sizeof *a.hi),
	                      .omitted = tp_calloc(nt + 1, sizeof *a.omitted)};
	if (!a.shift || !a.lo || !a.hi || !a.omitted) {
		rc = nomem(r);
		goto out;
	}
	int tr[3 + CDM_MAX_PORTS];
	if (ref < r->ncores)
		for (size_t c = 0; c < r->ncores; c++) {
			if (!r->ci[c].have_anchor)
				continue;
			int n = all_tracks_of(r, c, tr);
			for (int i = 0; i < n; i++)
				a.shift[tr[i]] = r->ci[c].anchor - r->ci[ref].anchor;
		}
	/* Per track at once: the shift, then each track's first start and last end. */
	a.step = 0;
	tp_par_run(r->jobs, nt, track_par_one, &a);
	int64_t zero = INT64_MAX, tail = INT64_MIN;
	for (size_t t = 0; t < nt; t++) {
		zero = a.lo[t] < zero ? a.lo[t] : zero;
		tail = a.hi[t] > tail ? a.hi[t] : tail;
	}
	if (zero == INT64_MAX)
		zero = tail = 0;
	/* The vendor's timeline, for its figures (vendor_rows): per core at once (each writes
	 * only its core_info). */
	a.step = 1;
	tp_par_run(r->jobs, r->ncores, track_par_one, &a);
	if ((rc = set_meta_i64(r, "pmu_tail_cycle", (long long)(tail - zero))) != TP_OK) {
		rc = nomem(r);
		goto out;
	}
	a.step = 2;
	a.zero = zero;
	tp_par_run(r->jobs, nt, track_par_one, &a);
	for (size_t t = 0; t < nt; t++) {
		r->sys_omitted += a.omitted[t];
		r->p->stats.records_dropped += a.omitted[t];
	}
	if (r->p->oom)
		rc = nomem(r);
out:
	tp_free(a.shift);
	tp_free(a.lo);
	tp_free(a.hi);
	tp_free(a.omitted);
	return rc;
}

/* Bandwidth of engine e of core c the way tpu-mlir's web summary counts it (costmodel §5 item
 * 10, with the BM1690 DDR/L2M split of item 8): the non-sys commands whose direction names DDR
 * (l2 = 0) or, failing that, L2 (l2 = 1), zero-byte ones included; records without a command
 * count as DDR->LMEM, the label tpu-mlir gives them. */
static double vendor_gbps(struct rd *r, size_t c, int e, int l2)
{
	int t = r->ci[c].track[e];
	if (t < 0)
		return 0;
	uint32_t unknown = tp_profile_find_str(r->p, "unknown");
	const struct tp_track *g = &r->p->tracks[t];
	uint64_t bytes = 0, cyc = 0;
	for (size_t i = 0; i < g->count; i++) {
		const struct tp_slice *s = &g->slices[i];
		enum tp_dir d = tp_slice_name(g, s) == unknown ? TP_DIR_DDR_TO_LMEM
		                                               : (enum tp_dir)tp_slice_dir(g, s);
		int ddr = tp_dir_touches_ddr(d), in = l2 ? !ddr && tp_dir_touches_l2(d) : ddr;
		if (in &&
		    (tp_slice_name(g, s) == unknown || tp_slice_kind(g, s) == TP_CMD_NORMAL)) {
			bytes += tp_slice_bytes(g, s);
			cyc += s->cycles;
		}
	}
	int64_t ns = tp_cycles_to_ns(cyc, g->freq_mhz);
	return ns > 0 ? (double)bytes / (double)ns : 0;
}

/* Σ Asic Cycle without wait_msg: the vendor's totalTiuCycle / totalGdmaCycle / ... */
static uint64_t working_cycles(const struct tp_track *t)
{
	uint64_t n = 0;
	for (size_t i = 0; i < t->count; i++)
		if (tp_slice_kind(t, &t->slices[i]) != TP_CMD_SYS_WAIT)
			n += t->slices[i].cycles;
	return n;
}

/* A core's passes over its slices for vendor_rows (working cycles per engine, the three
 * bandwidths), computed for every core at once: reads only. */
struct vendor_pass {
	uint64_t cyc[3];
	double gbps[3]; /* GDMA DDR, GDMA L2, SDMA DDR */
};

struct vendor_par {
	struct rd *r;
	struct vendor_pass *v;
};

static void vendor_par_one(void *arg, size_t c)
{
	struct vendor_par *a = arg;
	struct rd *r = a->r;
	const struct core_info *ci = &r->ci[c];
	if (!ci->have_v)
		return;
	for (int e = 0; e < 3; e++)
		if (ci->track[e] >= 0)
			a->v[c].cyc[e] = working_cycles(&r->p->tracks[ci->track[e]]);
	a->v[c].gbps[0] = vendor_gbps(r, c, CDM_GDMA, 0);
	a->v[c].gbps[1] = vendor_gbps(r, c, CDM_GDMA, 1);
	a->v[c].gbps[2] = vendor_gbps(r, c, CDM_SDMA, 0);
}

/* The figures tpu_profile.py prints for each core (its summary, not its workbook), computed
 * from its timeline and its direction labels, with one note per figure that differs from
 * tpuprof's own and why. Runs after finalize. */
static int vendor_rows(struct rd *r)
{
	struct vendor_par a = {.r = r, .v = tp_calloc(r->ncores + 1, sizeof *a.v)};
	if (!a.v)
		return nomem(r);
	tp_par_run(r->jobs, r->ncores, vendor_par_one, &a);
	for (size_t c = 0; c < r->ncores; c++) {
		const struct core_info *ci = &r->ci[c];
		if (!ci->have_v)
			continue;
		struct tp_vendor_row *v =
		    tp_profile_vendor_row(r->p, "tpu_profile.py", r->device, (int32_t)c);
		if (!v) {
			tp_free(a.v);
			return nomem(r);
		}
		int64_t ns[3] = {0, 0, 0};
		uint64_t *cyc[3] = {&v->tiu_cycle, &v->gdma_cycle, &v->sdma_cycle};
		for (int e = 0; e < 3; e++) {
			if (ci->track[e] < 0)
				continue;
			const struct tp_track *t = &r->p->tracks[ci->track[e]];
			v->records[e] = t->count;
			*cyc[e] = a.v[c].cyc[e];
			ns[e] = tp_cycles_to_ns(*cyc[e], t->freq_mhz);
		}
		for (unsigned port = 0; port < CDM_MAX_PORTS; port++)
			if (r->port[port].track >= 0 && r->port[port].owner == (int)c)
				v->records[TP_TRACK_CDMA] +=
				    r->p->tracks[r->port[port].track].count;
		v->total_time_ns = tp_cycles_to_ns((uint64_t)ci->v_span, r->tiu_mhz);
		double total = (double)v->total_time_ns;
		v->tiu_working_ratio = total > 0 ? (double)ns[0] / total : 0;
		v->parallelism = total > 0 ? (double)(ns[0] + ns[1] + ns[2]) / total : 0;
		v->gdma_ddr_gbps = a.v[c].gbps[0];
		v->gdma_l2_gbps = a.v[c].gbps[1];
		v->sdma_ddr_gbps = a.v[c].gbps[2];
		if (ci->v_span != ci->hw_span || ci->v_sh[1] || ci->v_sh[2]) {
			char ev[160] = "";
			if (ci->dep_n)
				snprintf(
				    ev, sizeof ev,
				    " (then %llu of %llu TIU commands would start before the GDMA "
				    "command they wait on (cmd_id_dep) ends; as recorded, %llu do)",
				    (unsigned long long)ci->dep_bad_shift,
				    (unsigned long long)ci->dep_n,
				    (unsigned long long)ci->dep_bad_rec);
			double us_hw =
			    (double)tp_cycles_to_ns((uint64_t)ci->hw_span, r->tiu_mhz) / 1e3;
			double us_wb =
			    (double)tp_cycles_to_ns((uint64_t)ci->v_latest, r->tiu_mhz) / 1e3;
			tp_profile_note(
			    r->p,
			    "totalTime, core %zu: tpuprof keeps the engines on the one cycle "
			    "counter they share (core span %.3f us as recorded); "
			    "tpu_profile.py's %.3f us shifts GDMA by %+lld and SDMA by %+lld "
			    "cycles onto the TIU init handshake%s and ends at the last record "
			    "of its last engine list, not the latest end; its workbook's "
			    "%.3f us is that shifted span to the latest end",
			    c, us_hw, total / 1e3, (long long)ci->v_sh[1], (long long)ci->v_sh[2],
			    ev, us_wb);
			tp_profile_note(
			    r->p,
			    "TiuWorkingRatio, core %zu: tpu_profile.py's %.2f%% is the same "
			    "totalTiuCycle over its totalTime (see totalTime)",
			    c, v->tiu_working_ratio * 100);
			tp_profile_note(
			    r->p,
			    "Parallelism, core %zu: tpu_profile.py's %.2f%% is the same TIU + "
			    "GDMA + SDMA working cycles over its totalTime (see totalTime)",
			    c, v->parallelism * 100);
		}
		static const char *const col[3] = {"", "GdmaDdrAvgBW", "SdmaDdrAvgBW"};
		const double bw[3] = {0, v->gdma_ddr_gbps, v->sdma_ddr_gbps};
		for (int e = CDM_GDMA; e <= CDM_SDMA; e++)
			if (ci->unmatched[e] && ci->unmatched_bytes[e] && r->mode != 0)
				tp_profile_note(
				    r->p,
				    "%s, core %zu: tpuprof counts the commands with a descriptor "
				    "only; tpu_profile.py's %.2f GB/s also counts the %llu PMU "
				    "records outside the command stream (runtime input/output "
				    "copies, profiler sync; %llu bytes) as DDR->LMEM, although "
				    "their counters show no local-memory write: tpuprof names "
				    "them unknown, with no direction",
				    col[e], c, bw[e], (unsigned long long)ci->unmatched[e],
				    (unsigned long long)ci->unmatched_bytes[e]);
	}
	tp_free(a.v);
	return TP_OK;
}

static int notes(struct rd *r)
{
	int rc;
	static const char *const en[3] = {"TIU", "GDMA", "SDMA"};
	for (size_t c = 0; c < r->ncores; c++)
		for (int e = 0; e < 3; e++) {
			const struct core_info *ci = &r->ci[c];
			if (!ci->unmatched[e] || r->mode == 0)
				continue;
			if (e != CDM_TIU && ci->unmatched_bytes[e] && ci->have_v)
				continue; /* vendor_rows' bandwidth note says it */
			tp_profile_note(r->p,
			                "core %zu %s: %llu PMU records outside the command "
			                "stream (the runtime's and the profiler's sync) are "
			                "named unknown",
			                c, en[e], (unsigned long long)ci->unmatched[e]);
		}
	if ((rc = vendor_rows(r)) != TP_OK)
		return rc;
	if (r->mode == 0)
		tp_profile_note(r->p,
		                "PMU-only profile (mode 0): commands have no names, directions "
		                "or data types");
	if (r->id_wraps)
		tp_profile_note(r->p, "inst_id wrapped its 16-bit counter %llu times (unwrapped)",
		                (unsigned long long)r->id_wraps);
	if (r->ts_wraps)
		tp_profile_note(r->p,
		                "the 32-bit cycle counter wrapped %llu times (unwrapped with "
		                "2^32; the vendor tools add 2^32-1)",
		                (unsigned long long)r->ts_wraps);
	if (r->sys_omitted)
		tp_profile_note(r->p,
		                "%llu profiler-inserted sys commands at the head/tail of engine "
		                "lists were omitted",
		                (unsigned long long)r->sys_omitted);
	if (r->ncores > r->chip->c.cores)
		tp_profile_note(r->p, "%zu core files for a %u-core %s", r->ncores,
		                r->chip->c.cores, r->chip->c.name);
	static const char *const mode_name[4] = {"0 (PMU only)", "1 (DYN_DATA)", "2 (DYN_EXTRA)",
	                                         "bmodel (BLOCK_DES)"};
	if (tp_profile_set_meta(r->p, "cdm_mode", mode_name[r->mode]) != TP_OK)
		return nomem(r);
	return TP_OK;
}

/* The device id from "..._dev{D}[-{N}]" (0 if the name does not say). */
static int32_t device_id(const char *dir)
{
	const char *s = strstr(dir, "_dev");
	const char *last = NULL;
	while (s) {
		last = s;
		s = strstr(s + 1, "_dev");
	}
	if (!last || last[4] < '0' || last[4] > '9')
		return 0;
	long v = strtol(last + 4, NULL, 10);
	return v >= 0 && v < 1 << 20 ? (int32_t)v : 0;
}

/* Layers from the compiler's side files (sophgo-cdm.md §9), joined to the commands by Cmd Id
 * on each core exactly as for bmprofile dumps (sg_layers.c). Side files never fail a
 * conversion: a malformed one is a note (sg_layers_load). */
static int read_layers(struct rd *r)
{
	char *jp = tp_path_join(r->dir, "tensor_location.json");
	char *mp = tp_path_join(r->dir, "final.mlir");
	struct sg_layers L = {0};
	int tiu[CDM_MAX_CORES], gdma[CDM_MAX_CORES];
	int rc = TP_OK;
	if (!jp || !mp) {
		rc = nomem(r);
		goto out;
	}
	struct stat st;
	int have_j = stat(jp, &st) == 0, have_m = stat(mp, &st) == 0;
	if (!have_j && !have_m)
		goto out;
	if (sg_layers_load(r->p, have_j ? jp : NULL, have_m ? mp : NULL, &L) != TP_OK) {
		rc = nomem(r);
		goto out;
	}
	if (!L.json)
		goto out;
	unsigned n = r->ncores < CDM_MAX_CORES ? (unsigned)r->ncores : CDM_MAX_CORES;
	for (unsigned c = 0; c < n; c++) {
		tiu[c] = r->ci[c].track[CDM_TIU];
		gdma[c] = r->ci[c].track[CDM_GDMA];
	}
	/* The vendor also gives the "unknown" records (init handshake, runtime copies outside the
	 * command stream) the layer of their reused Cmd Id, which stretches those layers over the
	 * whole run (its layer 26 "80_Relu" would span 486 of 487 µs); they join no layer here. */
	if (sg_layers_apply(r->p, &L, jp, tiu, gdma, n, r->detail_opt != TP_BMPROFILE_DETAIL_OFF,
	                    tp_profile_find_str(r->p, "unknown")) != TP_OK)
		rc = nomem(r);
out:
	sg_layers_free(&L);
	tp_free(jp);
	tp_free(mp);
	return rc;
}

static int read_all(struct rd *r, const struct tp_cdm_opts *o)
{
	int rc = scan(r);
	if (rc)
		return rc;
	struct tp_file gf;
	char *gpath = NULL;
	if ((rc = load(r, "global.profile", &gf, &gpath)) != TP_OK) {
		tp_free(gpath);
		return rc;
	}
	rc = cdm_global_parse((const char *)gf.data, gf.size, gpath, &r->g, r->d);
	tp_file_release(&gf);
	if (rc == TP_OK) {
		if (o && o->arch_override) {
			r->chip = sg_chip_by_arch(o->arch_override);
			if (!r->chip || !r->chip->cdma_pmu_bytes)
				rc = tp_diag_set(
				    r->d, TP_EUNSUPPORTED,
				    "%s: --arch %s: cdm_profile_data is read for BM1690/SG2260 "
				    "and SG2260E only",
				    r->dir, tp_arch_name(o->arch_override));
		} else {
			r->chip = sg_chip_by_cdm_arch((long)r->g.arch_raw);
			if (!r->chip)
				rc = tp_diag_line(
				    r->d, TP_EUNSUPPORTED, gpath, r->g.arch_line,
				    "arch %lld is not a cdm_profile_data chip (5/8800 BM1690, "
				    "6/140814 SG2260E)",
				    r->g.arch_raw);
		}
	}
	tp_free(gpath);
	if (rc)
		return rc;
	r->p->arch = r->chip->c.arch;
	r->p->chip = &r->chip->c;
	/* SG2260E is the 4-core BM1690: the same descriptor tables. */
	const struct sg_isa *isa = sg_isa_for_arch(TP_ARCH_BM1690);
	if (isa && (rc = sg_decoder_new(isa, r->chip->dma_cmd_type_bits, &r->dec)) != TP_OK)
		return rc == TP_ENOMEM ? nomem(r)
		                       : tp_diag_set(r->d, rc,
		                                     "%s: the BM1690 register tables are "
		                                     "inconsistent",
		                                     r->dir);
	r->detail_opt = o ? o->detail : TP_BMPROFILE_DETAIL_AUTO;
	r->tiu_mhz = o && o->tiu_freq_mhz > 0 ? o->tiu_freq_mhz : r->chip->c.tiu_mhz;
	r->dma_mhz = o && o->gdma_freq_mhz > 0 ? o->gdma_freq_mhz : r->chip->c.dma_mhz;
	r->p->tiu_freq_mhz = r->tiu_mhz;
	r->p->gdma_freq_mhz = r->dma_mhz;
	r->p->source = tp_profile_str(r->p, "sophgo-cdm");
	if (tp_profile_set_meta(r->p, "arch", r->chip->c.name) != TP_OK)
		return nomem(r);
	if (r->g.have_freq && set_meta_i64(r, "tpu_freq", r->g.tpu_freq) != TP_OK)
		return nomem(r);
	if (r->g.have_tail && set_meta_i64(r, "tail_offset_ns", r->g.tail_offset_ns) != TP_OK)
		return nomem(r);
	int32_t dev = device_id(r->dir);
	char dname[64];
	snprintf(dname, sizeof dname, "%s device %d", r->chip->c.name, (int)dev);
	if ((r->device = tp_profile_add_device(r->p, dname, dev, (int32_t)r->ncores)) < 0)
		return nomem(r);
	if (!(r->ci = tp_calloc(r->ncores, sizeof *r->ci)))
		return nomem(r);
	if ((rc = read_cores(r)) != TP_OK)
		return rc;
	for (size_t k = 0; k < r->ncdma; k++)
		if ((rc = read_cdma(r, k)) != TP_OK)
			return rc;
	if ((rc = align_all(r)) != TP_OK)
		return rc;
	if ((rc = read_layers(r)) != TP_OK)
		return rc;
	return notes(r);
}

int tp_cdm_read(const char *dir, const struct tp_cdm_opts *o, struct tp_profile **out,
                struct tp_diag *d)
{
	*out = NULL;
	struct tp_profile *p = tp_profile_new();
	if (!p)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	struct rd *r = tp_calloc(1, sizeof *r);
	int rc;
	if (!r) {
		tp_profile_free(p);
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	}
	r->dir = dir;
	r->p = p;
	r->d = d;
	r->jobs = o && o->jobs > 1 ? (unsigned)o->jobs : 1;
	r->cdma_owner = -1;
	for (unsigned i = 0; i < CDM_MAX_PORTS; i++)
		r->port[i].track = -1;
	r->cache = tp_calloc((size_t)1 << NAME_CACHE_BITS, sizeof *r->cache);
	if (!r->cache) {
		rc = nomem(r);
		goto out;
	}
	rc = read_all(r, o);
	if (rc == TP_OK && p->oom)
		rc = nomem(r);
out:
	/* The reader's scratch (per-core command arrays, ports, decoder) goes before the sort. */
	for (size_t i = 0; i < r->ncores; i++)
		tp_free(r->cores[i]);
	for (size_t i = 0; i < r->ncdma; i++)
		tp_free(r->cdma[i]);
	for (unsigned i = 0; i < CDM_MAX_PORTS; i++)
		tp_free(r->port[i].cmds.v);
	tp_free(r->cores);
	tp_free(r->cdma);
	tp_free(r->cdma_port);
	tp_free(r->ci);
	tp_free(r->cache);
	for (int e = 0; e < SG_ENG_COUNT; e++) {
		for (size_t i = 0; r->keys[e] && r->dec && i < r->dec->ncls[e]; i++)
			tp_free(r->keys[e][i]);
		tp_free(r->keys[e]);
	}
	sg_decoder_free(r->dec);
	if (rc == TP_OK &&
	    tp_profile_finish_jobs(p, o && o->jobs > 1 ? (unsigned)o->jobs : 1) != TP_OK)
		rc = nomem(r);
	tp_free(r);
	if (rc != TP_OK) {
		tp_profile_free(p);
		return rc;
	}
	*out = p;
	return TP_OK;
}
