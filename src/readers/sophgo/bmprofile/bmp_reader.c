/*
 * bmp_reader.c — tp_bmprofile_read: finds the files of a bmprofile_data directory, runs the
 * parsers (bmp_global.c, bmp_iter.c, bmp_cmd.c, bmp_netstat.c; side files through
 * sg_layers.c), reconstructs the timeline (§9.2 PerfAI path for BM1688/CV186X and CV184X in
 * bmp_perfai.c, §9.1 legacy path for BM1684/BM1684X in bmp_legacy.c; the chip.c row says which,
 * and gives the PMU layouts and clocks) and fills the profile model: one device, per core
 * TIU/GDMA/MCU tracks, one slice per PMU record (bmp_pmu.c), names and argument sets from the
 * command files (bmp_args.c), layers matched to commands. This file owns the directory scan,
 * the clocks, the layers step, read_all and the reader's small shared helpers.
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
 * thread on per-core copies of the reader state (struct bmp_core_job), and everything that
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
#include "common/timings.h"
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* tp_profile_note, or kept in the per-core job. */
void bmp_note(struct bmp_rd *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sg_vnote(r->p, r->job ? &r->job->aside : NULL, fmt, ap);
	va_end(ap);
}

/* Counts `bytes` of the current iter file as read (progress line), from any thread. */
void bmp_iter_progress(struct bmp_rd *r, uint64_t bytes)
{
	if (!r->iter_done || !bytes)
		return;
	atomic_fetch_add_explicit(r->iter_done, bytes, memory_order_relaxed);
	tp_progress_input_done(bytes);
}

/* ---------------------------------------------------------------------------------------- */
/* Small helpers.                                                                           */
/* ---------------------------------------------------------------------------------------- */

static char *path_of(struct bmp_rd *r, const char *name)
{
	return tp_path_join(r->dir, name);
}

int bmp_nomem(struct bmp_rd *r)
{
	return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->dir);
}

/* 1 if dir/name is a regular file, 0 if not, -1 out of memory. */
int bmp_exists(struct bmp_rd *r, const char *name)
{
	char *pth = path_of(r, name);
	if (!pth)
		return -1;
	struct stat st;
	int ok = stat(pth, &st) == 0 && S_ISREG(st.st_mode);
	tp_free(pth);
	return ok;
}

int bmp_load(struct bmp_rd *r, const char *name, struct tp_file *f, char **pathp)
{
	char *pth = path_of(r, name);
	if (!pth)
		return bmp_nomem(r);
	int rc = tp_file_load(f, pth, r->d);
	if (rc != TP_OK) {
		tp_free(pth);
		return rc;
	}
	BMP_RSTATS(r)->files_read++;
	if (pathp)
		*pathp = pth;
	else
		tp_free(pth);
	return TP_OK;
}

int bmp_ensure_tracks(struct bmp_rd *r, unsigned core)
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
		r->outside_track[k][0] = r->outside_track[k][1] = -1;
		if (r->tiu_track[k] < 0 || r->gdma_track[k] < 0)
			return bmp_nomem(r);
		/* The legacy printer's EndCycle is the first cycle after the command. */
		r->p->tracks[r->tiu_track[k]].end_cycle_exclusive = !r->perfai;
		r->p->tracks[r->gdma_track[k]].end_cycle_exclusive = !r->perfai;
		r->ncores++;
	}
	r->p->devices[r->device].num_cores = (int32_t)r->ncores;
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Layers.                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* global.profile node lines -> slices, on track j (core j / 2; TIU or GDMA, j % 2). BM1688:
 * the k-th node line of (core, engine) is command k (the final end command has no line,
 * §3.1). Legacy: the node whose own id equals the command id (§8.2 matching by id). Touches
 * only that track. */
static void attach_track(void *v, size_t j)
{
	struct bmp_rd *r = v;
	unsigned k = (unsigned)(j / 2);
	int e = (int)(j % 2);
	const struct bmp_nodes *nd = &r->g.nodes[k][e];
	if (!nd->n)
		return;
	struct tp_track *t = &r->p->tracks[bmp_eng_track(r, k, e)];
	struct bmp_node_cursor cur = {0, 0, 0};
	for (size_t i = 0; i < t->count; i++) {
		struct tp_slice *s = &t->slices[i];
		if (s->cmd_id == 0 || s->cmd_id > nd->n)
			continue;
		size_t ni = s->cmd_id - 1;
		if (!r->perfai && nd->bd_id) {
			uint32_t own = e == BMP_ENG_TIU ? nd->bd_id[ni] : nd->gdma_id[ni];
			if (own != s->cmd_id)
				continue;
			/* BM1684X descriptors are decoded without addresses; the compiler's
			 * gdma_dir gives the direction. */
			if (e == BMP_ENG_GDMA && tp_slice_dir(t, s) == TP_DIR_NONE &&
			    tp_slice_kind(t, s) == TP_CMD_NORMAL)
				tp_slice_set_dir(r->p, t, s, nd->dir[ni]);
		}
		int32_t L = bmp_nodes_layer(nd, ni, &cur);
		if (L < 0 || (size_t)L >= r->p->num_layers)
			continue;
		s->layer = L;
	}
}

/* Each slice's layer from the node lines (attach_track, per track on --jobs threads), then
 * the layers' spans and command ranges from their slices in track order (core, TIU then
 * GDMA), as one pass over the tracks would. */
static void attach_nodes(struct bmp_rd *r)
{
	unsigned jobs = r->jobs > 1 ? (unsigned)r->jobs : 1;
	tp_par_run(jobs, 2 * (size_t)r->ncores, attach_track, r);
	int tr[2 * BMP_MAX_CORES];
	uint8_t tiu[2 * BMP_MAX_CORES];
	size_t n = 0;
	for (unsigned k = 0; k < r->ncores; k++)
		for (int e = 0; e < 2; e++)
			if (r->g.nodes[k][e].n) {
				tr[n] = bmp_eng_track(r, k, e);
				tiu[n++] = e == BMP_ENG_TIU;
			}
	/* Out of memory sets the profile's sticky flag, which fails tp_profile_finish. */
	(void)tp_profile_layers_touch_jobs(r->p, tr, tiu, n, 1, jobs);
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

static int setup_clocks(struct bmp_rd *r, const struct tp_bmprofile_opts *o)
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

static int cmp_layer_sim(const void *a, const void *b)
{
	const struct tp_layer_sim *x = a, *y = b;
	return (x->layer_id > y->layer_id) - (x->layer_id < y->layer_id);
}

/* The profile's per-layer simulator cycles: the BD items the pairing reached (v[0 .. n)),
 * summed by the layer their names end in, as the vendor's layer table sums them (an item
 * its pairing never reached, and every one after it, counts for no layer). */
static int layer_sim(struct bmp_rd *r, const struct bmp_sim_item *v, size_t n)
{
	struct tp_profile *p = r->p;
	size_t cap = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].layer < 0)
			continue;
		struct tp_layer_sim *s =
		    tp_grow(p->layer_sim, sizeof *s, p->num_layer_sim + 1, &cap);
		if (!s)
			return bmp_nomem(r);
		p->layer_sim = s;
		s[p->num_layer_sim++] = (struct tp_layer_sim){v[i].layer, v[i].t};
	}
	if (!p->num_layer_sim)
		return TP_OK;
	/* one entry per layer id, in id order (equal ids next to each other after the sort) */
	qsort(p->layer_sim, p->num_layer_sim, sizeof *p->layer_sim, cmp_layer_sim);
	size_t k = 0;
	for (size_t i = 0; i < p->num_layer_sim; i++) {
		if (k && p->layer_sim[k - 1].layer_id == p->layer_sim[i].layer_id)
			p->layer_sim[k - 1].cycles += p->layer_sim[i].cycles;
		else
			p->layer_sim[k++] = p->layer_sim[i];
	}
	p->num_layer_sim = k;
	return TP_OK;
}

/* The simulator's cycles of core 0's nodes of engine e (r->sim_cyc[e]), as the vendor's
 * legacy reader pairs them (§7: "matched by equal (bd_id, gdma_id) in order"): one cursor
 * walks the engine's items; a node takes the item under the cursor when both ids agree (and
 * the cursor moves on), else none. An item the nodes never reach (a GDMA_CONSTANT fill, which
 * lands in the BD list) so leaves every later node of that engine without cycles, as the
 * vendor's "Alg cycle" column shows. */
static int match_sim(struct bmp_rd *r, const struct bmp_sim_items *it, int e)
{
	const struct bmp_nodes *nd = &r->g.nodes[0][e];
	if (!nd->n || !nd->bd_id || !nd->gdma_id)
		return TP_OK;
	r->sim_cyc[e] = tp_calloc(nd->n, sizeof *r->sim_cyc[e]);
	if (!r->sim_cyc[e])
		return bmp_nomem(r);
	r->nsim[e] = nd->n;
	int ie = e == BMP_ENG_TIU ? 0 : 1;
	size_t c = 0;
	for (size_t j = 0; j < nd->n && c < it->n[ie]; j++) {
		const struct bmp_sim_item *x = &it->v[ie][c];
		if (x->b == nd->bd_id[j] && x->g == nd->gdma_id[j]) {
			r->sim_cyc[e][j] = x->t;
			c++;
		}
	}
	return e == BMP_ENG_TIU ? layer_sim(r, it->v[0], c) : TP_OK;
}

/* net_stat.sim is a side file: a problem with it is a note, never a failed conversion. */
static int read_netstat(struct bmp_rd *r)
{
	struct tp_file f;
	char *pth = path_of(r, "net_stat.sim");
	if (!pth)
		return bmp_nomem(r);
	struct tp_diag ld = {0};
	if (tp_file_load(&f, pth, &ld) != TP_OK) {
		if (ld.status == TP_ENOMEM) {
			tp_free(pth);
			return bmp_nomem(r);
		}
		tp_profile_note(r->p, "%s; the simulator figures are not shown", ld.msg);
		tp_free(pth);
		return TP_OK;
	}
	r->p->stats.files_read++;
	struct bmp_netstat ns;
	struct bmp_sim_items items = {0};
	int legacy = r->chip->bmp_timeline == SG_TL_LEGACY;
	int rc = bmp_netstat_parse_items((const char *)f.data, f.size, pth, &ns, NULL,
	                                 legacy ? &items : NULL);
	tp_file_release(&f);
	for (int e = 0; rc == TP_OK && legacy && e < 2; e++)
		rc = match_sim(r, &items, e);
	bmp_sim_items_free(&items);
	if (rc != TP_OK) {
		tp_free(pth);
		return bmp_nomem(r);
	}
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
			return bmp_nomem(r);
	}
	if (ns.runtime_ms[0] && tp_profile_set_meta(r->p, "sim_runtime_ms", ns.runtime_ms) != TP_OK)
		return bmp_nomem(r);
	return TP_OK;
}

/* PMU records in iter file `path`: its MONITOR_BD / MONITOR_GDMA block lengths (read from the
 * block headers alone, §4.1) over the arch's record sizes; every block over 32 bytes a record
 * when the arch is not known yet. Stops quietly where the file does not parse: the read
 * itself reports that. */
static uint64_t count_records(const char *path, enum tp_arch arch)
{
	size_t ts = bmp_tiu_rec_size(arch), gs = bmp_gdma_rec_size(arch);
	if (!ts || !gs)
		ts = gs = BMP_TIU_REC_SIZE;
	/* Non-blocking and regular files only: a FIFO or a device in place of an iter file must
	 * reach the reader proper, which says what it is (opening a FIFO blocks without a
	 * writer, /dev/zero reads as endless empty blocks). */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	uint64_t n = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		uint64_t off = 0, size = (uint64_t)st.st_size;
		uint8_t h[8];
		while (size - off >= sizeof h &&
		       pread(fd, h, sizeof h, (off_t)off) == (ssize_t)sizeof h) {
			uint32_t type = tp_le32(h), len = tp_le32(h + 4);
			if (type == SG_BLK_MONITOR_BD)
				n += len / ts;
			else if (type == SG_BLK_MONITOR_GDMA)
				n += len / gs;
			off += sizeof h;
			if (len > size - off)
				break;
			off += len;
		}
	}
	close(fd);
	return n;
}

/* Whether argument sets and decoded fields are kept (r->detail, r->fields): for dumps of up to
 * TP_BMPROFILE_DETAIL_AUTO_LIMIT / _FIELDS_AUTO_LIMIT commands (PMU records of every iter file,
 * counted with the arch's record sizes), unless told otherwise. Argument sets cost 8 + 16
 * bytes per argument. */
static void choose_detail(struct bmp_rd *r, const struct tp_bmprofile_opts *o,
                          const unsigned long *iters, size_t niters, enum tp_arch arch)
{
	int want = o ? o->detail : TP_BMPROFILE_DETAIL_AUTO;
	if (want != TP_BMPROFILE_DETAIL_AUTO) {
		r->detail = want == TP_BMPROFILE_DETAIL_ON;
		r->fields = r->detail;
		return;
	}
	uint64_t records = 0;
	for (size_t i = 0; i < niters; i++) {
		char name[48];
		snprintf(name, sizeof name, "iter%lu.profile", iters[i]);
		char *pth = path_of(r, name);
		if (pth)
			records += count_records(pth, arch);
		tp_free(pth);
	}
	r->detail = records <= TP_BMPROFILE_DETAIL_AUTO_LIMIT;
	/* Decoded descriptors add 20-100 arguments (16 bytes each) per command. */
	r->fields = records <= (o && o->fields_limit ? o->fields_limit
	                                             : (uint64_t)TP_BMPROFILE_FIELDS_AUTO_LIMIT);
	if (!r->detail)
		tp_profile_note(r->p, "large dump: per-command details (addresses, dependency and "
		                      "message ids), LOCAL memory records and tensors are not "
		                      "kept; convert with --detail full to keep them");
	else if (!r->fields)
		tp_profile_note(r->p, "large dump: decoded descriptor fields (des_*, DMA sizes and "
		                      "strides) are not kept (LOCAL memory records are); convert "
		                      "with --detail full to keep them");
}

/* The side files (tensor_location.json, final.mlir) and what global.profile keeps with or
 * without them. A tensor_location.json that does not parse is skipped with a note and the
 * global.profile layers are used instead. */
static int load_side_files(struct bmp_rd *r, const struct tp_bmprofile_opts *o)
{
	int js = bmp_exists(r, "tensor_location.json"), mj = bmp_exists(r, "final.mlir");
	if (js < 0 || mj < 0)
		return TP_ENOMEM;
	int skip = o && o->skip_layers;
	if (!skip && (js || mj)) {
		char *jp = js ? path_of(r, "tensor_location.json") : NULL;
		char *mp = mj ? path_of(r, "final.mlir") : NULL;
		int rc = (js && !jp) || (mj && !mp) ? TP_ENOMEM
		                                    : sg_layers_load(r->p, jp, mp, &r->layers);
		tp_free(jp);
		tp_free(mp);
		if (rc != TP_OK)
			return TP_ENOMEM;
		js = r->layers.json != NULL;
	}
	r->g.no_layers = js || skip;
	r->g.no_tensors = !r->detail || skip;
	/* Legacy arches need the node ids for the TIU re-anchoring even without layers. */
	r->g.no_nodes = js || (skip && !r->g.keep_ids);
	r->json = js && !skip;
	return TP_OK;
}

/* The arch: the override (TP_EUSAGE when global.profile names another arch, unless
 * force_arch), or global.profile's arch= line; an error names an arch the chip table lacks or
 * whose timeline is not read. Sets r->arch and r->chip. */
static int settle_arch(struct bmp_rd *r, const struct tp_bmprofile_opts *o, const char *gpath)
{
	int rc = TP_OK;
	if (o && o->arch_override) {
		r->arch = o->arch_override;
		/* The dump's own arch line wins unless told otherwise: read as another chip,
		 * every time and name is wrong (a BM1688 dump read as BM1684X spans 420 s). */
		if (r->g.have_arch && r->g.arch != TP_ARCH_UNKNOWN && r->g.arch != r->arch &&
		    !o->force_arch)
			return tp_diag_line(r->d, TP_EUSAGE, gpath, r->g.arch_line,
			                    "--arch %s, but the dump records arch %d (%s); convert "
			                    "without --arch, or add --force-arch to read it as %s",
			                    tp_arch_name(r->arch), r->g.arch_raw,
			                    tp_arch_name(r->g.arch), tp_arch_name(r->arch));
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
				rc = tp_diag_line(r->d, TP_EUNSUPPORTED, gpath, r->g.arch_line,
				                  "arch %d (%s) is not supported", a, known[a]);
			else
				rc = tp_diag_line(r->d, TP_EUNSUPPORTED, gpath, r->g.arch_line,
				                  "unknown arch %d", a);
		}
	}
	r->chip = sg_chip_by_arch(r->arch);
	if (rc == TP_OK && (!r->chip || r->chip->bmp_timeline == SG_TL_NONE)) {
		if (r->g.have_arch && !(o && o->arch_override))
			rc = tp_diag_line(r->d, TP_EUNSUPPORTED, gpath, r->g.arch_line,
			                  "arch %d (%s) is not supported", r->g.arch_raw,
			                  tp_arch_name(r->arch));
		else
			rc = tp_diag_set(r->d, TP_EUNSUPPORTED, "%s: arch %s is not supported",
			                 gpath, tp_arch_name(r->arch));
	}
	return rc;
}

/* global.profile: the arch guess (legacy arches keep node ids; the PMU record sizes that
 * decide the detail level), the side files, the parse and the arch. */
static int read_global(struct bmp_rd *r, const struct tp_bmprofile_opts *o,
                       const unsigned long *iters, size_t niters)
{
	int rc;
	struct tp_file gf;
	char *gpath = NULL;
	if ((rc = bmp_load(r, "global.profile", &gf, &gpath)) != TP_OK)
		return rc;
	int raw = peek_arch(gf.data, gf.size);
	enum tp_arch guess = o && o->arch_override ? o->arch_override : bmp_arch_from_raw(raw);
	const struct sg_chip *gchip = sg_chip_by_arch(guess);
	r->g.keep_ids = gchip && gchip->bmp_timeline == SG_TL_LEGACY;
	choose_detail(r, o, iters, niters, guess);
	if (load_side_files(r, o) != TP_OK) {
		tp_file_release(&gf);
		tp_free(gpath);
		return bmp_nomem(r);
	}
	r->g.drop_pages = gf.mapped;
	r->g.jobs = o ? o->jobs : 0;
	r->jobs = r->g.jobs;
	r->part = o && o->part ? o->part : TP_BMPROFILE_PART;
	r->g.src = &gf;
	rc = bmp_global_parse((const char *)gf.data, gf.size, gpath, r->p, &r->g, r->d);
	r->g.src = NULL;
	tp_file_release(&gf);
	if (rc == TP_OK)
		rc = settle_arch(r, o, gpath);
	tp_free(gpath);
	return rc;
}

/* The decoder of the PerfAI-path chips, the arch meta and the device. */
static int setup_device(struct bmp_rd *r)
{
	/* The PerfAI-path chips (BM1688/CV186X, CV184X) decode cmd_*.dat with their register
	 * tables. BM1684X keeps the hand-written decoder: its GDMA directions come from the
	 * node lines (§8.2) and its stream pads SYS commands to 128 bytes. */
	const struct sg_isa *isa =
	    r->chip && r->chip->bmp_timeline == SG_TL_PERFAI ? sg_isa_for_arch(r->arch) : NULL;
	if (isa && r->chip) {
		int rc = sg_decoder_new(isa, r->chip->dma_cmd_type_bits, &r->dec);
		if (rc == TP_ENOMEM)
			return bmp_nomem(r);
		if (rc != TP_OK)
			return tp_diag_set(r->d, rc, "%s: the %s register tables are inconsistent",
			                   r->dir, tp_arch_name(r->arch));
	}
	if (r->arch == TP_ARCH_BM1684X && r->chip) {
		int rc = sg_decoder_new(&sg_isa_bm1684x, r->chip->dma_cmd_type_bits, &r->fdec);
		if (rc == TP_ENOMEM)
			return bmp_nomem(r);
		if (rc != TP_OK)
			return tp_diag_set(r->d, rc, "%s: the %s register tables are inconsistent",
			                   r->dir, tp_arch_name(r->arch));
	}
	if (tp_profile_set_meta(r->p, "arch", tp_arch_name(r->arch)) != TP_OK)
		return bmp_nomem(r);
	r->p->arch = r->arch;
	r->p->source = tp_profile_str(r->p, "sophgo-bmprofile");
	char dname[300];
	snprintf(dname, sizeof dname, "%s %s", tp_arch_name(r->arch), tp_str(r->p, r->p->net_name));
	if ((r->device = tp_profile_add_device(r->p, dname, 0, 0)) < 0)
		return bmp_nomem(r);
	return TP_OK;
}

/* iter<N>.profile: its blocks, its subnet, and its commands by the chip's timeline. */
static int read_iter(struct bmp_rd *r, unsigned long iter)
{
	char name[48];
	snprintf(name, sizeof name, "iter%lu.profile", iter);
	struct tp_file f;
	char *ipath = NULL;
	int rc;
	if ((rc = bmp_load(r, name, &f, &ipath)) != TP_OK)
		return rc;
	_Atomic uint64_t done = 0;
	r->iter_done = &done;
	struct bmp_iter *it = tp_malloc(sizeof *it);
	if (!it) {
		tp_file_release(&f);
		tp_free(ipath);
		return bmp_nomem(r);
	}
	tp_tm_begin("walk");
	rc = bmp_walk(f.data, f.size, r->arch, ipath, it, r->d);
	tp_tm_end();
	if (rc == TP_OK) {
		r->p->stats.blocks_read += it->blocks_read;
		r->p->stats.blocks_skipped += it->blocks_skipped;
		struct tp_subnet sn = {.id = it->summary.subnet_id,
		                       .iteration = it->summary.iteration,
		                       .type = it->summary.subnet_type,
		                       .is_dynamic =
		                           it->summary.subnet_type == 0 && it->summary.extra,
		                       .begin_usec = it->summary.begin_usec,
		                       .end_usec = it->summary.end_usec};
		if (tp_profile_add_subnet(r->p, &sn) < 0)
			rc = bmp_nomem(r);
	}
	if (rc == TP_OK)
		rc = r->perfai ? bmp_iter_perfai(r, ipath, &f, it)
		               : bmp_iter_legacy(r, ipath, &f, it);
	tp_free(it);
	r->iter_done = NULL;
	uint64_t told = atomic_load(&done);
	f.reported = told < f.size ? (size_t)told : f.size;
	tp_file_release(&f);
	tp_free(ipath);
	return rc;
}

/* The timeline: every iter*.profile file, in the order given. */
static int read_iters(struct bmp_rd *r, const unsigned long *iters, size_t niters)
{
	int rc = TP_OK;
	if (niters == 0)
		tp_profile_note(r->p, "%s has no iter*.profile file: no timeline", r->dir);
	for (size_t i = 0; i < niters && rc == TP_OK; i++)
		rc = read_iter(r, iters[i]);
	return rc;
}

/* Commands to layers: tensor_location.json's ranges, or global.profile's node lines. */
static int join_layers(struct bmp_rd *r)
{
	if (r->json) {
		char *jp = path_of(r, "tensor_location.json");
		if (!jp)
			return bmp_nomem(r);
		int rc = sg_layers_apply(r->p, &r->layers, jp, r->tiu_track, r->gdma_track,
		                         r->ncores, r->detail, 0);
		tp_free(jp);
		if (rc != TP_OK)
			return bmp_nomem(r);
	} else if (!r->g.no_layers) {
		attach_nodes(r);
		sg_layers_name_from_mlir(r->p, &r->layers, 0);
	} else {
		tp_profile_note(r->p, "layers were not read (skip_layers)");
	}
	return TP_OK;
}

static int read_all(struct bmp_rd *r, const struct tp_bmprofile_opts *o, const unsigned long *iters,
                    size_t niters)
{
	int rc;
	tp_tm_begin("global");
	if ((rc = tp_tm_end_rc(read_global(r, o, iters, niters))) != TP_OK)
		return rc;
	r->perfai = r->chip->bmp_timeline == SG_TL_PERFAI;
	if (r->g.keep_ids != (r->chip->bmp_timeline == SG_TL_LEGACY))
		tp_profile_note(r->p, "arch guess for node ids differed from the arch line");
	setup_clocks(r, o);
	if ((rc = setup_device(r)) != TP_OK)
		return rc;
	if (r->g.have_core_list && r->g.n_cores && (rc = bmp_ensure_tracks(r, r->g.n_cores - 1)))
		return rc;
	int ns = bmp_exists(r, "net_stat.sim");
	if (ns < 0)
		return bmp_nomem(r);
	if (ns && (rc = read_netstat(r)) != TP_OK)
		return rc;
	tp_tm_begin("iters");
	if ((rc = tp_tm_end_rc(read_iters(r, iters, niters))) != TP_OK)
		return rc;
	tp_tm_begin("layers");
	return tp_tm_end_rc(join_layers(r));
}

/* Frees what the reader owns beside the profile (global.profile, side files, the decoder,
 * the GDMA counters, the name cache); r itself stays. */
static void rd_release(struct bmp_rd *r)
{
	bmp_global_free(&r->g);
	sg_layers_free(&r->layers);
	bmp_fill_caches_free(r);
	sg_decoder_free(r->dec);
	r->dec = NULL;
	sg_decoder_free(r->fdec);
	r->fdec = NULL;
	for (int e = 0; e < 2; e++) {
		tp_free(r->sim_cyc[e]);
		r->sim_cyc[e] = NULL;
		r->nsim[e] = 0;
	}
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
	struct bmp_rd *r = tp_malloc(sizeof *r);
	if (!r) {
		tp_profile_free(p);
		tp_free(iters);
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	}
	*r = (struct bmp_rd){.dir = dir, .p = p, .ap = p, .d = d};
	r->cache = tp_calloc(BMP_NAME_CACHE, sizeof *r->cache);
	rc = r->cache ? read_all(r, o, iters, niters) : bmp_nomem(r);
	rc = sg_read_deps(p, rc, r->jobs > 1 ? (unsigned)r->jobs : 1, d, dir);
	rd_release(r);
	/* The reader's scratch (GDMA counters, decoder, side files) is gone before the sort. */
	unsigned jobs = r->jobs > 1 ? (unsigned)r->jobs : 1;
	tp_free(r);
	tp_free(iters);
	return sg_read_done(p, rc, jobs, d, dir, out);
}
