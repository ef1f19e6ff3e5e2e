/*
 * outdir.c — reads an earlier tpuprof output folder back into a profile, so `tpuprof diff`
 * compares output folders (and an output folder against a dump) with the same code as two
 * inputs (contract in outdir.h, format in docs/diff.md "Output folders").
 *
 * Source: the folder's profile.db (written with --sqlite; schema in
 * src/writers/sqlitedb/sqlitedb.h), which holds every slice with its annotations — summary.json
 * only keeps the top 20 rows. Rebuilt from it: devices (process rows), one track per (process,
 * core, engine) or per (process, thread name) (the database splits a track into lanes for
 * overlapping slices; they are joined again), slices with what the analysis and the diff read
 * (name, category as type, command fields from the reference annotations "Function Type",
 * "Direction", "DMA data size(B)", "Start Cycle", "Asic Cycle", "Stall Cycle", "Cmd Id", "Layer
 * Id"), host slices' annotations as arguments, and the layer table from the Layer tracks' slices
 * ("Layer Id", "Layer Type", "Layer Name"). Clocks, source, architecture and network name come from
 * summary.json when present. Command kinds (sys / send / wait) are not stored in the database
 * and are recovered from the function type and name (TIU "SYS*", DMA "DMA_sys", "send_msg",
 * "wait_msg"). Counters, flows, tensors and memory charts are not read (the diff uses none).
 *
 * The database is untrusted input (outdir_db.c opens it); every number read from it is
 * range-checked before use: ids of any size map through od_idmap (memory follows the rows, not
 * the ids), cores past OD_MAX_CORE reject the database, slices with times past OD_MAX_TIME
 * are skipped and counted in a note, and annotation values saturate into their fields.
 * Tracks are looked up by hash, so reading is linear in the tracks.
 * Owns nothing past the call; the profile is the caller's.
 */
#include "readers/outdir/outdir_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tp_outdir_probe(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	int found = 0;
	const char *names[2] = {"profile.db", "summary.json"};
	for (int i = 0; i < 2 && !found; i++) {
		char *p = tp_path_join(dir, names[i]);
		found = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
		tp_free(p);
	}
	return found;
}

/* ---- Small helpers ------------------------------------------------------------------------ */

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? (const char *)s : "";
}

static int32_t clamp_i32(int64_t v)
{
	return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

static uint32_t clamp_u32(int64_t v)
{
	return v < 0 ? 0 : v > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s);
	char *c = tp_malloc(n + 1);
	if (c)
		memcpy(c, s, n + 1);
	return c;
}

/* ---- Keys, processes, tracks ---------------------------------------------------------------- */

static int load_keys(struct od_reader *r)
{
	sqlite3_stmt *st;
	int rc = od_prepare(r, "SELECT id, key FROM arg_key", &st), step;
	if (rc)
		return rc;
	size_t cap = 0;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = col_text(st, 1);
		if (strncmp(k, "debug.", 6) == 0)
			k += 6;
		char **v =
		    r->nkeys < INT32_MAX ? tp_grow(r->keys, sizeof *v, r->nkeys + 1, &cap) : NULL;
		char *c = v ? dup_str(k) : NULL;
		if (v)
			r->keys = v;
		if (!c ||
		    od_idmap_add(&r->key_of, sqlite3_column_int64(st, 0), (int32_t)r->nkeys)) {
			tp_free(c);
			sqlite3_finalize(st);
			return TP_ENOMEM;
		}
		r->keys[r->nkeys++] = c;
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE)
		return od_step_error(r, "reading arg_key", step);
	return od_idmap_finish(&r->key_of);
}

static int load_processes(struct od_reader *r)
{
	sqlite3_stmt *st;
	int rc = od_prepare(r, "SELECT upid, pid, name FROM process ORDER BY upid", &st), step;
	if (rc)
		return rc;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int dev = tp_profile_add_device(r->p, col_text(st, 2),
		                                clamp_i32(sqlite3_column_int64(st, 1)), 0);
		if (dev < 0 || od_idmap_add(&r->dev_of, sqlite3_column_int64(st, 0), dev)) {
			sqlite3_finalize(st);
			return TP_ENOMEM;
		}
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE)
		return od_step_error(r, "reading process", step);
	return od_idmap_finish(&r->dev_of);
}

static size_t host_hash(int32_t dev, uint32_t name)
{
	uint64_t h = ((uint64_t)(uint32_t)dev << 32 | name) * UINT64_C(0x9E3779B97F4A7C15);
	return (size_t)(h ^ h >> 29);
}

static size_t host_hash_at(const void *ctx, size_t i)
{
	const struct tp_profile *p = ctx;
	return host_hash(p->tracks[i].device, p->tracks[i].name);
}

/* The model track for host lane `name` of device dev: one per (device, name), whatever lanes
 * the database split it into. -1 when out of memory. */
static int host_track(struct od_reader *r, int dev, const char *name)
{
	struct tp_profile *p = r->p;
	uint32_t id = tp_profile_str(p, name);
	if (p->oom || tp_ixmap_reserve(&r->host, p->num_tracks, host_hash_at, p))
		return -1;
	size_t k;
	for (k = tp_ixmap_start(&r->host, host_hash(dev, id)); r->host.slot[k];
	     k = tp_ixmap_next(&r->host, k)) {
		const struct tp_track *t = &p->tracks[r->host.slot[k] - 1];
		if (t->core < 0 && t->device == dev && t->name == id)
			return (int)r->host.slot[k] - 1;
	}
	int t = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, name, 0);
	if (t >= 0)
		r->host.slot[k] = (uint32_t)t + 1;
	return t;
}

static enum tp_track_kind kind_of(const char *name)
{
	for (int k = TP_TRACK_TIU; k <= TP_TRACK_LAYER; k++)
		if (strcmp(name, tp_track_kind_name((enum tp_track_kind)k)) == 0)
			return (enum tp_track_kind)k;
	return TP_TRACK_KIND_COUNT;
}

/* The model track of one track row (engine track of a core, or host lane), -1 for rows the
 * reader skips, -2 when out of memory. */
static int model_track(struct od_reader *r, int dev, const char *name, const char *type, int core)
{
	struct tp_profile *p = r->p;
	int is_slice = strcmp(type, "slice") == 0, is_thread = strcmp(type, "thread") == 0;
	enum tp_track_kind kind = is_slice ? kind_of(name) : TP_TRACK_KIND_COUNT;
	if (is_slice && kind != TP_TRACK_KIND_COUNT && core >= 0) {
		int t = tp_profile_find_track(p, dev, core, kind);
		double mhz = kind == TP_TRACK_TIU         ? r->tiu_mhz
		             : tp_track_kind_is_dma(kind) ? r->dma_mhz
		                                          : 0;
		if (t < 0 && (t = tp_profile_add_track(p, dev, core, kind, name, mhz)) < 0)
			return -2;
		if (core + 1 > p->devices[dev].num_cores)
			p->devices[dev].num_cores = core + 1;
		return t;
	}
	if (!is_thread && !is_slice)
		return -1;
	int t = host_track(r, dev, name);
	return t < 0 ? -2 : t;
}

static int load_tracks(struct od_reader *r)
{
	sqlite3_stmt *st;
	int rc = od_prepare(r, "SELECT id, name, type, upid, core FROM track ORDER BY id", &st);
	if (rc)
		return rc;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		int dev = od_idmap_get(&r->dev_of, sqlite3_column_int64(st, 3));
		if (dev < 0)
			continue;
		int64_t core =
		    sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4);
		if (core < -1 || core > OD_MAX_CORE) {
			sqlite3_finalize(st);
			return tp_diag_set(r->d, TP_EFORMAT,
			                   "%s: track %lld: core %lld out of range (0 to %d)",
			                   r->path, (long long)id, (long long)core, OD_MAX_CORE);
		}
		int t = model_track(r, dev, col_text(st, 1), col_text(st, 2), (int)core);
		if (t == -1)
			continue;
		int64_t *v =
		    t >= 0 ? tp_grow(r->track_ids, sizeof *v, r->ntrack_ids + 1, &r->cap_track_ids)
		           : NULL;
		if (!v || od_idmap_add(&r->track_of, id, t)) {
			sqlite3_finalize(st);
			return TP_ENOMEM;
		}
		r->track_ids = v;
		r->track_ids[r->ntrack_ids++] = id;
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE)
		return od_step_error(r, "reading track", step);
	return od_idmap_finish(&r->track_of);
}

/* ---- Layers --------------------------------------------------------------------------------- */

static int lay_key_cmp(const struct od_lay *a, int32_t dev, int32_t core, int32_t id)
{
	if (a->device != dev)
		return a->device < dev ? -1 : 1;
	if (a->core != core)
		return a->core < core ? -1 : 1;
	return a->id < id ? -1 : a->id > id;
}

static int lay_cmp(const void *x, const void *y)
{
	const struct od_lay *a = x, *b = y;
	int c = lay_key_cmp(a, b->device, b->core, b->id);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Sorts a copy of the layers by (device, core, id, index) for find_layer. */
static int index_layers(struct od_reader *r)
{
	tp_free(r->byid);
	r->nbyid = 0;
	if (!r->nlays)
		return TP_OK;
	if (!(r->byid = tp_malloc(r->nlays * sizeof *r->byid)))
		return TP_ENOMEM;
	memcpy(r->byid, r->lays, r->nlays * sizeof *r->byid);
	qsort(r->byid, r->nlays, sizeof *r->byid, lay_cmp);
	r->nbyid = r->nlays;
	return TP_OK;
}

struct lay_key {
	const struct od_lay *byid;
	int32_t device, core, id;
};

static int lay_after(const void *ctx, size_t i)
{
	const struct lay_key *k = ctx;
	return lay_key_cmp(&k->byid[i], k->device, k->core, k->id) > 0;
}

/* The layer a command names by Layer Id on its core: when an id repeats (a layer run more than
 * once), the last one in the layer table. */
static int find_layer(const struct od_reader *r, int32_t dev, int32_t core, int32_t id)
{
	struct lay_key key = {r->byid, dev, core, id};
	size_t lo = tp_upper_bound(r->nbyid, lay_after, &key);
	if (lo && lay_key_cmp(&r->byid[lo - 1], dev, core, id) == 0)
		return r->byid[lo - 1].index;
	return -1;
}

/* A layer's place in time order: device, core, begin, id. */
static void layer_key(const struct tp_layer *l, int64_t k[4])
{
	k[0] = l->device;
	k[1] = l->core;
	k[2] = l->begin_ns;
	k[3] = l->id;
}

static int layer_cmp(const void *x, const void *y)
{
	int64_t ka[4], kb[4];
	layer_key(x, ka);
	layer_key(y, kb);
	return tp_cmp_keys(ka, kb, 4);
}

/* The database holds a core's layers lane by lane; the layer table wants them in time order
 * (the diff's fallback key counts a layer's position among its core's layers of its type). */
static int sort_layers(struct od_reader *r)
{
	struct tp_profile *p = r->p;
	struct tp_layer *all = p->num_layers ? tp_malloc(p->num_layers * sizeof *all) : NULL;
	if (p->num_layers && !all)
		return TP_ENOMEM;
	for (size_t i = 0; i < p->num_layers; i++)
		tp_profile_layer(p, i, &all[i]);
	if (p->num_layers)
		qsort(all, p->num_layers, sizeof *all, layer_cmp);
	int st = TP_OK;
	for (size_t i = 0; i < p->num_layers && st == TP_OK; i++)
		st = tp_profile_set_layer(p, i, &all[i]);
	for (size_t i = 0; i < p->num_layers && i < r->nlays; i++)
		r->lays[i] = (struct od_lay){all[i].device, all[i].core, all[i].id, (int32_t)i};
	r->nlays = p->num_layers < r->nlays ? p->num_layers : r->nlays;
	tp_free(all);
	return st;
}

/* ---- Slices --------------------------------------------------------------------------------- */

/* One annotation of the slice being read. */
struct av {
	const char *key;
	int type; /* 0 int, 1 uint (in int_value's bits), 2 real, 3 string */
	int64_t i;
	double d;
	const char *s;
};

/* An annotation as an integer: reals truncated and saturated, strings parsed (0 if not a
 * number). */
static int64_t av_int(const struct av *a)
{
	if (a->type == 2)
		return tp_f64_to_i64_clamp(a->d, INT64_MIN, INT64_MAX);
	if (a->type == 3) {
		int64_t v;
		return tp_parse_i64(a->s, strlen(a->s), &v) == 0 ? v : 0;
	}
	return a->i;
}

/* The slice being read: its row and its annotations. */
struct cur {
	int64_t id, ts, dur;
	int track;
	uint32_t cmd;
	char *cat, *name;
	struct av *av;
	size_t nav, cap_av;
	char **strs; /* the annotations' strings, freed per slice */
	size_t nstrs, cap_strs;
};

static void cur_clear(struct cur *c)
{
	for (size_t i = 0; i < c->nstrs; i++)
		tp_free(c->strs[i]);
	c->nstrs = c->nav = 0;
	tp_free(c->cat);
	tp_free(c->name);
	c->cat = c->name = NULL;
}

static int put_layer(struct od_reader *r, const struct cur *c)
{
	struct tp_profile *p = r->p;
	const struct tp_track *t = &p->tracks[c->track];
	struct tp_layer l;
	memset(&l, 0, sizeof l);
	l.id = -1;
	l.device = t->device;
	l.core = t->core;
	l.subnet = l.group = -1;
	l.begin_ns = c->ts;
	l.end_ns = c->ts + c->dur;
	l.type = tp_profile_str(p, c->name);
	for (size_t i = 0; i < c->nav; i++) {
		const struct av *a = &c->av[i];
		if (strcmp(a->key, "Layer Id") == 0)
			l.id = clamp_i32(av_int(a));
		else if (strcmp(a->key, "Layer Type") == 0 && a->type == 3)
			l.type = tp_profile_str(p, a->s);
		else if (strcmp(a->key, "Layer Name") == 0 && a->type == 3)
			l.name = tp_profile_str(p, a->s);
	}
	int ix = tp_profile_add_layer(p, &l);
	if (ix < 0)
		return TP_ENOMEM;
	struct od_lay *v = tp_grow(r->lays, sizeof *v, r->nlays + 1, &r->cap_lays);
	if (!v)
		return TP_ENOMEM;
	r->lays = v;
	v[r->nlays++] = (struct od_lay){t->device, t->core, l.id, ix};
	return TP_OK;
}

static int put_host(struct od_reader *r, const struct cur *c, struct tp_slice *s,
                    struct tp_label *lb)
{
	struct tp_profile *p = r->p;
	struct tp_track *t = &p->tracks[c->track];
	lb->type = c->cat[0] ? tp_profile_str(p, c->cat) : 0;
	if (tp_slice_set_label(p, t, s, lb))
		return TP_ENOMEM;
	if (!c->nav)
		return TP_OK;
	tp_args_begin(p);
	for (size_t i = 0; i < c->nav; i++) {
		const struct av *a = &c->av[i];
		int rc = a->type == 3   ? tp_args_add_str(p, a->key, a->s)
		         : a->type == 2 ? tp_args_add_real(p, a->key, a->d)
		         : a->type == 1 ? tp_args_add_uint(p, a->key, (uint64_t)a->i)
		                        : tp_args_add_int(p, a->key, a->i);
		if (rc)
			return rc;
	}
	s->args = tp_args_end(p);
	return TP_OK;
}

/* An engine command: the reference annotations back into the slice's fields. */
static int put_cmd(struct od_reader *r, const struct cur *c, struct tp_slice *s,
                   struct tp_label *lb)
{
	struct tp_profile *p = r->p;
	struct tp_track *t = &p->tracks[c->track];
	const char *ftype = "";
	int64_t layer_id = -1, start_cycle = 0;
	int have_layer = 0;
	for (size_t i = 0; i < c->nav; i++) {
		const struct av *a = &c->av[i];
		const char *k = a->key;
		if (strcmp(k, "Function Type") == 0 && a->type == 3)
			ftype = a->s;
		else if (strcmp(k, "Direction") == 0 && a->type == 3) {
			for (int dir = 1; dir < TP_DIR_COUNT; dir++)
				if (strcmp(a->s, tp_dir_name((enum tp_dir)dir)) == 0)
					lb->dir = (uint8_t)dir;
		} else if (strcmp(k, "DMA data size(B)") == 0)
			lb->bytes = clamp_u32(av_int(a));
		else if (strcmp(k, "Start Cycle") == 0)
			start_cycle = av_int(a);
		else if (strcmp(k, "Asic Cycle") == 0)
			s->cycles = clamp_u32(av_int(a));
		else if (strcmp(k, "Stall Cycle") == 0)
			lb->stall = clamp_u32(av_int(a));
		else if (strcmp(k, "Layer Id") == 0) {
			layer_id = av_int(a);
			have_layer = 1;
		}
	}
	lb->type = ftype[0] ? tp_profile_str(p, ftype) : 0;
	if (strncmp(ftype, "SYS", 3) == 0 || strcmp(ftype, "DMA_sys") == 0)
		lb->kind = strstr(c->name, "wait_msg")   ? TP_CMD_SYS_WAIT
		           : strstr(c->name, "send_msg") ? TP_CMD_SYS_SEND
		                                         : TP_CMD_SYS;
	uint64_t sc = start_cycle < 0 ? 0 : (uint64_t)start_cycle;
	s->start_cycle_lo = (uint32_t)sc;
	lb->cycle_hi = (uint32_t)(sc >> 32);
	if (tp_slice_set_label(p, t, s, lb))
		return TP_ENOMEM;
	if (have_layer)
		s->layer = find_layer(r, t->device, t->core, clamp_i32(layer_id));
	return TP_OK;
}

/* Turns the slice read so far into the model. Slices whose times leave
 * [-OD_MAX_TIME, OD_MAX_TIME] are counted, not read. */
static int put_slice(struct od_reader *r, const struct cur *c)
{
	struct tp_profile *p = r->p;
	if (c->ts < -OD_MAX_TIME || c->ts > OD_MAX_TIME || c->dur < 0 ||
	    c->dur > OD_MAX_TIME - c->ts) {
		r->skipped_times++;
		return TP_OK;
	}
	if (p->tracks[c->track].kind == TP_TRACK_LAYER)
		return put_layer(r, c);
	struct tp_slice *s = tp_track_push(p, c->track);
	if (!s)
		return TP_ENOMEM;
	struct tp_track *t = &p->tracks[c->track];
	s->start_ns = c->ts;
	if (tp_slice_set_end(p, t, s, c->ts + c->dur))
		return TP_ENOMEM;
	s->cmd_id = c->cmd;
	/* The slice's label is composed here and interned once: setting its fields one by one
	 * (tp_slice_set_name, _type, _dir, ...) would intern every intermediate combination in
	 * the track's label table, where nothing refers to it again. */
	struct tp_label lb;
	memset(&lb, 0, sizeof lb);
	lb.name = tp_profile_str(p, c->name);
	return t->kind == TP_TRACK_THREAD ? put_host(r, c, s, &lb) : put_cmd(r, c, s, &lb);
}

/* Appends to q the database ids of the tracks whose model track is of `kind` (or, with
 * `other`, of any kind but it), comma-separated; returns how many. */
static size_t put_track_ids(const struct od_reader *r, struct tp_buf *q, enum tp_track_kind kind)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ntrack_ids; i++) {
		int m = od_idmap_get(&r->track_of, r->track_ids[i]);
		if (m >= 0 && r->p->tracks[m].kind == kind)
			tp_buf_printf(q, "%s%lld", n++ ? "," : "", (long long)r->track_ids[i]);
	}
	return n;
}

/* Appends the ids of the annotation keys put_slice reads, comma-separated ("-1" when none is
 * in the database, so the list is never empty). */
static void put_key_ids(const struct od_reader *r, struct tp_buf *q, const char *const *names)
{
	size_t n = 0;
	for (size_t i = 0; i < r->key_of.n; i++) {
		const char *k = r->keys[r->key_of.vals[i]];
		for (size_t j = 0; names[j]; j++)
			if (strcmp(k, names[j]) == 0) {
				tp_buf_printf(q, "%s%lld", n++ ? "," : "",
				              (long long)r->key_of.ids[i]);
				break;
			}
	}
	if (!n)
		tp_buf_puts(q, "-1");
}

/* The query of one pass: its own tracks' slices (the layer tracks, or the others) with, of
 * their annotations, only those put_slice reads (every one for host lanes). NULL when out of
 * memory; *nlayer gets the number of layer tracks. */
static char *slice_query(const struct od_reader *r, int layers_only, size_t *nlayer)
{
	static const char *const layer_keys[] = {"Layer Id", "Layer Type", "Layer Name", NULL};
	static const char *const cmd_keys[] = {"Function Type", "Direction",  "DMA data size(B)",
	                                       "Start Cycle",   "Asic Cycle", "Stall Cycle",
	                                       "Layer Id",      NULL};
	struct tp_buf q;
	tp_buf_init(&q);
	tp_buf_puts(&q,
	            "SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.cmd_id, a.key_id,"
	            " a.type, a.int_value, a.real_value, a.string_value FROM slice s"
	            " LEFT JOIN arg_value a ON a.arg_set_id = s.arg_set_id"
	            " AND s.arg_set_id IS NOT NULL AND (");
	if (!layers_only) {
		tp_buf_puts(&q, "s.track_id IN (");
		put_track_ids(r, &q, TP_TRACK_THREAD);
		tp_buf_puts(&q, ") OR ");
	}
	tp_buf_puts(&q, "a.key_id IN (");
	put_key_ids(r, &q, layers_only ? layer_keys : cmd_keys);
	tp_buf_puts(&q, layers_only ? ")) WHERE s.track_id IN (" : ")) WHERE s.track_id NOT IN (");
	*nlayer = put_track_ids(r, &q, TP_TRACK_LAYER);
	tp_buf_puts(&q, ") ORDER BY s.id, a.id");
	tp_buf_putc(&q, 0);
	if (q.oom) {
		tp_buf_free(&q);
		return NULL;
	}
	return q.data;
}

/* Starts slice `id` from the row at st. */
static int cur_start(struct od_reader *r, struct cur *c, sqlite3_stmt *st, int64_t id)
{
	c->id = id;
	c->ts = sqlite3_column_int64(st, 1);
	c->dur = sqlite3_column_int64(st, 2);
	c->track = od_idmap_get(&r->track_of, sqlite3_column_int64(st, 3));
	int64_t cmd = sqlite3_column_int64(st, 6);
	c->cmd = cmd > 0 && cmd <= UINT32_MAX ? (uint32_t)cmd : 0;
	c->cat = dup_str(col_text(st, 4));
	c->name = dup_str(col_text(st, 5));
	return c->cat && c->name ? TP_OK : TP_ENOMEM;
}

/* Adds the row's annotation to the current slice (keys the reader does not know skipped). */
static int cur_add(struct od_reader *r, struct cur *c, sqlite3_stmt *st)
{
	if (sqlite3_column_type(st, 7) == SQLITE_NULL || c->track < 0)
		return TP_OK;
	int32_t k = od_idmap_get(&r->key_of, sqlite3_column_int64(st, 7));
	int64_t type = sqlite3_column_int64(st, 8);
	if (k < 0 || type < 0 || type > 3)
		return TP_OK;
	struct av *v = tp_grow(c->av, sizeof *v, c->nav + 1, &c->cap_av);
	if (!v)
		return TP_ENOMEM;
	c->av = v;
	struct av *a = &c->av[c->nav++];
	memset(a, 0, sizeof *a);
	a->key = r->keys[k];
	a->type = (int)type;
	a->i = sqlite3_column_int64(st, 9);
	a->d = sqlite3_column_double(st, 10);
	a->s = "";
	if (a->type == 3) {
		char **sv = tp_grow(c->strs, sizeof *sv, c->nstrs + 1, &c->cap_strs);
		if (sv)
			c->strs = sv;
		char *s = sv ? dup_str(col_text(st, 11)) : NULL;
		if (!s)
			return TP_ENOMEM;
		c->strs[c->nstrs++] = s;
		a->s = s;
	}
	return TP_OK;
}

static int load_slices(struct od_reader *r, int layers_only)
{
	size_t nlayer = 0;
	char *sql = slice_query(r, layers_only, &nlayer);
	if (!sql)
		return TP_ENOMEM;
	if (layers_only && !nlayer) {
		tp_free(sql);
		return TP_OK;
	}
	sqlite3_stmt *st;
	int rc = od_prepare(r, sql, &st), step = SQLITE_DONE;
	tp_free(sql);
	if (rc)
		return rc;
	struct cur c;
	memset(&c, 0, sizeof c);
	int have = 0;
	for (;;) {
		step = sqlite3_step(st);
		int row = step == SQLITE_ROW;
		int64_t id = row ? sqlite3_column_int64(st, 0) : 0;
		if (have && (!row || id != c.id)) {
			int is_layer = c.track >= 0 && r->p->tracks[c.track].kind == TP_TRACK_LAYER;
			if (c.track >= 0 && is_layer == layers_only)
				rc = put_slice(r, &c);
			cur_clear(&c);
			have = 0;
			if (rc)
				break;
		}
		if (!row)
			break;
		if (!have && (rc = cur_start(r, &c, st, id)))
			break;
		have = 1;
		if ((rc = cur_add(r, &c, st)))
			break;
	}
	cur_clear(&c);
	tp_free(c.strs);
	tp_free(c.av);
	sqlite3_finalize(st);
	if (rc)
		return rc;
	return step == SQLITE_DONE ? TP_OK : od_step_error(r, "reading slice", step);
}

/* ---- Driver --------------------------------------------------------------------------------- */

/* The profile's scalars from summary.json (when present). */
static void apply_summary(struct od_reader *r, const char *sjp)
{
	struct od_summary s;
	od_read_summary(sjp, &s);
	struct tp_profile *p = r->p;
	r->tiu_mhz = p->tiu_freq_mhz = s.tiu_mhz;
	r->dma_mhz = p->gdma_freq_mhz = s.dma_mhz;
	char text[256];
	if (s.have_source)
		snprintf(text, sizeof text, "tpuprof-output: %s", s.source);
	else
		snprintf(text, sizeof text, "tpuprof-output");
	p->source = tp_profile_str(p, text);
	if (s.have_arch)
		p->arch = tp_arch_from_name(s.arch);
	if (s.have_net)
		p->net_name = tp_profile_str(p, s.net_name);
}

static int read_db(struct od_reader *r, const char *dir)
{
	int rc;
	if ((rc = od_open(r)))
		return rc;
	/* Layers first, so commands can point at them by Layer Id. */
	if ((rc = load_keys(r)) || (rc = load_processes(r)) || (rc = load_tracks(r)) ||
	    (rc = load_slices(r, 1)))
		return rc;
	if ((rc = sort_layers(r)) || (rc = index_layers(r)) || (rc = load_slices(r, 0)))
		return rc;
	if (r->skipped_times &&
	    tp_profile_note(r->p,
	                    "%llu slices of profile.db not read: their times are out of range",
	                    (unsigned long long)r->skipped_times) != TP_OK)
		return TP_ENOMEM;
	if (tp_profile_note(r->p, "read back from the tpuprof output folder %s (profile.db)",
	                    dir) != TP_OK)
		return TP_ENOMEM;
	return tp_profile_finish(r->p);
}

int tp_outdir_read(const char *dir, struct tp_profile **out, struct tp_diag *d)
{
	*out = NULL;
	char *dbp = tp_path_join(dir, "profile.db"), *sjp = tp_path_join(dir, "summary.json");
	struct od_reader r;
	memset(&r, 0, sizeof r);
	r.path = dbp;
	r.d = d;
	struct stat stt;
	int rc = TP_OK;
	if (!dbp || !sjp) {
		rc = TP_ENOMEM;
	} else if (lstat(dbp, &stt) != 0) {
		rc = tp_diag_set(d, TP_EUNSUPPORTED,
		                 "%s: a tpuprof output folder without profile.db: comparing output "
		                 "folders needs the per-slice tables of profile.db (convert with "
		                 "--sqlite), or pass the inputs they were made from",
		                 dir);
	} else if (!(r.p = tp_profile_new())) {
		rc = TP_ENOMEM;
	} else {
		apply_summary(&r, sjp);
		if ((rc = read_db(&r, dir)) == TP_OK) {
			*out = r.p;
			r.p = NULL;
		}
	}
	if (rc == TP_ENOMEM)
		tp_diag_set(d, rc, "%s: out of memory", dbp ? dbp : dir);
	sqlite3_close(r.db);
	tp_profile_free(r.p);
	tp_free_each(r.keys, r.nkeys);
	od_idmap_free(&r.key_of);
	od_idmap_free(&r.dev_of);
	od_idmap_free(&r.track_of);
	tp_ixmap_free(&r.host);
	TP_FREE_ALL(r.track_ids, r.lays, r.byid, dbp, sjp);
	return rc;
}
