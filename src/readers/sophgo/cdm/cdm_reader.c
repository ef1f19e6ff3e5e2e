/*
 * cdm_reader.c — the reader of `cdm_profile_data_dev{D}[-{N}]/` directories (BM1690/SG2260,
 * SG2260E; specs/sophgo-cdm.md). It finds the files (§2), parses them with cdm_file.c, turns
 * every PMU record into a slice of a per-core TIU / GDMA / SDMA track (CDMA: one track per
 * port, on the owning core), runs the normalisation pipeline of §8.2 and the PMU <-> command
 * matching of §8.3, and fills the model. Owns nothing after it returns: the profile goes to
 * the caller. This file holds the directory scan, the notes, the layers and read_all; the core
 * files are read in cdm_cores.c, normalised in cdm_norm.c (§8.2), matched in cdm_match.c
 * (§8.3), and the vendor's own figures computed in cdm_vendor.c.
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
 * (cdm_vendor_timeline, cdm_vendor_rows) and handed over in profile->vendor, with one note per
 * figure that differs; docs/input-cdm.md "The vendor's figures beside tpuprof's" says how.
 *
 * Threads (opts.jobs > 1): cdm_read_cores reads the core files that many at a time, one per
 * thread, each on a copy of the reader state whose notes and statistics stay in its struct
 * cdm_core_read; names, notes, statistics and the track list change only on the calling thread,
 * in core order, so the profile is the same for every thread count.
 *
 * Slices are built in place: until the end of the pipeline start_ns/end_ns hold raw cycles,
 * cmd_id the unwrapped inst_id and depth the PMU thread bit; finalize() turns them into the
 * model's fields.
 */
#include "common/timings.h"
#include "readers/sophgo/cdm/cdm_int.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cdm_nomem(struct cdm_rd *r)
{
	return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->dir);
}

/* tp_profile_note, or kept in the core being read. */
void cdm_note(struct cdm_rd *r, const char *fmt, ...)
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

static int scan(struct cdm_rd *r)
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
		return cdm_nomem(r);
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
		return cdm_nomem(r);
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

int cdm_load(struct cdm_rd *r, const char *name, struct tp_file *f, char **path)
{
	*path = tp_path_join(r->dir, name);
	if (!*path)
		return cdm_nomem(r);
	return tp_file_load(f, *path, r->d);
}

static int notes(struct cdm_rd *r)
{
	int rc;
	static const char *const en[3] = {"TIU", "GDMA", "SDMA"};
	for (size_t c = 0; c < r->ncores; c++)
		for (int e = 0; e < 3; e++) {
			const struct cdm_core_info *ci = &r->ci[c];
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
	if ((rc = cdm_vendor_rows(r)) != TP_OK)
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
		return cdm_nomem(r);
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
static int read_layers(struct cdm_rd *r)
{
	char *jp = tp_path_join(r->dir, "tensor_location.json");
	char *mp = tp_path_join(r->dir, "final.mlir");
	struct sg_layers L = {0};
	int tiu[CDM_MAX_CORES], gdma[CDM_MAX_CORES];
	int rc = TP_OK;
	if (!jp || !mp) {
		rc = cdm_nomem(r);
		goto out;
	}
	struct stat st;
	int have_j = stat(jp, &st) == 0, have_m = stat(mp, &st) == 0;
	if (!have_j && !have_m)
		goto out;
	if (sg_layers_load(r->p, have_j ? jp : NULL, have_m ? mp : NULL, &L) != TP_OK) {
		rc = cdm_nomem(r);
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
		rc = cdm_nomem(r);
out:
	sg_layers_free(&L);
	tp_free(jp);
	tp_free(mp);
	return rc;
}

static int read_all(struct cdm_rd *r, const struct tp_bmprofile_opts *o)
{
	int rc = scan(r);
	if (rc)
		return rc;
	struct tp_file gf;
	char *gpath = NULL;
	if ((rc = cdm_load(r, "global.profile", &gf, &gpath)) != TP_OK) {
		tp_free(gpath);
		return rc;
	}
	tp_tm_begin("global");
	rc = cdm_global_parse((const char *)gf.data, gf.size, gpath, &r->g, r->d);
	tp_tm_end();
	tp_file_release(&gf);
	if (rc == TP_OK) {
		const struct sg_chip *rec = sg_chip_by_cdm_arch((long)r->g.arch_raw);
		if (o && o->arch_override) {
			r->chip = sg_chip_by_arch(o->arch_override);
			if (!r->chip || !r->chip->cdma_pmu_bytes)
				rc = tp_diag_set(
				    r->d, TP_EUNSUPPORTED,
				    "%s: --arch %s: cdm_profile_data is read for BM1690/SG2260 "
				    "and SG2260E only",
				    r->dir, tp_arch_name(o->arch_override));
			else if (rec && rec != r->chip && !o->force_arch)
				rc = tp_diag_line(
				    r->d, TP_EUSAGE, gpath, r->g.arch_line,
				    "--arch %s, but the dump records arch %lld (%s); "
				    "convert without --arch, or add --force-arch to read "
				    "it as %s",
				    tp_arch_name(o->arch_override), r->g.arch_raw, rec->c.name,
				    tp_arch_name(o->arch_override));
		} else {
			r->chip = rec;
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
		return rc == TP_ENOMEM ? cdm_nomem(r)
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
		return cdm_nomem(r);
	if (r->g.have_freq && cdm_set_meta_i64(r, "tpu_freq", r->g.tpu_freq) != TP_OK)
		return cdm_nomem(r);
	if (r->g.have_tail && cdm_set_meta_i64(r, "tail_offset_ns", r->g.tail_offset_ns) != TP_OK)
		return cdm_nomem(r);
	int32_t dev = device_id(r->dir);
	char dname[64];
	snprintf(dname, sizeof dname, "%s device %d", r->chip->c.name, (int)dev);
	if ((r->device = tp_profile_add_device(r->p, dname, dev, (int32_t)r->ncores)) < 0)
		return cdm_nomem(r);
	if (!(r->ci = tp_calloc(r->ncores, sizeof *r->ci)))
		return cdm_nomem(r);
	tp_tm_begin("cores");
	rc = cdm_read_cores(r);
	for (size_t k = 0; rc == TP_OK && k < r->ncdma; k++)
		rc = cdm_read_cdma(r, k);
	tp_tm_end();
	if (rc != TP_OK)
		return rc;
	tp_tm_begin("align");
	rc = cdm_align_all(r);
	tp_tm_end();
	if (rc != TP_OK)
		return rc;
	tp_tm_begin("layers");
	rc = read_layers(r);
	if (rc == TP_OK)
		rc = notes(r);
	tp_tm_end();
	return rc;
}

int tp_cdm_read(const char *dir, const struct tp_bmprofile_opts *o, struct tp_profile **out,
                struct tp_diag *d)
{
	*out = NULL;
	struct tp_profile *p = tp_profile_new();
	if (!p)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	struct cdm_rd *r = tp_malloc(sizeof *r);
	if (!r) {
		tp_profile_free(p);
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	}
	*r = (struct cdm_rd){.dir = dir,
	                     .p = p,
	                     .ap = p,
	                     .d = d,
	                     .jobs = o && o->jobs > 1 ? (unsigned)o->jobs : 1,
	                     .part = o && o->part ? o->part : TP_BMPROFILE_PART,
	                     .cdma_owner = -1};
	for (unsigned i = 0; i < CDM_MAX_PORTS; i++)
		r->port[i].track = -1;
	r->cache = tp_calloc((size_t)1 << CDM_NAME_CACHE_BITS, sizeof *r->cache);
	int rc = r->cache ? read_all(r, o) : cdm_nomem(r);
	rc = sg_read_deps(p, rc, r->jobs, d, dir);
	/* The reader's scratch (per-core command arrays, ports, decoder) goes before the sort. */
	for (size_t i = 0; i < r->ncores; i++)
		tp_free(r->cores[i]);
	for (size_t i = 0; i < r->ncdma; i++)
		tp_free(r->cdma[i]);
	for (unsigned i = 0; i < CDM_MAX_PORTS; i++)
		tp_free(r->port[i].cmds.v);
	TP_FREE_ALL(r->cores, r->cdma, r->cdma_port, r->ci, r->cache);
	cdm_keys_free(r, r->keys);
	sg_decoder_free(r->dec);
	unsigned jobs = r->jobs;
	tp_free(r);
	return sg_read_done(p, rc, jobs, d, dir, out);
}
