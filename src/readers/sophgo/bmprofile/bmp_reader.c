/*
 * bmp_reader.c — tp_bmprofile_read: finds the files of a bmprofile_data directory, runs the
 * parsers (bmp_global.c, bmp_iter.c, bmp_cmd.c, bmp_netstat.c; side files through
 * sg_layers.c), reconstructs the timeline (§9.2 PerfAI path for BM1688/CV186X and CV184X,
 * §9.1 legacy path for BM1684/BM1684X; the chip.c row says which, and gives the PMU layouts
 * and clocks) and fills the profile model: one device, per core TIU/GDMA/MCU tracks, one
 * slice per PMU record, layers matched to commands.
 *
 * Strict where it matters, tolerant elsewhere: global.profile, iter<N>.profile and cmd_*.dat
 * carry the timeline and their damage is an error; net_stat.sim, tensor_location.json and
 * final.mlir are side files whose problems become one profile note each (path:LINE) while the
 * conversion goes on; other files are ignored.
 *
 * Memory: every input is mapped (tp_file_load) and its pages are released (madvise) as soon
 * as they are parsed, so even multi-GB dumps are never resident; the per-command storage is
 * the 40-byte slice, plus argument sets and tensors only while the dump is small (enum
 * tp_bmprofile_detail), plus the layers unless skip_layers. Slices first hold the raw 32-bit
 * counter values in start_ns / end_ns and the unwrapped inst_id + 1 in cmd_id; the passes of
 * §9.1/§9.2 then rewrite them in place. Reentrant: no global state.
 *
 * Threads (opts.jobs > 1): global.profile is tokenized in chunks by bmp_global_parse's
 * workers; with no argument sets (detail off, the large dumps) the per-core work of an
 * iteration (command files, PMU records, timeline, descriptors, cost) runs one core per
 * thread on per-core copies of the reader state (struct core_job), and everything that
 * interns strings or touches shared state (notes, statistics, names, MCU records, layers)
 * runs afterwards on the calling thread in core order, so the profile is the same for every
 * thread count.
 *
 * Deliberate extensions of the reference behaviour (each announced by a profile note when it
 * changes anything): 20-bit GDMA inst_id wraps are unwrapped and not taken for the stale-record
 * markers of the trimming; 32-bit cycle counters that wrap (drop by more than 2^31) are
 * unwrapped on BM1688; MCU records that begin before the timeline's zero are shown at 0.
 */
#include "common/progress.h"
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NAME_CACHE 32768

struct name_slot {
	uint32_t name, type;
	uint8_t set;
};

struct rd {
	const char *dir;
	struct tp_profile *p;
	struct tp_diag *d;
	enum tp_arch arch;
	const struct sg_chip *chip; /* the arch's row of the chip table (never NULL once set) */
	int perfai;                 /* chip->bmp_timeline == SG_TL_PERFAI */
	double tiu_mhz, gdma_mhz;
	int detail;
	int device;
	struct bmp_global g;
	int tiu_track[BMP_MAX_CORES], gdma_track[BMP_MAX_CORES], mcu_track[BMP_MAX_CORES];
	unsigned ncores;
	struct name_slot *cache;
	int json;                /* tensor_location.json present, parsed and wanted */
	struct sg_layers layers; /* tensor_location.json + final.mlir (side files) */
	struct sg_decoder *dec;  /* owned: table decoder for arches with register tables */
	/* GDMA PMU counters per slice of the current iteration (detail only, arches with a table
	 * decoder), aligned with the core's GDMA slices from its first new one: DDR side, LMEM
	 * side bytes and (CV184X, which counts them; NULL on BM1688) transactions, DDR side in
	 * the low 32 bits, LMEM side in the high 32. */
	uint64_t *gd_gmem[BMP_MAX_CORES], *gd_lmem[BMP_MAX_CORES], *gd_xact[BMP_MAX_CORES];
	size_t gd_cap[BMP_MAX_CORES];
	int fields; /* keep the decoded descriptor fields as args */
	/* Interned argument keys of each class's fields ([engine][class][field], 0 = a name the
	 * class repeats), built the first time a class is seen. Owned. */
	uint32_t **keys[2];
	uint64_t first_begin_usec;
	int have_first_begin;
	int jobs; /* threads for the per-core work (opts.jobs) */
	/* Set on a per-core copy of the reader run by a worker thread (core_job): its notes and
	 * statistics are kept there and added to the profile in core order afterwards, so the
	 * profile (notes are interned strings) is the same as with one thread. */
	struct core_job *job;
	/* Bytes of the iter file being read that were counted for the progress line (per PMU
	 * chunk, from any thread); read_all tells the file so its release counts the rest. */
	_Atomic uint64_t *iter_done;
};

struct core_job {
	struct tp_diag d;
	int rc;
	struct sg_aside aside; /* its notes and statistics */
};

/* The statistics a reader (or a per-core copy of it) adds to. */
#define RSTATS(r) ((r)->job ? &(r)->job->aside.stats : &(r)->p->stats)

/* tp_profile_note, or kept in the per-core job. */
__attribute__((format(printf, 2, 3))) static void rnote(struct rd *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sg_vnote(r->p, r->job ? &r->job->aside : NULL, fmt, ap);
	va_end(ap);
}

/* Counts `bytes` of the current iter file as read (progress line), from any thread. */
static void iter_progress(struct rd *r, uint64_t bytes)
{
	if (!r->iter_done || !bytes)
		return;
	atomic_fetch_add_explicit(r->iter_done, bytes, memory_order_relaxed);
	tp_progress_input_done(bytes);
}

/* Adds a finished job's notes and statistics to the profile, and frees them. */
static void job_merge(struct rd *r, struct core_job *j)
{
	if (sg_aside_apply(r->p, &j->aside) != TP_OK)
		r->p->oom = 1;
}

/* Argument keys, in the reference's spelling where it has one (tdmaRegInfo / tiuRegInfo). */
enum { K_SRC, K_DST, K_DEP, K_MSG, K_CNT, K_GDMA_ID, K_BD_ID, K_RAW_ID, K_PID, K_EXTRA, K_NKEYS };
static const char *const key_names[K_NKEYS] = {
    "src_start_addr", "dst_start_addr", "cmd_id_dep", "Msg Id",     "Sd\\Wt Count",
    "gdma_id",        "bd_id",          "id",         "profile_id", "extra"};

/* ---------------------------------------------------------------------------------------- */
/* Small helpers.                                                                           */
/* ---------------------------------------------------------------------------------------- */

static char *path_of(struct rd *r, const char *name)
{
	return tp_path_join(r->dir, name);
}

static int nomem(struct rd *r)
{
	return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->dir);
}

/* 1 if dir/name is a regular file, 0 if not, -1 out of memory. */
static int exists(struct rd *r, const char *name)
{
	char *pth = path_of(r, name);
	if (!pth)
		return -1;
	struct stat st;
	int ok = stat(pth, &st) == 0 && S_ISREG(st.st_mode);
	tp_free(pth);
	return ok;
}

static int load(struct rd *r, const char *name, struct tp_file *f, char **pathp)
{
	char *pth = path_of(r, name);
	if (!pth)
		return nomem(r);
	int rc = tp_file_load(f, pth, r->d);
	if (rc != TP_OK) {
		tp_free(pth);
		return rc;
	}
	RSTATS(r)->files_read++;
	if (pathp)
		*pathp = pth;
	else
		tp_free(pth);
	return TP_OK;
}

static void name_of(struct rd *r, const struct bmp_cmd *c, uint32_t *name, uint32_t *type)
{
	struct name_slot *s = &r->cache[c->key % NAME_CACHE];
	if (!s->set) {
		s->name = tp_profile_str(r->p, c->name);
		s->type = tp_profile_str(r->p, c->type);
		s->set = 1;
	}
	*name = s->name;
	*type = s->type;
}

static int ensure_tracks(struct rd *r, unsigned core)
{
	if (core >= BMP_MAX_CORES)
		return TP_EFORMAT;
	while (r->ncores <= core) {
		unsigned k = r->ncores;
		r->tiu_track[k] = tp_profile_add_track(r->p, r->device, (int32_t)k, TP_TRACK_TIU,
		                                       NULL, r->tiu_mhz);
		r->gdma_track[k] = tp_profile_add_track(r->p, r->device, (int32_t)k, TP_TRACK_GDMA,
		                                        NULL, r->gdma_mhz);
		r->mcu_track[k] = -1;
		if (r->tiu_track[k] < 0 || r->gdma_track[k] < 0)
			return nomem(r);
		r->ncores++;
	}
	r->p->devices[r->device].num_cores = (int32_t)r->ncores;
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Command files.                                                                           */
/* ---------------------------------------------------------------------------------------- */

struct core_cmds {
	struct tp_file f[2];
	struct bmp_cmdbuf cb[2];
	int have[2];
	char *path[2];      /* the file's path, for close_cmds' notes (owned) */
	size_t offset[2];   /* the COMMAND block's offset into it */
	uint64_t expect[2]; /* the COMMAND block's command count */
};

static void core_cmds_free(struct core_cmds *cc)
{
	for (int e = 0; e < 2; e++) {
		bmp_cmdbuf_free(&cc->cb[e]);
		tp_file_release(&cc->f[e]);
		tp_free(cc->path[e]);
		cc->path[e] = NULL;
		cc->have[e] = 0;
	}
}

/* Opens cmd_<base>_<core>_<engine>.dat (legacy arches first try cmd_<base>_<engine>.dat) for
 * lookups from the COMMAND block's offset (indexed as they go: see close_cmds). */
static int open_cmds(struct rd *r, const char *iter_path, const struct bmp_command *cm,
                     unsigned core, struct core_cmds *cc)
{
	for (int e = 0; e < 2; e++) {
		uint64_t base = e == BMP_ENG_TIU ? cm->bd_base : cm->gdma_base;
		uint64_t offset = e == BMP_ENG_TIU ? cm->bd_offset : cm->gdma_offset;
		uint64_t expect = e == BMP_ENG_TIU ? cm->bd_count : cm->gdma_count;
		if (expect == 0)
			continue;
		char name[96];
		int found = 0;
		if (!r->perfai) {
			snprintf(name, sizeof name, "cmd_%llx_%d.dat", (unsigned long long)base, e);
			found = exists(r, name);
		}
		if (!found) {
			snprintf(name, sizeof name, "cmd_%llx_%u_%d.dat", (unsigned long long)base,
			         core, e);
			found = exists(r, name);
		}
		if (found < 0)
			return nomem(r);
		if (!found)
			return tp_diag_set(
			    r->d, TP_ENOTFOUND,
			    "%s: COMMAND block %u names %s, which is missing from %s", iter_path,
			    core, name, r->dir);
		char *pth = NULL;
		int rc = load(r, name, &cc->f[e], &pth);
		if (rc)
			return rc;
		if (offset > cc->f[e].size) {
			rc = tp_diag_at(r->d, TP_EFORMAT, pth, 0,
			                "COMMAND offset %llu is past the end of the %zu-byte file",
			                (unsigned long long)offset, cc->f[e].size);
			tp_free(pth);
			return rc;
		}
		const uint8_t *data = cc->f[e].data + offset;
		size_t len = cc->f[e].size - (size_t)offset;
		int irc = r->dec ? bmp_cmdbuf_init_dec(&cc->cb[e], r->arch, e, r->dec, data, len,
		                                       cc->f[e].mapped)
		          : cc->f[e].mapped
		              ? bmp_cmdbuf_init_mapped(&cc->cb[e], r->arch, e, data, len)
		              : bmp_cmdbuf_init(&cc->cb[e], r->arch, e, data, len);
		if (irc != TP_OK) {
			tp_free(pth);
			return nomem(r);
		}
		cc->have[e] = 1;
		cc->path[e] = pth;
		cc->offset[e] = (size_t)offset;
		cc->expect[e] = expect;
		/* BM1684's fixed slots: trailing padding is not commands. */
		if (r->arch == TP_ARCH_BM1684 && expect < UINT32_MAX)
			bmp_cmdbuf_limit(&cc->cb[e], (uint32_t)expect);
	}
	return TP_OK;
}

/* After core cc's lookups: indexes what they did not reach, notes where decoding stopped and
 * a command count that differs from the COMMAND block's, and releases the files' pages (the
 * command buffers release what lies behind their index as it grows). Runs on the calling
 * thread (notes). TP_OK / TP_ENOMEM. */
static int close_cmds(struct rd *r, struct core_cmds *cc)
{
	for (int e = 0; e < 2; e++) {
		if (!cc->have[e])
			continue;
		struct bmp_cmdbuf *cb = &cc->cb[e];
		if (bmp_cmdbuf_finish(cb) != TP_OK)
			return nomem(r);
		if (cb->stopped)
			rnote(r,
			      "%s@0x%zx: command decoding stopped at an unknown descriptor "
			      "after %u commands; later commands are unnamed",
			      cc->path[e], cc->offset[e] + cb->stop_off, cb->count);
		if (cb->count != cc->expect[e])
			rnote(r, "%s: decoded %u commands, the COMMAND block says %llu",
			      cc->path[e], cb->count, (unsigned long long)cc->expect[e]);
		tp_file_drop(&cc->f[e], 0, cc->f[e].size);
	}
	return TP_OK;
}

/* The argument keys of one class's fields (sg_class_keys, with BM1688's DMA printer renames),
 * built once per class. NULL when out of memory. */
static const uint32_t *class_keys(struct rd *r, int engine, const struct sg_dclass *dc)
{
	int eng = engine == BMP_ENG_TIU ? SG_ENG_TIU : SG_ENG_DMA;
	size_t ci = (size_t)(dc - r->dec->cls[eng]);
	if (!r->keys[engine]) {
		r->keys[engine] = tp_calloc(r->dec->ncls[eng], sizeof *r->keys[engine]);
		if (!r->keys[engine])
			return NULL;
	}
	if (r->keys[engine][ci])
		return r->keys[engine][ci];
	uint32_t *k = sg_class_keys(r->p, dc, engine == BMP_ENG_TIU, r->arch == TP_ARCH_BM1688);
	if (!k)
		return NULL;
	r->keys[engine][ci] = k;
	return k;
}

/* Every decoded field as an argument, in class order under the vendor's names. A repeated
 * name appears once, at its first position, with the value of its last occurrence, as the
 * vendor's dict does. */
static void add_fields(struct rd *r, int engine, const struct bmp_cmd *c)
{
	const struct sg_dclass *dc = c->desc.cls;
	const uint32_t *keys = class_keys(r, engine, dc);
	if (!keys) {
		r->p->oom = 1;
		return;
	}
	for (uint16_t i = 0; i < dc->rc->nfields; i++)
		if (keys[i])
			tp_args_add(r->p, &(struct tp_arg){
			                      .key = keys[i],
			                      .type = TP_ARG_UINT,
			                      .v.u = sg_field(&c->desc, c->raw, dc->dict_src[i])});
}

/* TIU "Data Type": name(opd0 precision) -> name(result precision) (costmodel §4). */
static void add_tiu_dtype(struct rd *r, const struct bmp_cmd *c)
{
	const struct sg_desc *d = &c->desc;
	int ho = sg_has(d, SG_F_OPT_OPD0_PREC), hr = sg_has(d, SG_F_OPT_RES0_PREC);
	const char *a = "None", *b = "None";
	if (hr)
		b = sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_OPT_RES0_PREC));
	a = ho ? sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_OPT_OPD0_PREC)) : b;
	char buf[40];
	snprintf(buf, sizeof buf, "%s -> %s", a, b);
	tp_args_add_str(r->p, "Data Type", buf);
}

static void add_tiu_cost(struct rd *r, const struct tp_cost *k, uint32_t asic)
{
	char buf[32];
	tp_args_add_uint(r->p, "Alg Ops", k->alg_ops);
	tp_args_add_uint(r->p, "uArch Ops", k->uarch_ops);
	tp_args_add_uint(r->p, "Alg Cycle", k->alg_cycle);
	sg_pct1(buf, sizeof buf, (double)k->alg_ops, (double)k->uarch_ops);
	tp_args_add_str(r->p, "uArch Rate", buf);
	sg_pct1(buf, sizeof buf, (double)k->init_cycle, (double)asic + 1e-4);
	tp_args_add_str(r->p, "Initial Cycle Ratio", buf);
	sg_pct1(buf, sizeof buf, (double)k->bank_cycle, (double)asic + 1e-4);
	tp_args_add_str(r->p, "Bank Conflict Ratio", buf);
}

/* Python's round(x, 4) for the positive values here. */
static double round4(double x)
{
	return floor(x * 10000.0 + 0.5) / 10000.0;
}

/* GDMA PMU figures per command (costmodel §5 steps 6, 7, 9): BM1688 counts bytes only and
 * the transactions are bytes / 16 (xact NULL); CV184X counts transactions (xact = DDR side |
 * LMEM side << 32). Bandwidths are bytes per GDMA cycle times the GDMA clock in GHz. */
static void add_gdma_pmu(struct rd *r, const struct tp_track *tr, const struct tp_slice *s,
                         uint64_t gmem, uint64_t lmem, const uint64_t *xact)
{
	struct tp_profile *p = r->p;
	double ghz = r->gdma_mhz / 1000.0, asic = s->cycles ? (double)s->cycles : 1.0;
	double gbw = round4((double)gmem / asic * ghz), lbw = round4((double)lmem / asic * ghz);
	unsigned xa = r->chip && r->chip->c.vector_ohow_align ? r->chip->c.vector_ohow_align : 16;
	uint64_t gx = xact ? (*xact & 0xFFFFFFFFu) : gmem / xa, lx = xact ? *xact >> 32 : lmem / xa;
	tp_args_add_uint(p, "Stall Cycle", tp_slice_stall(tr, s));
	tp_args_add_uint(p, "gmem_xfer_bytes(B)", gmem);
	tp_args_add_real(p, "gmem_bandwidth", gbw);
	tp_args_add_uint(p, "gmem_dma_data_size(B)", gmem);
	tp_args_add_uint(p, "gmem_xact_cnt", gx);
	tp_args_add_uint(p, "lmem_xfer_bytes", lmem);
	tp_args_add_real(p, "lmem_bandwidth", lbw);
	tp_args_add_uint(p, "lmem_dma_data_size(B)", lmem);
	tp_args_add_uint(p, "lmem_xact_cnt", lx);
	tp_args_add_uint(p, "DMA data size(B)", gmem > lmem ? gmem : lmem);
	tp_args_add_real(p, "DDR Bandwidth(GB/s)", gbw > lbw ? gbw : lbw);
	static const char *const zero[] = {
	    "gmem_bl_sum",           "gmem_avg_burst_length", "lmem_bl_sum",
	    "lmem_avg_burst_length", "L2M Bandwidth(GB/s)",   "lmem_msk_wr_cnt",
	    "gmem_msk_wr_cnt",       "lmem_n32Ba_sa_cnt",     "gmem_n32Ba_sa_cnt"};
	for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
		tp_args_add_uint(p, zero[i], 0);
}

/* What the vendor's DMA printer adds after the decoded fields (costmodel §5 steps 1, 2, 4):
 * the mask address fields that only masked_select's layout has (as 0), then the joined
 * addresses; a sys command instead gets its address fields as 0 (CV184X prints them with
 * the LMEM->LMEM direction its zero addresses give). Data Type is the DATATYPE name of
 * src_data_format on every command (the vendor's names: BFP16, not BF16). */
static void add_dma_tail(struct rd *r, const struct bmp_cmd *c)
{
	struct tp_profile *p = r->p;
	int has_mask = strcmp(c->desc.cls->rc->op_name, "DMA_masked_select") == 0;
	if ((r->arch == TP_ARCH_BM1688 && c->kind == TP_CMD_NORMAL) || r->arch == TP_ARCH_CV184X) {
		if (!has_mask) {
			tp_args_add_uint(p, "mask_start_addr_h8", 0);
			tp_args_add_uint(p, "mask_start_addr_l32", 0);
		}
	}
	if (c->kind == TP_CMD_NORMAL) {
		tp_args_add_uint(p, key_names[K_DST], c->dst_addr);
		tp_args_add_uint(p, key_names[K_SRC], c->src_addr);
	} else if (r->arch == TP_ARCH_CV184X) {
		static const char *const zero[] = {"dst_start_addr_l32", "src_start_addr_l32",
		                                   "src_start_addr_h13", "dst_start_addr_h13"};
		for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
			tp_args_add_uint(p, zero[i], 0);
		tp_args_add_str(p, "Direction", "LMEM->LMEM");
	}
	if (sg_has(&c->desc, SG_F_SRC_FMT))
		tp_args_add_str(p, "Data Type",
		                sg_prec_name((unsigned)sg_get(&c->desc, c->raw, SG_F_SRC_FMT)));
}

/* Fills name/type/kind/dir/dtype/dep of slice `index` of track `t` from its command, its
 * cost figures (TIU commands with a table-decoded descriptor, whatever the detail level) and,
 * with detail, its argument set. `rel` is the slice's position among the core's slices of
 * this iteration (for the GDMA byte counters kept beside them). */
static void fill_cmd(struct rd *r, struct core_cmds *cc, int engine, int t, size_t index,
                     unsigned core, size_t rel)
{
	struct bmp_cmd c;
	struct tp_track *tr = &r->p->tracks[t];
	struct tp_slice *s = &tr->slices[index];
	if (!cc->have[engine] || !bmp_cmdbuf_get(&cc->cb[engine], s->cmd_id, &c)) {
		struct tp_label l = *tp_slice_label(tr, s);
		l.name = tp_profile_str(r->p, "cmd_type_-1_0");
		l.type = tp_profile_str(r->p, "cmd_type_-1");
		tp_slice_set_label(r->p, tr, s, &l);
		return;
	}
	struct tp_label l = *tp_slice_label(tr, s);
	l.kind = c.kind;
	l.dir = c.dir;
	l.dtype = c.dtype;
	name_of(r, &c, &l.name, &l.type);
	tp_slice_set_label(r->p, tr, s, &l);
	s->dep_id = c.dep;
	struct tp_cost k = {0};
	if (engine == BMP_ENG_TIU && c.have_desc) {
		sg_tiu_cost(r->chip, &c.desc, c.raw, &k);
		tp_track_set_cost(r->p, t, index, &k);
		s = &r->p->tracks[t].slices[index];
	}
	if (!r->detail)
		return;
	tp_args_begin(r->p);
	struct tp_profile *p = r->p;
	if (c.have_desc && r->fields)
		add_fields(r, engine, &c);
	if (c.have_desc) {
		if (engine == BMP_ENG_TIU) {
			add_tiu_dtype(r, &c);
			if (k.valid)
				add_tiu_cost(r, &k, s->cycles);
		}
	}
	if (engine == BMP_ENG_GDMA && c.have_desc)
		add_dma_tail(r, &c);
	else if (engine == BMP_ENG_GDMA && c.kind == TP_CMD_NORMAL && r->arch != TP_ARCH_BM1684X) {
		tp_args_add_uint(p, key_names[K_DST], c.dst_addr);
		tp_args_add_uint(p, key_names[K_SRC], c.src_addr);
	}
	if (engine == BMP_ENG_GDMA && c.have_desc && r->gd_gmem[core] && rel < r->gd_cap[core])
		add_gdma_pmu(r, tr, s, r->gd_gmem[core][rel], r->gd_lmem[core][rel],
		             r->gd_xact[core] ? &r->gd_xact[core][rel] : NULL);
	/* The dependency also lives in s->dep_id (writers derive cmd_id_dep from it). */
	if (c.has_msg) {
		tp_args_add_uint(p, key_names[K_MSG], c.msg_id);
		tp_args_add_uint(p, key_names[K_CNT], c.msg_cnt);
	}
	s->args = tp_args_end(p);
}

/* ---------------------------------------------------------------------------------------- */
/* PMU blocks -> raw slices.                                                                */
/* ---------------------------------------------------------------------------------------- */

/* PMU blocks are read a window at a time: the window's records are checked (valid_end), then
 * decoded while they are still in the cache, and the pages read are released every
 * PMU_DROP_BYTES. (Checking the whole block first and decoding it afterwards read every page
 * twice and, since the check released what it read, mapped it twice.) */
#define PMU_WINDOW_BYTES ((size_t)256 << 10)
#define PMU_DROP_BYTES ((size_t)2 << 20)

/* Records per window for records of `rec` bytes (at least 1). */
static size_t pmu_window(size_t rec)
{
	return rec < PMU_WINDOW_BYTES ? PMU_WINDOW_BYTES / rec : 1;
}

/* The first record in [from, to) that is not valid, or `to`: BM1688/CV184X pre-fill with 0,
 * the legacy arches with 0xFF (§4.5; chip->pmu_fill), and the runtime writes only the valid
 * prefix, so the block's records end at the first one whose start or end word is the fill.
 * `at` is the byte offset of the start word (the end word follows it). */
static size_t valid_end(const struct rd *r, const uint8_t *base, size_t rec, size_t at, size_t from,
                        size_t to)
{
	uint32_t bad = r->chip->pmu_fill;
	for (size_t i = from; i < to; i++) {
		const uint8_t *q = base + i * rec + at;
		if (tp_le32(q) == bad || tp_le32(q + 4) == bad)
			return i;
	}
	return to;
}

/* Room on track t for `more` slices of a PMU block that has `left` records from here on
 * (valid or not). The whole rest of the block when that is under PMU_RESERVE_ALL bytes of
 * slices, so the array is allocated once; past that by
 * doubling what the track holds, so a block of many GB whose records end early does not
 * reserve (even address space only) for its fill. The reader calls tp_track_fit once the
 * block is read. TP_OK / TP_ENOMEM (reported). */
#define PMU_RESERVE_ALL ((size_t)1 << 30)

static int pmu_room(struct rd *r, int t, size_t more, size_t left)
{
	const struct tp_track *tr = &r->p->tracks[t];
	if (tr->cap - tr->count >= more)
		return TP_OK;
	size_t want = left;
	if (left > PMU_RESERVE_ALL / sizeof(struct tp_slice)) {
		want = tr->count > more ? tr->count : more;
		if (want > left)
			want = left;
		if (want < more)
			want = more;
	}
	return tp_track_reserve(r->p, t, want) == TP_OK ? TP_OK : nomem(r);
}

/* One window of PMU block sp read (records [0, upto) of `rec` bytes so far): once
 * PMU_DROP_BYTES more have been read, releases their pages and counts them as read (progress
 * line). *dropped: bytes released. */
static void pmu_window_done(struct rd *r, const struct tp_file *f, const struct bmp_span *sp,
                            size_t rec, size_t upto, size_t *dropped)
{
	size_t b = upto * rec;
	if (b > *dropped && b - *dropped >= PMU_DROP_BYTES) {
		tp_file_drop(f, sp->off, sp->off + b);
		iter_progress(r, b - *dropped);
		*dropped = b;
	}
}

/* PMU block sp of n records read onto track t: gives back the room reserved past its slices,
 * counts the n records read and `lost` of them dropped, and the rest of the block's bytes as
 * read (`dropped` of them were counted window by window). */
static void pmu_block_done(struct rd *r, int t, const struct bmp_span *sp, size_t n, uint64_t lost,
                           size_t dropped)
{
	tp_track_fit(r->p, t);
	RSTATS(r)->records_read += n;
	RSTATS(r)->records_dropped += lost;
	iter_progress(r, sp->len - dropped);
}

/* Turns the raw 32-bit counter values left in start_ns/end_ns of slices [first, count) into
 * 64-bit values. BM1688 (§9.2) then converts them to ns (int(cycles / MHz * 1000)); the legacy
 * path keeps cycles. Wraps: the legacy rule (§9.1) assumes one whenever start or end
 * decreases; the PerfAI path has no wrap handling in the reference, so we only assume one
 * when a counter drops by more than 2^31 (a real wrap; never the case in the reference's
 * data), which keeps long dumps monotonic without changing short ones. Runs after the GDMA
 * trimming so stale records cannot fake a wrap. */
static void unwrap_times(struct rd *r, int t, size_t first, double mhz, unsigned core,
                         const char *eng)
{
	struct tp_track *tr = &r->p->tracks[t];
	uint64_t hi = 0, wraps = 0;
	uint32_t ls = 0, le = 0;
	int a2 = r->perfai;
	for (size_t i = first; i < tr->count; i++) {
		struct tp_slice *s = &tr->slices[i];
		uint32_t st = (uint32_t)s->start_ns, en = (uint32_t)tp_slice_end(tr, s);
		if (i > first) {
			int wrapped =
			    a2 ? (st < ls && ls - st > 0x80000000u) : (st < ls || en < le);
			if (wrapped) {
				hi += UINT64_C(1) << 32;
				wraps++;
			}
		}
		ls = st;
		le = en;
		uint64_t s64 = hi + st, e64 = hi + en;
		if (a2 && en < st && st - en > 0x80000000u)
			e64 += UINT64_C(1) << 32; /* the end wrapped, the start did not */
		if (a2) {
			s->start_ns = tp_cycles_to_ns(s64, mhz);
			tp_slice_set_end(r->p, tr, s, tp_cycles_to_ns(e64, mhz));
		} else {
			s->start_ns = (int64_t)s64;
			tp_slice_set_end(r->p, tr, s, (int64_t)e64);
		}
	}
	if (wraps)
		rnote(r,
		      "core %u %s: the 32-bit cycle counter wrapped %llu time(s); "
		      "unwrapped",
		      core, eng, (unsigned long long)wraps);
}

/* Decodes the TIU records of one core into raw slices (start_ns/end_ns = raw cycles as ns
 * per §9.2 step 3 on BM1688, raw 64-bit-unwrapped cycles on legacy arches). Returns the index
 * of the first new slice in *first. */
static int read_tiu(struct rd *r, const struct tp_file *f, const struct bmp_span *sp,
                    struct core_cmds *cc, unsigned core, size_t *first)
{
	int t = r->tiu_track[core];
	const uint8_t *base = f->data + sp->off;
	const size_t rs = r->chip->tiu_pmu_bytes;
	const int id_first = r->chip->tiu_pmu_id_first;
	size_t n = sp->len / rs, nv = n, win = pmu_window(rs), dropped = 0;
	*first = r->p->tracks[t].count;
	struct bmp_unwrap u = {.width = r->chip->tiu_id_bits};
	uint64_t dropped_recs = 0;
	for (size_t w = 0; w < nv; w += win) {
		size_t we = n - w < win ? n : w + win;
		size_t j = valid_end(r, base, rs, id_first ? 8 : 0, w, we);
		if (j < we)
			nv = j; /* the last window */
		if (pmu_room(r, t, j - w, n - w) != TP_OK)
			return TP_ENOMEM;
		size_t i = w;
		if (w == 0 && r->perfai && j > 0) {
			/* §9.2 step 4: a leading system.send_msg record is dropped. */
			struct bmp_tiu_rec rec;
			struct bmp_cmd c;
			if (id_first)
				bmp_tiu_decode_id_first(base, &rec);
			else
				bmp_tiu_decode(base, &rec);
			if (cc->have[BMP_ENG_TIU] &&
			    bmp_cmdbuf_get(&cc->cb[BMP_ENG_TIU], rec.inst_id + 1, &c) &&
			    c.op == 15 && c.sub == 8) {
				bmp_unwrap_next(&u, rec.inst_id);
				i = 1;
				dropped_recs++;
			}
		}
		for (; i < j; i++) {
			struct bmp_tiu_rec rec;
			if (id_first)
				bmp_tiu_decode_id_first(base + i * rs, &rec);
			else
				bmp_tiu_decode(base + i * rs, &rec);
			uint64_t id = bmp_unwrap_next(&u, rec.inst_id);
			struct tp_slice *s = tp_track_push(r->p, t);
			struct tp_track *tr = &r->p->tracks[t];
			s->cmd_id = (uint32_t)(id + 1);
			s->start_ns = rec.start; /* raw counter values until unwrap_times */
			tp_slice_set_end(r->p, tr, s, rec.end);
		}
		pmu_window_done(r, f, sp, rs, j, &dropped);
	}
	pmu_block_done(r, t, sp, n, n - nv + dropped_recs, dropped);
	unwrap_times(r, t, *first, r->tiu_mhz, core, "TIU");
	if (u.wraps)
		rnote(r, "core %u TIU inst_id wrapped %llu times (%u-bit counter)", core,
		      (unsigned long long)u.wraps, u.width);
	tp_file_drop(f, sp->off, sp->off + sp->len);
	return TP_OK;
}

/* Grows core k's GDMA PMU counters (detail only) to hold at least `need` records of a block
 * of `n`, by doubling (never past n). TP_OK / TP_ENOMEM (reported). */
static int gd_room(struct rd *r, unsigned k, size_t need, size_t n)
{
	if (need <= r->gd_cap[k])
		return TP_OK;
	size_t want = r->gd_cap[k] * 2;
	if (want > n)
		want = n;
	if (want < need)
		want = need;
	int counted_xact = r->arch == TP_ARCH_CV184X;
	uint64_t *g = tp_realloc(r->gd_gmem[k], want * sizeof *g);
	if (g)
		r->gd_gmem[k] = g;
	uint64_t *l = g ? tp_realloc(r->gd_lmem[k], want * sizeof *l) : NULL;
	if (l)
		r->gd_lmem[k] = l;
	uint64_t *x = l && counted_xact ? tp_realloc(r->gd_xact[k], want * sizeof *x) : NULL;
	if (x)
		r->gd_xact[k] = x;
	if (!g || !l || (counted_xact && !x))
		return nomem(r);
	r->gd_cap[k] = want;
	return TP_OK;
}

static int read_gdma(struct rd *r, const struct tp_file *f, const struct bmp_span *sp,
                     unsigned core, size_t *first)
{
	int t = r->gdma_track[core];
	size_t rs = r->chip->gdma_pmu_bytes;
	const uint8_t *base = f->data + sp->off;
	size_t n = sp->len / rs, nv = n, win = pmu_window(rs), dropped = 0;
	*first = r->p->tracks[t].count;
	unsigned width = r->chip->gdma_id_bits;
	struct bmp_unwrap u = {.width = width};
	size_t nz = 0, z0 = 0, z1 = 0, zl = 0;
	uint32_t wrap_top = (uint32_t)((1u << width) - 536u);
	for (size_t w = 0; w < nv; w += win) {
		size_t we = n - w < win ? n : w + win;
		size_t j = valid_end(r, base, rs, 0, w, we);
		if (j < we)
			nv = j; /* the last window */
		if (pmu_room(r, t, j - w, n - w) != TP_OK)
			return TP_ENOMEM;
		if (r->detail && r->dec && gd_room(r, core, j, n) != TP_OK)
			return TP_ENOMEM;
		for (size_t i = w; i < j; i++) {
			struct bmp_gdma_rec rec;
			bmp_gdma_decode(r->arch, base + i * rs, &rec);
			/* An id 0 that follows the top of the id range is a wrap of the 20-bit
			 * counter, not the stale-record marker the §9.2 trimming looks for (only
			 * matters past 1 Mi commands, which the reference cannot handle either). */
			if (rec.inst_id == 0 && !(i > 0 && u.last > wrap_top)) {
				if (nz == 0)
					z0 = i;
				else if (nz == 1)
					z1 = i;
				zl = i;
				nz++;
			}
			uint64_t id = bmp_unwrap_next(&u, rec.inst_id);
			struct tp_slice *s = tp_track_push(r->p, t);
			struct tp_track *tr = &r->p->tracks[t];
			s->cmd_id = (uint32_t)(id + 1);
			if (r->gd_gmem[core] && i < r->gd_cap[core]) {
				r->gd_gmem[core][i] = rec.gmem;
				r->gd_lmem[core][i] = rec.lmem;
				if (r->gd_xact[core])
					r->gd_xact[core][i] = (uint64_t)rec.lxact << 32 | rec.gxact;
			}
			/* Bytes and stall in one label lookup (the slice is new: label 0, all
			 * zero). */
			struct tp_label lb = *tp_slice_label(tr, s);
			lb.bytes = rec.bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)rec.bytes;
			lb.stall = rec.stall;
			tp_slice_set_label(r->p, tr, s, &lb);
			s->start_ns = rec.start; /* raw counter values until unwrap_times */
			tp_slice_set_end(r->p, tr, s, rec.end);
		}
		pmu_window_done(r, f, sp, rs, j, &dropped);
	}
	pmu_block_done(r, t, sp, n, n - nv, dropped);
	tp_file_drop(f, sp->off, sp->off + sp->len);
	if (r->perfai) {
		size_t lo, hi;
		bmp_trim_range(nv, nz, z0, z1, zl, &lo, &hi);
		struct tp_track *tr = &r->p->tracks[t];
		if (lo > 0 && hi > lo) {
			memmove(tr->slices + *first, tr->slices + *first + lo,
			        (hi - lo) * sizeof *tr->slices);
			if (r->gd_gmem[core] && hi <= r->gd_cap[core]) {
				memmove(r->gd_gmem[core], r->gd_gmem[core] + lo,
				        (hi - lo) * sizeof(uint64_t));
				memmove(r->gd_lmem[core], r->gd_lmem[core] + lo,
				        (hi - lo) * sizeof(uint64_t));
				if (r->gd_xact[core])
					memmove(r->gd_xact[core], r->gd_xact[core] + lo,
					        (hi - lo) * sizeof(uint64_t));
			}
		}
		tr->count = *first + (hi - lo);
		RSTATS(r)->records_dropped += nv - (hi - lo);
	}
	unwrap_times(r, t, *first, r->gdma_mhz, core, "GDMA");
	return TP_OK;
}

/* MCU (DYN_DATA) records of one core -> slices on an MCU track. `shift_ns` maps the MCU
 * timer's ns (since its base) onto the profile's axis. */
static int read_dyn(struct rd *r, const struct tp_file *f, const struct bmp_span *sp,
                    const struct bmp_span *extra, unsigned core, int legacy_base, int64_t shift_ns)
{
	const uint8_t *base = f->data + sp->off;
	size_t n = sp->len / BMP_DYN_REC_SIZE;
	if (n < 2)
		return TP_OK;
	struct bmp_dyn_rec r0, r1;
	bmp_dyn_decode(base, &r0);
	bmp_dyn_decode(base + BMP_DYN_REC_SIZE, &r1);
	r->p->stats.records_read += n;
	if (r0.type != UINT32_MAX || r0.end == 0 || r0.end > 1000000) {
		tp_profile_note(r->p, "core %u DYN_DATA has no timer record; MCU records skipped",
		                core);
		r->p->stats.records_dropped += n;
		return TP_OK;
	}
	uint64_t tick = r0.end;
	uint64_t tbase = legacy_base ? r1.begin : r0.begin;
	if (r->mcu_track[core] < 0) {
		r->mcu_track[core] = tp_profile_add_track(
		    r->p, r->device, (int32_t)core, TP_TRACK_MCU, NULL, 1000.0 / (double)tick);
		if (r->mcu_track[core] < 0)
			return nomem(r);
	}
	int t = r->mcu_track[core];
	if (tp_track_reserve(r->p, t, n - 1) != TP_OK)
		return nomem(r);
	struct tp_cursor ex;
	tp_cur_init(&ex, extra ? f->data + extra->off : (const uint8_t *)"", extra ? extra->len : 0,
	            extra ? extra->off : 0);
	int is_1684 = r->arch == TP_ARCH_BM1684;
	uint64_t early = 0;
	for (size_t i = 1; i < n; i++) {
		struct bmp_dyn_rec d;
		bmp_dyn_decode(base + i * BMP_DYN_REC_SIZE, &d);
		if (d.begin < tbase || (d.begin - tbase) > (uint64_t)INT64_MAX / tick) {
			r->p->stats.records_dropped++;
			continue;
		}
		struct tp_slice *s = tp_track_push(r->p, t);
		if (!s)
			return nomem(r);
		s->start_ns = (int64_t)((d.begin - tbase) * tick) + shift_ns;
		if (d.end == 0 || d.end == UINT64_MAX || d.end < d.begin ||
		    (d.end - tbase) > (uint64_t)INT64_MAX / tick)
			tp_slice_set_end(r->p, &r->p->tracks[t], s, s->start_ns);
		else
			tp_slice_set_end(r->p, &r->p->tracks[t], s,
			                 (int64_t)((d.end - tbase) * tick) + shift_ns);
		if (s->start_ns < 0) {
			/* The firmware starts work before the first PMU record (the timeline's
			 * zero); such records are pinned to 0 so the axis stays non-negative. */
			int64_t e = tp_slice_end(&r->p->tracks[t], s);
			s->start_ns = 0;
			tp_slice_set_end(r->p, &r->p->tracks[t], s, e < 0 ? 0 : e);
			early++;
		}
		s->cmd_id = d.profile_id;
		unsigned ty = d.type & 0xFF;
		char nm[48], tyn[32];
		unsigned eng = is_1684 ? (unsigned)(d.id >> 48) & 15 : (unsigned)(d.id >> 40) & 7;
		uint64_t gid = is_1684 ? (d.id >> 16) & 0xFFFF : (d.id >> 20) & 0xFFFFF;
		uint64_t bid = is_1684 ? d.id & 0xFFFF : d.id & 0xFFFFF;
		static const char *const engs[8] = {"BD",  "GDMA", "GDE", "SORT",
		                                    "NMS", "CDMA", "6",   "7"};
		static const char *const engs1684[4] = {"BD", "GDMA", "CDMA", "GDE"};
		switch (ty) {
		case 0:
			snprintf(nm, sizeof nm, "func");
			snprintf(tyn, sizeof tyn, "FUNC");
			break;
		case 1:
			snprintf(nm, sizeof nm, "set_%s",
			         is_1684 ? (eng < 4 ? engs1684[eng] : "UNKNOWN") : engs[eng]);
			snprintf(tyn, sizeof tyn, "NODE_SET");
			break;
		case 2:
			snprintf(nm, sizeof nm, "wait");
			snprintf(tyn, sizeof tyn, "NODE_WAIT");
			break;
		default:
			snprintf(nm, sizeof nm, "dyn_type_%u", ty);
			snprintf(tyn, sizeof tyn, "DYN_%u", ty);
			break;
		}
		struct tp_label l = *tp_slice_label(&r->p->tracks[t], s);
		l.name = tp_profile_str(r->p, nm);
		l.type = tp_profile_str(r->p, tyn);
		l.kind = TP_CMD_NORMAL;
		tp_slice_set_label(r->p, &r->p->tracks[t], s, &l);
		if (!r->detail)
			continue;
		tp_args_begin(r->p);
		tp_args_add_uint(r->p, key_names[K_PID], d.profile_id);
		if (ty == 1 || ty == 2) {
			tp_args_add_uint(r->p, key_names[K_GDMA_ID], gid);
			tp_args_add_uint(r->p, key_names[K_BD_ID], bid);
		} else {
			tp_args_add_uint(r->p, key_names[K_RAW_ID], d.id);
		}
		/* DYN_EXTRA STRING items with this profile_id (items come in profile_id order). */
		while (tp_cur_left(&ex) >= 12) {
			size_t save = ex.pos;
			uint32_t pid = tp_cur_u32(&ex), et = tp_cur_u32(&ex), ln = tp_cur_u32(&ex);
			if (pid > d.profile_id || ln > tp_cur_left(&ex)) {
				ex.pos = save;
				break;
			}
			const uint8_t *txt = tp_cur_bytes(&ex, ln);
			if (pid == d.profile_id && et == 0 && txt) {
				char buf[256];
				size_t m = ln < sizeof buf - 1 ? ln : sizeof buf - 1;
				memcpy(buf, txt, m);
				buf[m] = 0;
				tp_args_add_str(r->p, key_names[K_EXTRA], buf);
			}
		}
		s = &r->p->tracks[t].slices[r->p->tracks[t].count - 1];
		s->args = tp_args_end(r->p);
	}
	if (early)
		tp_profile_note(r->p,
		                "core %u: %llu MCU records began before the first PMU record; "
		                "their start is shown at 0",
		                core, (unsigned long long)early);
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* BM1688 / CV186X: the PerfAI path (§9.2).                                                 */
/* ---------------------------------------------------------------------------------------- */

struct core_range {
	size_t tiu_first, tiu_n, gdma_first, gdma_n;
};

/* Rewrites raw ns -> aligned cycles and ns (§9.2 steps 5–7) for slices [first, first+n). */
/* Output Start Cycle / Asic Cycle (End - Start + 1) from aligned cycles [cs, ce], and the
 * times the reference derives from them: ns = floor(cycles x 1000 / MHz) + the iteration's
 * offset. */
static void set_cycles(struct tp_profile *p, struct tp_track *t, struct tp_slice *s, int64_t cs,
                       int64_t ce, double mhz, int64_t offset_ns)
{
	uint64_t cyc = (uint64_t)(ce - cs) + 1;
	tp_slice_set_start_cycle(p, t, s, (uint64_t)cs);
	s->cycles = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
	/* Exact integer conversion: the vendor's timeline is cycles / MHz x 1000 to 0.01 ns, and
	 * the truncated float division put 16 of the real dump's 940 times 1 ns low (1850301
	 * cycles at 900 MHz are 2055890 ns, not 2055889). The alignment above keeps the vendor's
	 * float arithmetic, which its cycles depend on. */
	s->start_ns = tp_cycles_to_ns_exact((uint64_t)cs, mhz) + offset_ns;
	tp_slice_set_end(p, t, s, tp_cycles_to_ns_exact((uint64_t)ce, mhz) + offset_ns);
}

static void finish_slices(struct rd *r, int t, size_t first, size_t n, double mhz, int64_t sub,
                          int64_t offset_ns, uint64_t *clamped)
{
	if (!n)
		return; /* (no slices: the array may be NULL) */
	struct tp_track *tr = &r->p->tracks[t];
	struct tp_slice *s = tr->slices + first;
	for (size_t i = 0; i < n; i++, s++) {
		int64_t cs = bmp_ns_to_cycles(s->start_ns - sub, mhz);
		int64_t ce = bmp_ns_to_cycles(tp_slice_end(tr, s) - sub, mhz);
		if (cs < 0) {
			cs = 0;
			(*clamped)++;
		}
		if (ce < cs)
			ce = cs;
		set_cycles(r->p, tr, s, cs, ce, mhz, offset_ns);
	}
}

/* §9.2 steps 1-5 for core k: its command files, TIU and GDMA records into raw slices, and
 * the wait_msg anchor. Touches only core k's tracks and cc; notes and statistics go through
 * rnote/RSTATS, so a per-core copy of r may run it on a worker thread. */
static int a2_core(struct rd *r, const char *ipath, const struct tp_file *f,
                   const struct bmp_iter *it, unsigned k, struct core_cmds *cc,
                   struct core_range *cr, int64_t *anchor, int *have_anchor)
{
	int rc;
	*have_anchor = 0;
	if (k < it->n_cmd && (rc = open_cmds(r, ipath, &it->cmd[k], k, cc)) != TP_OK)
		return rc;
	if (k < it->n_bd) {
		if ((rc = read_tiu(r, f, &it->bd[k], cc, k, &cr->tiu_first)) != TP_OK)
			return rc;
		cr->tiu_n = r->p->tracks[r->tiu_track[k]].count - cr->tiu_first;
	}
	if (k < it->n_gdma) {
		if ((rc = read_gdma(r, f, &it->gdma[k], k, &cr->gdma_first)) != TP_OK)
			return rc;
		cr->gdma_n = r->p->tracks[r->gdma_track[k]].count - cr->gdma_first;
	}
	/* §9.2 step 5: the anchor is the first system.wait_msg of the TIU command list and
	 * the TIU record that executed it. */
	if (cc->have[BMP_ENG_TIU]) {
		struct bmp_cmd c;
		uint32_t wait_id = 0;
		for (uint32_t id = 1; bmp_cmdbuf_get(&cc->cb[BMP_ENG_TIU], id, &c); id++)
			if (c.op == 15 && c.sub == 9) {
				wait_id = id;
				break;
			}
		const struct tp_slice *s = r->p->tracks[r->tiu_track[k]].slices;
		for (size_t i = cr->tiu_first; wait_id && i < cr->tiu_first + cr->tiu_n; i++)
			if (s[i].cmd_id == wait_id) {
				*anchor = s[i].start_ns;
				*have_anchor = 1;
				break;
			}
	}
	return TP_OK;
}

/* Slice name marks left by fill_core for name_discover and name_apply: a command with no
 * descriptor, or the descriptor's name-cache key. */
#define NAME_NONE UINT32_MAX

/* A memo of label rewrites for fill_core and name_apply: a slice's new label is a function
 * of its old label id (and, in fill_core, of the command's name key, kind, direction and
 * dtype, packed in `tup`), and a track has few distinct ones (tens on TIU, thousands on
 * GDMA), so most slices take the id of an earlier one instead of building the 24-byte label
 * and probing the track's label hash. The ids are the ones tp_slice_set_label would give
 * (a label equal to an interned one gets that one's id), so the profile is unchanged.
 * Direct-mapped; `from` is the old id + 1 (0 = empty slot). */
#define LABEL_MEMO 8192

struct label_memo {
	uint32_t from, to;
	uint64_t tup;
};

static inline size_t memo_slot(uint32_t from, uint64_t tup)
{
	uint64_t h = ((uint64_t)from ^ tup * 0x9E3779B97F4A7C15ull) * 0xC2B2AE3D27D4EB4Full;
	return (size_t)(h >> 51); /* 13 bits: LABEL_MEMO slots */
}

/* The per-command work of core k without argument sets (detail off): kind, direction, dtype,
 * dependency and TIU cost from the descriptor, and in s->name the name-cache key (or
 * NAME_NONE) for name_discover, which interns the names in slice order afterwards. Touches only
 * core k's tracks and cc: safe on a worker thread. */
static void fill_core(struct rd *r, struct core_cmds *cc, unsigned k, const struct core_range *cr)
{
	struct label_memo *memo = tp_calloc(LABEL_MEMO, sizeof *memo);
	for (int e = 0; e < 2; e++) {
		if (memo)
			memset(memo, 0, LABEL_MEMO * sizeof *memo);
		int t = e == BMP_ENG_TIU ? r->tiu_track[k] : r->gdma_track[k];
		size_t first = e == BMP_ENG_TIU ? cr->tiu_first : cr->gdma_first;
		size_t n = e == BMP_ENG_TIU ? cr->tiu_n : cr->gdma_n;
		for (size_t i = 0; i < n; i++) {
			struct bmp_cmd c;
			struct tp_track *tr = &r->p->tracks[t];
			struct tp_slice *s = &tr->slices[first + i];
			if (!cc->have[e] || !bmp_cmdbuf_get(&cc->cb[e], s->cmd_id, &c)) {
				tp_slice_set_name(r->p, tr, s, NAME_NONE);
			} else {
				/* The new label depends only on the old one and these four fields.
				 */
				uint64_t tup = (uint64_t)c.key << 24 | (uint64_t)c.kind << 16 |
				               (uint64_t)c.dir << 8 | c.dtype;
				struct label_memo *m =
				    memo ? &memo[memo_slot(s->label, tup)] : NULL;
				if (m && m->from == s->label + 1 && m->tup == tup) {
					s->label = m->to;
				} else {
					struct tp_label l = *tp_slice_label(tr, s);
					l.name = c.key;
					l.kind = c.kind;
					l.dir = c.dir;
					l.dtype = c.dtype;
					uint32_t from = s->label;
					if (tp_slice_set_label(r->p, tr, s, &l) == TP_OK && m) {
						m->from = from + 1;
						m->tup = tup;
						m->to = s->label;
					}
				}
				s->dep_id = c.dep;
				if (e == BMP_ENG_TIU && c.have_desc) {
					struct tp_cost kc = {0};
					sg_tiu_cost(r->chip, &c.desc, c.raw, &kc);
					tp_track_set_cost(r->p, t, first + i, &kc);
				}
			}
		}
	}
	tp_free(memo);
}

/* The names core k's slices need, interned in the order fill_cmd interns them (TIU then
 * GDMA, slice order) so string ids are the same as with one thread: a name-cache slot's
 * names at its first use, the names of a command without descriptor (none[], at the first
 * such slice). Reads the marks fill_core left; the labels are set by name_apply afterwards.
 * Interns strings: calling thread only. */
static void name_discover(struct rd *r, struct core_cmds *cc, unsigned k,
                          const struct core_range *cr, uint32_t none[2], int *have_none)
{
	for (int e = 0; e < 2; e++) {
		int t = e == BMP_ENG_TIU ? r->tiu_track[k] : r->gdma_track[k];
		size_t first = e == BMP_ENG_TIU ? cr->tiu_first : cr->gdma_first;
		size_t n = e == BMP_ENG_TIU ? cr->tiu_n : cr->gdma_n;
		for (size_t i = 0; i < n; i++) {
			struct tp_track *tr = &r->p->tracks[t];
			struct tp_slice *s = &tr->slices[first + i];
			/* fill_core left the name-cache key in the label's name. */
			uint32_t key = tp_slice_label(tr, s)->name;
			struct bmp_cmd c;
			if (key != NAME_NONE && r->cache[key % NAME_CACHE].set)
				continue;
			if (key != NAME_NONE && !bmp_cmdbuf_get(&cc->cb[e], s->cmd_id, &c))
				tp_slice_set_name(r->p, tr, s, NAME_NONE); /* cannot happen */
			else if (key != NAME_NONE) {
				/* First use of this cache slot: the command's own names. */
				struct name_slot *ns = &r->cache[key % NAME_CACHE];
				ns->name = tp_profile_str(r->p, c.name);
				ns->type = tp_profile_str(r->p, c.type);
				ns->set = 1;
				continue;
			}
			if (!*have_none) {
				none[0] = tp_profile_str(r->p, "cmd_type_-1_0");
				none[1] = tp_profile_str(r->p, "cmd_type_-1");
				*have_none = 1;
			}
		}
	}
}

/* Sets the names of core k's slices from the marks fill_core left, once name_discover has
 * interned them all (none[] for NAME_NONE). Reads the name cache, writes only core k's
 * tracks: safe on a worker thread. */
static void name_apply(struct rd *r, unsigned k, const struct core_range *cr,
                       const uint32_t none[2])
{
	struct label_memo *memo = tp_calloc(LABEL_MEMO, sizeof *memo);
	for (int e = 0; e < 2; e++) {
		int t = e == BMP_ENG_TIU ? r->tiu_track[k] : r->gdma_track[k];
		size_t first = e == BMP_ENG_TIU ? cr->tiu_first : cr->gdma_first;
		size_t n = e == BMP_ENG_TIU ? cr->tiu_n : cr->gdma_n;
		if (memo)
			memset(memo, 0, LABEL_MEMO * sizeof *memo);
		for (size_t i = 0; i < n; i++) {
			struct tp_track *tr = &r->p->tracks[t];
			struct tp_slice *s = &tr->slices[first + i];
			/* The new label depends only on the old one (the name cache is fixed now).
			 */
			struct label_memo *m = memo ? &memo[memo_slot(s->label, 0)] : NULL;
			if (m && m->from == s->label + 1) {
				s->label = m->to;
				continue;
			}
			struct tp_label l = *tp_slice_label(tr, s);
			if (l.name == NAME_NONE) {
				l.name = none[0];
				l.type = none[1];
			} else {
				const struct name_slot *ns = &r->cache[l.name % NAME_CACHE];
				l.name = ns->name;
				l.type = ns->type;
			}
			uint32_t from = s->label;
			if (tp_slice_set_label(r->p, tr, s, &l) == TP_OK && m) {
				m->from = from + 1;
				m->to = s->label;
			}
		}
	}
	tp_free(memo);
}

struct a2_par {
	struct rd *r;
	const char *ipath;
	const struct tp_file *f;
	const struct bmp_iter *it;
	struct core_cmds *cc;
	struct core_range *cr;
	int64_t *anchor;
	int *have_anchor;
	struct core_job *job;
	int64_t zero, offset_ns, *delta;
	uint64_t *clamped;
	uint32_t none[2]; /* name_apply's names of a command without descriptor */
};

static void a2_par_read(void *v, size_t kk)
{
	struct a2_par *a = v;
	unsigned k = (unsigned)kk; /* < the core count */
	struct rd rk = *a->r;      /* the worker's view: notes, stats and errors kept in its job */
	rk.job = &a->job[k];
	rk.d = &a->job[k].d;
	a->job[k].rc = a2_core(&rk, a->ipath, a->f, a->it, k, &a->cc[k], &a->cr[k], &a->anchor[k],
	                       &a->have_anchor[k]);
}

static void a2_par_fill(void *v, size_t kk)
{
	struct a2_par *a = v;
	unsigned k = (unsigned)kk; /* < the core count */
	struct rd *r = a->r;
	finish_slices(r, r->tiu_track[k], a->cr[k].tiu_first, a->cr[k].tiu_n, r->tiu_mhz, a->zero,
	              a->offset_ns, &a->clamped[k]);
	finish_slices(r, r->gdma_track[k], a->cr[k].gdma_first, a->cr[k].gdma_n, r->gdma_mhz,
	              a->zero, a->offset_ns, &a->clamped[k]);
	fill_core(r, &a->cc[k], k, &a->cr[k]);
}

static void a2_par_name(void *v, size_t kk)
{
	struct a2_par *a = v;
	unsigned k = (unsigned)kk; /* < the core count */
	name_apply(a->r, k, &a->cr[k], a->none);
}

static int iter_a2(struct rd *r, const char *ipath, const struct tp_file *f,
                   const struct bmp_iter *it)
{
	unsigned nc = it->n_bd > it->n_gdma ? it->n_bd : it->n_gdma;
	int rc = TP_OK;
	struct core_range cr[BMP_MAX_CORES];
	int64_t anchor[BMP_MAX_CORES];
	int have_anchor[BMP_MAX_CORES];
	uint64_t clamped_k[BMP_MAX_CORES];
	struct core_cmds *cc = tp_calloc(BMP_MAX_CORES, sizeof *cc);
	struct core_job *job = NULL;
	if (!cc)
		return nomem(r);
	memset(cr, 0, sizeof cr);
	memset(clamped_k, 0, sizeof clamped_k);
	/* Per-core work through tp_par_run (on up to --jobs threads; with one, on this thread)
	 * when no argument sets are built (they share the profile's argument arena): each core
	 * only touches its own tracks; notes, statistics and names are added in core order
	 * afterwards. Its fill_core rewrites labels through a memo, which also makes it the
	 * cheaper path on one thread (gen-1M, --jobs 1: 426 -> 407 ms CPU against fill_cmd per
	 * slice); with argument sets, fill_cmd on this thread. */
	int per_core = !r->detail;
	struct a2_par ap = {.r = r,
	                    .ipath = ipath,
	                    .f = f,
	                    .it = it,
	                    .cc = cc,
	                    .cr = cr,
	                    .anchor = anchor,
	                    .have_anchor = have_anchor,
	                    .clamped = clamped_k};
	if ((rc = ensure_tracks(r, nc ? nc - 1 : 0)) != TP_OK)
		goto out;
	if (per_core) {
		job = tp_calloc(nc, sizeof *job);
		if (!job) {
			rc = nomem(r);
			goto out;
		}
		ap.job = job;
		tp_par_run((unsigned)r->jobs, nc, a2_par_read, &ap);
		/* In core order: the first core that failed reports (as one thread would). */
		for (unsigned k = 0; k < nc; k++) {
			if (job[k].rc) {
				if (r->d)
					*r->d = job[k].d;
				rc = job[k].rc;
				goto out;
			}
			job_merge(r, &job[k]);
		}
	} else {
		for (unsigned k = 0; k < nc; k++)
			if ((rc = a2_core(r, ipath, f, it, k, &cc[k], &cr[k], &anchor[k],
			                  &have_anchor[k])) != TP_OK)
				goto out;
	}
	/* Core alignment against core 0. */
	int64_t delta[BMP_MAX_CORES] = {0};
	for (unsigned k = 1; k < nc; k++) {
		if (!have_anchor[0] || !have_anchor[k]) {
			if (cr[k].tiu_n || cr[k].gdma_n)
				tp_profile_note(
				    r->p, "%s: core %u has no wait_msg anchor; left unaligned",
				    ipath, k);
			continue;
		}
		delta[k] = anchor[k] - anchor[0];
		struct tp_slice *s = r->p->tracks[r->tiu_track[k]].slices;
		for (size_t i = cr[k].tiu_first; i < cr[k].tiu_first + cr[k].tiu_n; i++)
			s[i].start_ns -= delta[k]; /* the end moves with the start */
		s = r->p->tracks[r->gdma_track[k]].slices;
		for (size_t i = cr[k].gdma_first; i < cr[k].gdma_first + cr[k].gdma_n; i++)
			s[i].start_ns -= delta[k];
	}
	/* Global zero: min over cores of the first TIU and first GDMA start. */
	int64_t zero = INT64_MAX;
	for (unsigned k = 0; k < nc; k++) {
		if (cr[k].tiu_n &&
		    r->p->tracks[r->tiu_track[k]].slices[cr[k].tiu_first].start_ns < zero)
			zero = r->p->tracks[r->tiu_track[k]].slices[cr[k].tiu_first].start_ns;
		if (cr[k].gdma_n &&
		    r->p->tracks[r->gdma_track[k]].slices[cr[k].gdma_first].start_ns < zero)
			zero = r->p->tracks[r->gdma_track[k]].slices[cr[k].gdma_first].start_ns;
	}
	if (zero == INT64_MAX)
		zero = 0;
	/* Later iterations sit after the first by their host begin time. */
	int64_t offset_ns = 0;
	if (!r->have_first_begin) {
		r->first_begin_usec = it->summary.begin_usec;
		r->have_first_begin = 1;
	} else if (it->summary.begin_usec > r->first_begin_usec) {
		offset_ns = (int64_t)((it->summary.begin_usec - r->first_begin_usec) * 1000);
	}
	uint64_t clamped = 0;
	if (per_core) {
		ap.zero = zero;
		ap.offset_ns = offset_ns;
		tp_par_run((unsigned)r->jobs, nc, a2_par_fill, &ap);
	}
	int have_none = 0;
	for (unsigned k = 0; k < nc; k++) {
		if (per_core) {
			clamped += clamped_k[k];
			name_discover(r, &cc[k], k, &cr[k], ap.none, &have_none);
		} else {
			finish_slices(r, r->tiu_track[k], cr[k].tiu_first, cr[k].tiu_n, r->tiu_mhz,
			              zero, offset_ns, &clamped);
			finish_slices(r, r->gdma_track[k], cr[k].gdma_first, cr[k].gdma_n,
			              r->gdma_mhz, zero, offset_ns, &clamped);
			for (int e = 0; e < 2; e++) {
				int t = e == BMP_ENG_TIU ? r->tiu_track[k] : r->gdma_track[k];
				size_t first =
				    e == BMP_ENG_TIU ? cr[k].tiu_first : cr[k].gdma_first;
				size_t n = e == BMP_ENG_TIU ? cr[k].tiu_n : cr[k].gdma_n;
				for (size_t i = 0; i < n; i++)
					fill_cmd(r, &cc[k], e, t, first + i, k, i);
			}
		}
		if (k < it->n_dyn) {
			/* The MCU timer counts from record 0's base in the PMU counters' epoch
			 * (§4.9), so it takes the same zero and core shift. */
			rc = read_dyn(r, f, &it->dyn[k], k < it->n_extra ? &it->extra[k] : NULL, k,
			              0, -zero - delta[k] + offset_ns);
			if (rc)
				goto out;
		}
		if ((rc = close_cmds(r, &cc[k])) != TP_OK)
			goto out;
		core_cmds_free(&cc[k]);
	}
	if (per_core)
		tp_par_run((unsigned)r->jobs, nc, a2_par_name, &ap);
	if (clamped)
		tp_profile_note(r->p,
		                "%s: %llu records started before the global zero; clamped to 0",
		                ipath, (unsigned long long)clamped);
out:
	for (unsigned k = 0; job && k < nc; k++)
		sg_aside_free(&job[k].aside);
	tp_free(job);
	for (unsigned k = 0; k < BMP_MAX_CORES; k++)
		core_cmds_free(&cc[k]);
	tp_free(cc);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* BM1684 / BM1684X: the legacy path (§9.1).                                                */
/* ---------------------------------------------------------------------------------------- */

/* Legacy slices carry engine cycles in start_ns/end_ns; turn them into the final fields. */
static void finish_cycles(struct rd *r, int t, size_t first, size_t n, double mhz,
                          int64_t offset_ns)
{
	if (!n)
		return; /* (no slices: the array may be NULL) */
	struct tp_track *tr = &r->p->tracks[t];
	struct tp_slice *s = tr->slices + first;
	for (size_t i = 0; i < n; i++, s++) {
		int64_t cs = s->start_ns < 0 ? 0 : s->start_ns;
		int64_t ce = tp_slice_end(tr, s) < cs ? cs : tp_slice_end(tr, s);
		set_cycles(r->p, tr, s, cs, ce, mhz, offset_ns);
	}
}

static int iter_legacy(struct rd *r, const char *ipath, const struct tp_file *f,
                       const struct bmp_iter *it)
{
	unsigned nc = it->n_bd > it->n_gdma ? it->n_bd : it->n_gdma;
	int rc = TP_OK;
	struct core_cmds *cc = tp_calloc(BMP_MAX_CORES, sizeof *cc);
	if (!cc)
		return nomem(r);
	if ((rc = ensure_tracks(r, nc ? nc - 1 : 0)) != TP_OK)
		goto out;
	uint32_t mask = (uint32_t)((1u << r->chip->gdma_id_bits) - 1u);
	int64_t iter_off_ns = 0;
	if (!r->have_first_begin) {
		r->first_begin_usec = it->summary.begin_usec;
		r->have_first_begin = 1;
	} else if (it->summary.begin_usec > r->first_begin_usec && it->n_dyn &&
	           it->dyn[0].len / BMP_DYN_REC_SIZE >= 2) {
		/* §9.1: the iteration's begin relative to the first one, only with >= 2 DYN
		 * records. */
		iter_off_ns = (int64_t)((it->summary.begin_usec - r->first_begin_usec) * 1000);
	}
	for (unsigned k = 0; k < nc; k++) {
		size_t tf = 0, gf = 0, tn = 0, gn = 0;
		if (k < it->n_cmd && (rc = open_cmds(r, ipath, &it->cmd[k], k, &cc[k])) != TP_OK)
			goto out;
		if (k < it->n_bd) {
			if ((rc = read_tiu(r, f, &it->bd[k], &cc[k], k, &tf)) != TP_OK)
				goto out;
			tn = r->p->tracks[r->tiu_track[k]].count - tf;
		}
		if (k < it->n_gdma) {
			if ((rc = read_gdma(r, f, &it->gdma[k], k, &gf)) != TP_OK)
				goto out;
			gn = r->p->tracks[r->gdma_track[k]].count - gf;
		}
		/* start_offset: the first NODE_SET's time (µs since DYN record 1) in engine cycles.
		 */
		double start_us = 0;
		uint64_t tick = 0, dbase = 0;
		if (k < it->n_dyn && it->dyn[k].len / BMP_DYN_REC_SIZE >= 2) {
			const uint8_t *db = f->data + it->dyn[k].off;
			struct bmp_dyn_rec d0, d;
			bmp_dyn_decode(db, &d0);
			bmp_dyn_decode(db + BMP_DYN_REC_SIZE, &d);
			tick = d0.end;
			dbase = d.begin;
			for (size_t i = 1; i < it->dyn[k].len / BMP_DYN_REC_SIZE; i++) {
				bmp_dyn_decode(db + i * BMP_DYN_REC_SIZE, &d);
				if ((d.type & 0xFF) == 1 && d.begin >= dbase && tick &&
				    tick < 1000000) {
					start_us =
					    (double)(d.begin - dbase) * (double)tick / 1000.0;
					break;
				}
			}
		}
		struct tp_slice *ts = tn ? r->p->tracks[r->tiu_track[k]].slices + tf : NULL;
		struct tp_slice *gs = gn ? r->p->tracks[r->gdma_track[k]].slices + gf : NULL;
		int64_t t0 = ts ? ts[0].start_ns : 0, g0 = gs ? gs[0].start_ns : 0;
		/* start_us comes from file data: a garbled DYN record must not overflow the cast
		 * (UB); offsets are clamped to 2^53 ns (~104 days), far beyond any real run. */
		int64_t toff = tp_f64_to_i64_clamp(start_us * r->tiu_mhz, 0, INT64_C(1) << 53),
		        goff = tp_f64_to_i64_clamp(start_us * r->gdma_mhz, 0, INT64_C(1) << 53);
		for (size_t i = 0; i < tn; i++) /* the ends move with the starts */
			ts[i].start_ns = ts[i].start_ns - t0 + toff;
		for (size_t i = 0; i < gn; i++)
			gs[i].start_ns = gs[i].start_ns - g0 + goff;
		/* TIU re-anchoring: the first static GDMA node with a PMU record ends where the TIU
		 * node that depends on it (bd_id + 1, same gdma_id) starts. */
		int anchored = 0;
		const struct bmp_nodes *gnod = &r->g.nodes[k][BMP_ENG_GDMA];
		const struct bmp_nodes *tnod = &r->g.nodes[k][BMP_ENG_TIU];
		if (gnod->gdma_id && tnod->bd_id) {
			for (size_t i = 0; i < gn && !anchored; i++) {
				uint32_t gid = gs[i].cmd_id & mask;
				for (size_t a = 0; a < gnod->n && !anchored; a++) {
					if (gnod->gdma_id[a] != gid)
						continue;
					uint32_t want_bd = gnod->bd_id[a] + 1,
					         want_g = gnod->gdma_id[a];
					for (size_t b = 0; b < tnod->n && !anchored; b++) {
						if (tnod->bd_id[b] != want_bd ||
						    tnod->gdma_id[b] != want_g)
							continue;
						for (size_t j = 0; j < tn; j++)
							if ((ts[j].cmd_id & mask) ==
							    (want_bd & mask)) {
								int64_t gend =
								    (int64_t)((double)tp_slice_end(
								                  &r->p->tracks
								                       [r->gdma_track
								                            [k]],
								                  &gs[i]) *
								              r->tiu_mhz /
								              r->gdma_mhz);
								int64_t sh = gend - ts[j].start_ns;
								for (size_t q = 0; q < tn; q++)
									ts[q].start_ns += sh;
								anchored = 1;
								break;
							}
						break;
					}
					break;
				}
			}
		}
		if (tn && gn && !anchored)
			tp_profile_note(r->p,
			                "%s: core %u: cannot determine tiu start time (no GDMA/TIU "
			                "node pair with PMU records)",
			                ipath, k);
		finish_cycles(r, r->tiu_track[k], tf, tn, r->tiu_mhz, iter_off_ns);
		finish_cycles(r, r->gdma_track[k], gf, gn, r->gdma_mhz, iter_off_ns);
		for (int e = 0; e < 2; e++) {
			int t = e == BMP_ENG_TIU ? r->tiu_track[k] : r->gdma_track[k];
			size_t first = e == BMP_ENG_TIU ? tf : gf, n = e == BMP_ENG_TIU ? tn : gn;
			for (size_t i = 0; i < n; i++)
				fill_cmd(r, &cc[k], e, t, first + i, k, i);
		}
		if (k < it->n_dyn && tick) {
			rc = read_dyn(r, f, &it->dyn[k], k < it->n_extra ? &it->extra[k] : NULL, k,
			              1, iter_off_ns);
			if (rc)
				goto out;
		}
		if ((rc = close_cmds(r, &cc[k])) != TP_OK)
			goto out;
		core_cmds_free(&cc[k]);
	}
out:
	for (unsigned k = 0; k < BMP_MAX_CORES; k++)
		core_cmds_free(&cc[k]);
	tp_free(cc);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Layers.                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* global.profile node lines -> slices. BM1688: the k-th node line of (core, engine) is
 * command k (the final end command has no line, §3.1). Legacy: the node whose own id equals
 * the command id (§8.2 matching by id). */
static void attach_nodes(struct rd *r)
{
	for (unsigned k = 0; k < r->ncores; k++)
		for (int e = 0; e < 2; e++) {
			const struct bmp_nodes *nd = &r->g.nodes[k][e];
			if (!nd->n)
				continue;
			struct tp_track *t =
			    &r->p->tracks[e == BMP_ENG_TIU ? r->tiu_track[k] : r->gdma_track[k]];
			struct bmp_node_cursor cur = {0, 0, 0};
			for (size_t i = 0; i < t->count; i++) {
				struct tp_slice *s = &t->slices[i];
				if (s->cmd_id == 0 || s->cmd_id > nd->n)
					continue;
				size_t ni = s->cmd_id - 1;
				if (!r->perfai && nd->bd_id) {
					uint32_t own =
					    e == BMP_ENG_TIU ? nd->bd_id[ni] : nd->gdma_id[ni];
					if (own != s->cmd_id)
						continue;
					/* BM1684X descriptors are decoded without addresses; the
					 * compiler's gdma_dir gives the direction. */
					if (e == BMP_ENG_GDMA &&
					    tp_slice_dir(t, s) == TP_DIR_NONE &&
					    tp_slice_kind(t, s) == TP_CMD_NORMAL)
						tp_slice_set_dir(r->p, t, s, nd->dir[ni]);
				}
				int32_t L = bmp_nodes_layer(nd, ni, &cur);
				if (L < 0 || (size_t)L >= r->p->num_layers)
					continue;
				s->layer = L;
				if (tp_profile_layer_touch(r->p, (size_t)L, s->start_ns,
				                           tp_slice_end(t, s), e == BMP_ENG_TIU,
				                           s->cmd_id) != TP_OK)
					return; /* the sticky oom flag fails tp_profile_finish */
			}
		}
}

/* ---------------------------------------------------------------------------------------- */
/* Directory.                                                                               */
/* ---------------------------------------------------------------------------------------- */

static int iter_number(const char *name, unsigned long *n)
{
	if (strncmp(name, "iter", 4) != 0)
		return 0;
	const char *p = name + 4;
	if (*p < '0' || *p > '9')
		return 0;
	unsigned long v = 0;
	while (*p >= '0' && *p <= '9') {
		if (v > 100000000UL)
			return 0;
		v = v * 10 + (unsigned long)(*p - '0');
		p++;
	}
	if (strcmp(p, ".profile") != 0)
		return 0;
	*n = v;
	return 1;
}

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	return x < y ? -1 : x > y;
}

/* Lists iter<N>.profile numbers (sorted) and whether global.profile exists. */
static int scan_dir(const char *dir, unsigned long **iters, size_t *n, int *has_global,
                    struct tp_diag *d)
{
	*iters = NULL;
	*n = 0;
	*has_global = 0;
	struct stat st;
	if (stat(dir, &st) != 0)
		return tp_diag_set(d, errno == ENOENT ? TP_ENOTFOUND : TP_EIO, "%s: %s", dir,
		                   strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return tp_diag_set(
		    d, TP_EIO, "%s: not a directory (expected a bmprofile_data directory)", dir);
	DIR *dp = opendir(dir);
	if (!dp)
		return tp_diag_set(d, TP_EIO, "%s: %s", dir, strerror(errno));
	size_t cap = 0;
	struct dirent *de;
	int rc = TP_OK;
	while ((de = readdir(dp)) != NULL) {
		unsigned long k;
		if (!strcmp(de->d_name, "global.profile"))
			*has_global = 1;
		else if (iter_number(de->d_name, &k)) {
			unsigned long *ni = tp_grow(*iters, sizeof *ni, *n + 1, &cap);
			if (!ni) {
				rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
				break;
			}
			*iters = ni;
			(*iters)[(*n)++] = k;
		}
	}
	closedir(dp);
	if (rc == TP_OK && *n > 1)
		qsort(*iters, *n, sizeof **iters, cmp_ul);
	return rc;
}

int tp_bmprofile_probe(const char *dir)
{
	unsigned long *iters;
	size_t n;
	int g;
	if (scan_dir(dir, &iters, &n, &g, NULL) != TP_OK)
		return 0;
	tp_free(iters);
	return g || n > 0;
}

/* Looks for the first "arch=" line cheaply, so the node tables know whether to keep ids. */
static int peek_arch(const uint8_t *t, size_t n)
{
	size_t lim = n < 65536 ? n : 65536;
	for (size_t i = 0; i + 5 < lim; i++) {
		if (memcmp(t + i, "arch", 4) != 0 || (i > 0 && t[i - 1] != ' ' && t[i - 1] != ']'))
			continue;
		size_t j = i + 4;
		while (j < lim && t[j] == ' ') /* "arch = 8" is a harmless variant */
			j++;
		if (j >= lim || t[j] != '=')
			continue;
		j++;
		while (j < lim && t[j] == ' ')
			j++;
		int v = 0, digits = 0;
		for (; j < lim && t[j] >= '0' && t[j] <= '9' && digits < 6; j++, digits++)
			v = v * 10 + (t[j] - '0');
		return digits ? v : -1;
	}
	return -1;
}

static int setup_clocks(struct rd *r, const struct tp_bmprofile_opts *o)
{
	double tiu = 0, gdma = 0;
	const struct sg_chip *chip = sg_chip_by_arch(r->arch);
	if (chip) {
		r->p->chip = &chip->c;
		tiu = chip->c.tiu_mhz;
		gdma = chip->c.dma_mhz;
	}
	/* BM1684X takes its clock from tpu_freq when the line is there (§8.1). */
	if (r->arch == TP_ARCH_BM1684X && r->g.have_freq && r->g.tpu_freq > 0)
		tiu = gdma = (double)r->g.tpu_freq;
	if (r->g.have_freq && r->g.tpu_freq <= 0)
		tp_profile_note(r->p,
		                "global.profile has tpu_freq=%lld; using the %s default clocks "
		                "(TIU %.0f MHz, GDMA %.0f MHz)",
		                (long long)r->g.tpu_freq, tp_arch_name(r->arch), tiu, gdma);
	if (o && o->tiu_freq_mhz > 0)
		tiu = o->tiu_freq_mhz;
	if (o && o->gdma_freq_mhz > 0)
		gdma = o->gdma_freq_mhz;
	r->tiu_mhz = tiu;
	r->gdma_mhz = gdma;
	r->p->tiu_freq_mhz = tiu;
	r->p->gdma_freq_mhz = gdma;
	return TP_OK;
}

/* net_stat.sim is a side file: a problem with it is a note, never a failed conversion. */
static int read_netstat(struct rd *r)
{
	struct tp_file f;
	char *pth = path_of(r, "net_stat.sim");
	if (!pth)
		return nomem(r);
	struct tp_diag ld = {0};
	if (tp_file_load(&f, pth, &ld) != TP_OK) {
		if (ld.status == TP_ENOMEM) {
			tp_free(pth);
			return nomem(r);
		}
		tp_profile_note(r->p, "%s; the simulator figures are not shown", ld.msg);
		tp_free(pth);
		return TP_OK;
	}
	r->p->stats.files_read++;
	struct bmp_netstat ns;
	bmp_netstat_parse((const char *)f.data, f.size, pth, &ns, NULL);
	tp_file_release(&f);
	if (ns.bad_lines)
		tp_profile_note(r->p, "%s:%lu: %s; %lu line(s) of this side file skipped", pth,
		                ns.first_bad_line, ns.bad_what, ns.bad_lines);
	tp_free(pth);
	if (!ns.have_total)
		return TP_OK;
	char buf[64];
	struct {
		const char *k;
		uint64_t v;
	} kv[] = {{"sim_total_cycle", ns.total_cycle},    {"sim_bdc_cycle", ns.bdc_cycle},
	          {"sim_gdma_cycle", ns.gdma_cycle},      {"sim_flops", ns.flops},
	          {"sim_bd_cmds", ns.bd_items},           {"sim_gdma_cmds", ns.gdma_items},
	          {"sim_gdma_s2l_bytes", ns.dr_bytes[0]}, {"sim_gdma_l2s_bytes", ns.dr_bytes[1]}};
	for (size_t i = 0; i < sizeof kv / sizeof *kv; i++) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)kv[i].v);
		if (tp_profile_set_meta(r->p, kv[i].k, buf) != TP_OK)
			return nomem(r);
	}
	if (ns.runtime_ms[0] && tp_profile_set_meta(r->p, "sim_runtime_ms", ns.runtime_ms) != TP_OK)
		return nomem(r);
	return TP_OK;
}

static int read_all(struct rd *r, const struct tp_bmprofile_opts *o, const unsigned long *iters,
                    size_t niters)
{
	int rc;
	struct tp_file gf;
	char *gpath = NULL;
	if ((rc = load(r, "global.profile", &gf, &gpath)) != TP_OK)
		return rc;
	/* Argument sets cost 8 + 16 bytes per argument; keep them only for dumps that are small
	 * enough (records <= iter bytes / 32), unless told otherwise. */
	int want = o ? o->detail : TP_BMPROFILE_DETAIL_AUTO;
	if (want == TP_BMPROFILE_DETAIL_AUTO) {
		uint64_t bytes = 0;
		for (size_t i = 0; i < niters; i++) {
			char name[48];
			snprintf(name, sizeof name, "iter%lu.profile", iters[i]);
			char *pth = path_of(r, name);
			struct stat st;
			if (pth && stat(pth, &st) == 0)
				bytes += (uint64_t)st.st_size;
			tp_free(pth);
		}
		r->detail = bytes / BMP_TIU_REC_SIZE <= TP_BMPROFILE_DETAIL_AUTO_LIMIT;
		/* Decoded descriptors add 20-100 arguments (16 bytes each) per command. */
		r->fields = bytes / BMP_TIU_REC_SIZE <= TP_BMPROFILE_FIELDS_AUTO_LIMIT;
		if (!r->detail)
			tp_profile_note(
			    r->p, "large dump: per-command details (addresses, dependency and "
			          "message ids), LOCAL memory records and tensors are not "
			          "kept; convert with --detail full to keep them");
		else if (!r->fields)
			tp_profile_note(
			    r->p, "large dump: decoded descriptor fields (des_*, DMA sizes and "
			          "strides) are not kept; convert with --detail full to keep "
			          "them");
	} else {
		r->detail = want == TP_BMPROFILE_DETAIL_ON;
		r->fields = r->detail;
	}
	int raw = peek_arch(gf.data, gf.size);
	enum tp_arch guess = o && o->arch_override ? o->arch_override : bmp_arch_from_raw(raw);
	const struct sg_chip *gchip = sg_chip_by_arch(guess);
	r->g.keep_ids = gchip && gchip->bmp_timeline == SG_TL_LEGACY;
	int js = exists(r, "tensor_location.json"), mj = exists(r, "final.mlir");
	if (js < 0 || mj < 0) {
		tp_file_release(&gf);
		tp_free(gpath);
		return nomem(r);
	}
	int skip = o && o->skip_layers;
	/* Side files first: a tensor_location.json that does not parse is skipped with a note and
	 * the global.profile layers are used instead (issue 9 item 5). */
	if (!skip && (js || mj)) {
		char *jp = js ? path_of(r, "tensor_location.json") : NULL;
		char *mp = mj ? path_of(r, "final.mlir") : NULL;
		rc = (js && !jp) || (mj && !mp) ? TP_ENOMEM
		                                : sg_layers_load(r->p, jp, mp, &r->layers);
		tp_free(jp);
		tp_free(mp);
		if (rc != TP_OK) {
			tp_file_release(&gf);
			tp_free(gpath);
			return nomem(r);
		}
		js = r->layers.json != NULL;
	}
	r->g.no_layers = js || skip;
	r->g.no_tensors = !r->detail || skip;
	/* Legacy arches need the node ids for the TIU re-anchoring even without layers. */
	r->g.no_nodes = js || (skip && !r->g.keep_ids);
	r->json = js && !skip;
	r->g.drop_pages = gf.mapped;
	r->g.jobs = o ? o->jobs : 0;
	r->jobs = r->g.jobs;
	r->g.src = &gf;
	rc = bmp_global_parse((const char *)gf.data, gf.size, gpath, r->p, &r->g, r->d);
	r->g.src = NULL;
	tp_file_release(&gf);
	if (rc == TP_OK) {
		if (o && o->arch_override) {
			r->arch = o->arch_override;
		} else if (!r->g.have_arch) {
			rc = tp_diag_set(r->d, TP_EFORMAT, "%s: no arch= line", gpath);
		} else {
			r->arch = r->g.arch;
			if (r->arch == TP_ARCH_UNKNOWN) {
				static const char *const known[] = {"BM1682", NULL,     "BM1880",
				                                    NULL,     NULL,     "BM1690",
				                                    "MARS3",  "SG2380", "CV184X"};
				int a = r->g.arch_raw;
				if (a >= 0 && a <= 8 && known[a])
					rc = tp_diag_line(
					    r->d, TP_EUNSUPPORTED, gpath, r->g.arch_line,
					    "arch %d (%s) is not supported", a, known[a]);
				else
					rc = tp_diag_line(r->d, TP_EUNSUPPORTED, gpath,
					                  r->g.arch_line, "unknown arch %d", a);
			}
		}
		r->chip = sg_chip_by_arch(r->arch);
		if (rc == TP_OK && (!r->chip || r->chip->bmp_timeline == SG_TL_NONE)) {
			if (r->g.have_arch && !(o && o->arch_override))
				rc = tp_diag_line(r->d, TP_EUNSUPPORTED, gpath, r->g.arch_line,
				                  "arch %d (%s) is not supported", r->g.arch_raw,
				                  tp_arch_name(r->arch));
			else
				rc = tp_diag_set(r->d, TP_EUNSUPPORTED,
				                 "%s: arch %s is not supported", gpath,
				                 tp_arch_name(r->arch));
		}
	}
	tp_free(gpath);
	if (rc)
		return rc;
	r->perfai = r->chip->bmp_timeline == SG_TL_PERFAI;
	if (r->g.keep_ids != (r->chip->bmp_timeline == SG_TL_LEGACY))
		tp_profile_note(r->p, "arch guess for node ids differed from the arch line");
	setup_clocks(r, o);
	/* The PerfAI-path chips (BM1688/CV186X, CV184X) decode cmd_*.dat with their register
	 * tables. BM1684X keeps the hand-written decoder: its GDMA directions come from the
	 * node lines (§8.2) and its stream pads SYS commands to 128 bytes. */
	const struct sg_isa *isa =
	    r->chip && r->chip->bmp_timeline == SG_TL_PERFAI ? sg_isa_for_arch(r->arch) : NULL;
	if (isa && r->chip) {
		rc = sg_decoder_new(isa, r->chip->dma_cmd_type_bits, &r->dec);
		if (rc == TP_ENOMEM)
			return nomem(r);
		if (rc != TP_OK)
			return tp_diag_set(r->d, rc, "%s: the %s register tables are inconsistent",
			                   r->dir, tp_arch_name(r->arch));
	}
	if (tp_profile_set_meta(r->p, "arch", tp_arch_name(r->arch)) != TP_OK)
		return nomem(r);
	r->p->arch = r->arch;
	r->p->source = tp_profile_str(r->p, "sophgo-bmprofile");
	char dname[300];
	snprintf(dname, sizeof dname, "%s %s", tp_arch_name(r->arch), tp_str(r->p, r->p->net_name));
	if ((r->device = tp_profile_add_device(r->p, dname, 0, 0)) < 0)
		return nomem(r);
	if (r->g.have_core_list && r->g.n_cores && (rc = ensure_tracks(r, r->g.n_cores - 1)))
		return rc;
	int ns = exists(r, "net_stat.sim");
	if (ns < 0)
		return nomem(r);
	if (ns && (rc = read_netstat(r)) != TP_OK)
		return rc;
	if (niters == 0)
		tp_profile_note(r->p, "%s has no iter*.profile file: no timeline", r->dir);
	for (size_t i = 0; i < niters; i++) {
		char name[48];
		snprintf(name, sizeof name, "iter%lu.profile", iters[i]);
		struct tp_file f;
		char *ipath = NULL;
		if ((rc = load(r, name, &f, &ipath)) != TP_OK)
			return rc;
		_Atomic uint64_t done = 0;
		r->iter_done = &done;
		struct bmp_iter *it = tp_malloc(sizeof *it);
		if (!it) {
			tp_file_release(&f);
			tp_free(ipath);
			return nomem(r);
		}
		rc = bmp_walk(f.data, f.size, r->arch, ipath, it, r->d);
		if (rc == TP_OK) {
			r->p->stats.blocks_read += it->blocks_read;
			r->p->stats.blocks_skipped += it->blocks_skipped;
			struct tp_subnet sn = {.id = it->summary.subnet_id,
			                       .iteration = it->summary.iteration,
			                       .type = it->summary.subnet_type,
			                       .is_dynamic = it->summary.subnet_type == 0 &&
			                                     it->summary.extra,
			                       .begin_usec = it->summary.begin_usec,
			                       .end_usec = it->summary.end_usec};
			if (tp_profile_add_subnet(r->p, &sn) < 0)
				rc = nomem(r);
		}
		if (rc == TP_OK)
			rc = r->perfai ? iter_a2(r, ipath, &f, it) : iter_legacy(r, ipath, &f, it);
		tp_free(it);
		r->iter_done = NULL;
		uint64_t told = atomic_load(&done);
		f.reported = told < f.size ? (size_t)told : f.size;
		tp_file_release(&f);
		tp_free(ipath);
		if (rc)
			return rc;
	}
	if (r->json) {
		char *jp = path_of(r, "tensor_location.json");
		if (!jp)
			return nomem(r);
		rc = sg_layers_apply(r->p, &r->layers, jp, r->tiu_track, r->gdma_track, r->ncores,
		                     r->detail, 0);
		tp_free(jp);
		if (rc != TP_OK)
			return nomem(r);
	} else if (!r->g.no_layers) {
		attach_nodes(r);
		sg_layers_name_from_mlir(r->p, &r->layers, 0);
	} else {
		tp_profile_note(r->p, "layers were not read (skip_layers)");
	}
	return TP_OK;
}

/* Frees what the reader owns beside the profile (global.profile, side files, the decoder,
 * the GDMA counters, the name cache); r itself stays. */
static void rd_release(struct rd *r)
{
	bmp_global_free(&r->g);
	sg_layers_free(&r->layers);
	for (int e = 0; e < 2; e++) {
		for (size_t i = 0; r->keys[e] && r->dec && i < r->dec->ncls[e]; i++)
			tp_free(r->keys[e][i]);
		tp_free(r->keys[e]);
		r->keys[e] = NULL;
	}
	sg_decoder_free(r->dec);
	r->dec = NULL;
	for (unsigned k = 0; k < BMP_MAX_CORES; k++) {
		tp_free(r->gd_gmem[k]);
		tp_free(r->gd_lmem[k]);
		tp_free(r->gd_xact[k]);
		r->gd_gmem[k] = r->gd_lmem[k] = r->gd_xact[k] = NULL;
	}
	tp_free(r->cache);
	r->cache = NULL;
}

int tp_bmprofile_read(const char *dir, const struct tp_bmprofile_opts *o, struct tp_profile **out,
                      struct tp_diag *d)
{
	*out = NULL;
	/* The profile is created first, so its allocations come first (the OOM test relies on it).
	 */
	struct tp_profile *p = tp_profile_new();
	if (!p)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	unsigned long *iters = NULL;
	size_t niters = 0;
	int has_global = 0;
	int rc = scan_dir(dir, &iters, &niters, &has_global, d);
	if (rc) {
		tp_profile_free(p);
		return rc;
	}
	if (!has_global) {
		tp_free(iters);
		tp_profile_free(p);
		if (niters)
			return tp_diag_set(d, TP_ENOTFOUND,
			                   "%s/global.profile: missing (the directory has "
			                   "iter*.profile files but no global.profile)",
			                   dir);
		return tp_diag_set(
		    d, TP_ENOTFOUND,
		    "%s: no global.profile or iter*.profile: not a bmprofile_data directory", dir);
	}
	struct rd *r = tp_calloc(1, sizeof *r);
	if (!r) {
		tp_profile_free(p);
		tp_free(iters);
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	}
	r->dir = dir;
	r->p = p;
	r->d = d;
	r->cache = tp_calloc(NAME_CACHE, sizeof *r->cache);
	if (!r->cache) {
		rc = nomem(r);
		goto out;
	}
	rc = read_all(r, o, iters, niters);
	if (rc == TP_OK && p->oom)
		rc = nomem(r);
out:
	rd_release(r);
	/* The reader's scratch (GDMA counters, decoder, side files) is gone before the sort. */
	if (rc == TP_OK &&
	    (rc = tp_profile_finish_jobs(p, r->jobs > 1 ? (unsigned)r->jobs : 1)) != TP_OK)
		rc = nomem(r);
	tp_free(r);
	tp_free(iters);
	if (rc != TP_OK) {
		tp_profile_free(p);
		return rc;
	}
	*out = p;
	return TP_OK;
}
