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
 * Owns nothing past the call; the profile is the caller's.
 */
#include "readers/outdir/outdir.h"

#include <sqlite3.h>
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

/* ---------------------------------------------------------------------------------------- */
/* summary.json: a few scalars of our own writer's fixed layout ("key":value)                */
/* ---------------------------------------------------------------------------------------- */

static char *slurp(const char *path, size_t max)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = tp_malloc(max + 1);
	size_t n = buf ? fread(buf, 1, max, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

/* The value of the first top-level-looking "key": in s: a number (*num) or a string copied
 * into str (JSON escapes other than \" and \\ kept as written). 1 if found. */
static int json_scalar(const char *s, const char *key, double *num, char *str, size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = s ? strstr(s, pat) : NULL;
	if (!p)
		return 0;
	p += strlen(pat);
	if (*p == '"') {
		if (!str)
			return 0;
		size_t n = 0;
		for (p++; *p && *p != '"' && n + 1 < cap; p++) {
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
			str[n++] = *p;
		}
		str[n] = 0;
		return 1;
	}
	if (!num)
		return 0;
	char *end;
	*num = strtod(p, &end);
	return end != p;
}

/* ---------------------------------------------------------------------------------------- */
/* profile.db                                                                                */
/* ---------------------------------------------------------------------------------------- */

struct trk {       /* one row of the track table */
	int model; /* model track index, -1 = not a slice track */
};

struct lay { /* (device, core, layer id) -> layer index, for commands' Layer Id */
	int32_t device, core, id, index;
};

struct rd {
	sqlite3 *db;
	const char *path; /* profile.db path, for messages */
	struct tp_profile *p;
	struct tp_diag *d;
	char **keys; /* arg_key id -> key without "debug." */
	size_t nkeys;
	struct trk *tracks; /* by track id */
	size_t ntracks;
	int *dev_of_upid;
	size_t nupid;
	double tiu_mhz, dma_mhz;
	struct lay *lays;
	size_t nlays, cap_lays;
	struct lay *byid; /* lays sorted by (device, core, id, index) once the layers are in time
	                     order (index_layers), for find_layer; NULL before */
	size_t nbyid;
};

static int db_err(struct rd *r, const char *what)
{
	return tp_diag_set(r->d, TP_EFORMAT, "%s: %s: %s (is it a tpuprof profile.db?)", r->path,
	                   what, sqlite3_errmsg(r->db));
}

static int prep(struct rd *r, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(r->db, sql, -1, st, NULL) != SQLITE_OK)
		return db_err(r, "cannot query");
	return TP_OK;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? (const char *)s : "";
}

static int load_keys(struct rd *r)
{
	sqlite3_stmt *st;
	int rc = prep(r, "SELECT id, key FROM arg_key ORDER BY id", &st);
	if (rc)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (id < 0 || id > 10000000) {
			sqlite3_finalize(st);
			return tp_diag_set(r->d, TP_EFORMAT, "%s: arg_key id %lld out of range",
			                   r->path, (long long)id);
		}
		if ((size_t)id >= r->nkeys) {
			size_t cap = r->nkeys;
			char **v = tp_grow(r->keys, sizeof *v, (size_t)id + 1, &cap);
			if (!v) {
				sqlite3_finalize(st);
				return TP_ENOMEM;
			}
			memset(v + r->nkeys, 0, (cap - r->nkeys) * sizeof *v);
			r->keys = v;
			r->nkeys = cap;
		}
		const char *k = col_text(st, 1);
		if (strncmp(k, "debug.", 6) == 0)
			k += 6;
		size_t n = strlen(k);
		char *c = tp_malloc(n + 1);
		if (!c) {
			sqlite3_finalize(st);
			return TP_ENOMEM;
		}
		memcpy(c, k, n + 1);
		tp_free(r->keys[id]);
		r->keys[id] = c;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? TP_OK : db_err(r, "reading arg_key");
}

static enum tp_track_kind kind_of(const char *name)
{
	for (int k = TP_TRACK_TIU; k <= TP_TRACK_LAYER; k++)
		if (strcmp(name, tp_track_kind_name((enum tp_track_kind)k)) == 0)
			return (enum tp_track_kind)k;
	return TP_TRACK_KIND_COUNT;
}

static int load_tracks(struct rd *r)
{
	struct tp_profile *p = r->p;
	sqlite3_stmt *st;
	int rc = prep(r, "SELECT upid, pid, name FROM process ORDER BY upid", &st);
	if (rc)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t upid = sqlite3_column_int64(st, 0);
		if (upid < 0 || upid > 1000000) {
			sqlite3_finalize(st);
			return tp_diag_set(r->d, TP_EFORMAT, "%s: process upid %lld out of range",
			                   r->path, (long long)upid);
		}
		if ((size_t)upid >= r->nupid) {
			size_t cap = r->nupid;
			int *v = tp_grow(r->dev_of_upid, sizeof *v, (size_t)upid + 1, &cap);
			if (!v) {
				sqlite3_finalize(st);
				return TP_ENOMEM;
			}
			for (size_t i = r->nupid; i < cap; i++)
				v[i] = -1;
			r->dev_of_upid = v;
			r->nupid = cap;
		}
		int dev = tp_profile_add_device(p, col_text(st, 2),
		                                (int32_t)sqlite3_column_int64(st, 1), 0);
		if (dev < 0) {
			sqlite3_finalize(st);
			return TP_ENOMEM;
		}
		r->dev_of_upid[upid] = dev;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(r, "reading process");

	if ((rc = prep(r, "SELECT id, name, type, upid, core FROM track ORDER BY id", &st)))
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), upid = sqlite3_column_int64(st, 3);
		const char *name = col_text(st, 1), *type = col_text(st, 2);
		if (id < 0 || id > 100000000) {
			sqlite3_finalize(st);
			return tp_diag_set(r->d, TP_EFORMAT, "%s: track id %lld out of range",
			                   r->path, (long long)id);
		}
		if ((size_t)id >= r->ntracks) {
			size_t cap = r->ntracks;
			struct trk *v = tp_grow(r->tracks, sizeof *v, (size_t)id + 1, &cap);
			if (!v) {
				sqlite3_finalize(st);
				return TP_ENOMEM;
			}
			for (size_t i = r->ntracks; i < cap; i++)
				v[i].model = -1;
			r->tracks = v;
			r->ntracks = cap;
		}
		int dev = upid >= 0 && (size_t)upid < r->nupid ? r->dev_of_upid[upid] : -1;
		if (dev < 0)
			continue;
		int is_slice = strcmp(type, "slice") == 0, is_thread = strcmp(type, "thread") == 0;
		enum tp_track_kind kind = is_slice ? kind_of(name) : TP_TRACK_KIND_COUNT;
		int core = sqlite3_column_type(st, 4) == SQLITE_NULL
		               ? -1
		               : (int)sqlite3_column_int64(st, 4);
		if (is_slice && kind != TP_TRACK_KIND_COUNT && core >= 0) {
			int t = tp_profile_find_track(p, dev, core, kind);
			double mhz = kind == TP_TRACK_TIU         ? r->tiu_mhz
			             : tp_track_kind_is_dma(kind) ? r->dma_mhz
			                                          : 0;
			if (t < 0 &&
			    (t = tp_profile_add_track(p, dev, core, kind, name, mhz)) < 0) {
				sqlite3_finalize(st);
				return TP_ENOMEM;
			}
			if (core + 1 > p->devices[dev].num_cores)
				p->devices[dev].num_cores = core + 1;
			r->tracks[id].model = t;
		} else if (is_thread || is_slice) {
			/* Host lanes: one model track per (device, name); lanes of a thread share
			 * it. */
			int t = -1;
			for (size_t k = 0; k < p->num_tracks && t < 0; k++)
				if (p->tracks[k].core < 0 && p->tracks[k].device == dev &&
				    strcmp(tp_str(p, p->tracks[k].name), name) == 0)
					t = (int)k;
			if (t < 0 &&
			    (t = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, name, 0)) < 0) {
				sqlite3_finalize(st);
				return TP_ENOMEM;
			}
			r->tracks[id].model = t;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? TP_OK : db_err(r, "reading track");
}

/* One annotation of the slice being read. */
struct av {
	const char *key;
	int type; /* 0 int, 1 uint (in int_value's bits), 2 real, 3 string */
	int64_t i;
	double d;
	const char *s;
};

static int64_t av_int(const struct av *a)
{
	return a->type == 2 ? (int64_t)a->d : a->type == 3 ? strtoll(a->s, NULL, 10) : a->i;
}

static int lay_key_cmp(const struct lay *a, int32_t dev, int32_t core, int32_t id)
{
	if (a->device != dev)
		return a->device < dev ? -1 : 1;
	if (a->core != core)
		return a->core < core ? -1 : 1;
	return a->id < id ? -1 : a->id > id;
}

static int lay_cmp(const void *x, const void *y)
{
	const struct lay *a = x, *b = y;
	int c = lay_key_cmp(a, b->device, b->core, b->id);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Sorts a copy of the layers by (device, core, id, index) for find_layer. */
static int index_layers(struct rd *r)
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

/* The layer a command names by Layer Id on its core: when an id repeats (a layer run more than
 * once), the last one in the layer table. A binary search over index_layers' copy: a linear
 * scan per command made reading a 400 k-command folder take a minute. */
struct lay_key {
	const struct lay *byid;
	int32_t device, core, id;
};

static int lay_after(const void *ctx, size_t i)
{
	const struct lay_key *k = ctx;
	return lay_key_cmp(&k->byid[i], k->device, k->core, k->id) > 0;
}

static int find_layer(const struct rd *r, int32_t dev, int32_t core, int32_t id)
{
	struct lay_key key = {r->byid, dev, core, id};
	size_t lo = tp_upper_bound(r->nbyid, lay_after, &key);
	if (lo && lay_key_cmp(&r->byid[lo - 1], dev, core, id) == 0)
		return r->byid[lo - 1].index;
	return -1;
}

/* Turns one slice row plus its annotations into the model. */
static int put_slice(struct rd *r, int track, int64_t ts, int64_t dur, const char *cat,
                     const char *name, uint32_t cmd_id, const struct av *av, size_t nav)
{
	struct tp_profile *p = r->p;
	struct tp_track *t = &p->tracks[track];
	if (dur < 0 || ts > INT64_MAX - dur)
		return TP_OK;
	if (t->kind == TP_TRACK_LAYER) {
		struct tp_layer l;
		memset(&l, 0, sizeof l);
		l.id = -1;
		l.device = t->device;
		l.core = t->core;
		l.subnet = l.group = -1;
		l.begin_ns = ts;
		l.end_ns = ts + dur;
		l.type = tp_profile_str(p, name);
		for (size_t i = 0; i < nav; i++) {
			if (strcmp(av[i].key, "Layer Id") == 0)
				l.id = (int32_t)av_int(&av[i]);
			else if (strcmp(av[i].key, "Layer Type") == 0 && av[i].type == 3)
				l.type = tp_profile_str(p, av[i].s);
			else if (strcmp(av[i].key, "Layer Name") == 0 && av[i].type == 3)
				l.name = tp_profile_str(p, av[i].s);
		}
		int ix = tp_profile_add_layer(p, &l);
		if (ix < 0)
			return TP_ENOMEM;
		struct lay *v = tp_grow(r->lays, sizeof *v, r->nlays + 1, &r->cap_lays);
		if (!v)
			return TP_ENOMEM;
		r->lays = v;
		v[r->nlays++] = (struct lay){t->device, t->core, l.id, ix};
		return TP_OK;
	}
	struct tp_slice *s = tp_track_push(p, track);
	if (!s)
		return TP_ENOMEM;
	t = &p->tracks[track];
	s->start_ns = ts;
	if (tp_slice_set_end(p, t, s, ts + dur))
		return TP_ENOMEM;
	s->cmd_id = cmd_id;
	/* The slice's label is composed here and interned once: setting its fields one by one
	 * (tp_slice_set_name, _type, _dir, ...) would intern every intermediate combination in
	 * the track's label table, where nothing refers to it again. */
	struct tp_label lb;
	memset(&lb, 0, sizeof lb);
	lb.name = tp_profile_str(p, name);
	if (t->kind == TP_TRACK_THREAD) {
		lb.type = cat[0] ? tp_profile_str(p, cat) : 0;
		if (tp_slice_set_label(p, t, s, &lb))
			return TP_ENOMEM;
		if (!nav)
			return TP_OK;
		tp_args_begin(p);
		for (size_t i = 0; i < nav; i++) {
			int rc = av[i].type == 3   ? tp_args_add_str(p, av[i].key, av[i].s)
			         : av[i].type == 2 ? tp_args_add_real(p, av[i].key, av[i].d)
			         : av[i].type == 1
			             ? tp_args_add_uint(p, av[i].key, (uint64_t)av[i].i)
			             : tp_args_add_int(p, av[i].key, av[i].i);
			if (rc)
				return rc;
		}
		s->args = tp_args_end(p);
		return TP_OK;
	}
	/* An engine command: the reference annotations back into the slice's fields. */
	const char *ftype = "";
	int64_t layer_id = -1;
	int have_layer = 0;
	uint64_t start_cycle = 0;
	for (size_t i = 0; i < nav; i++) {
		const char *k = av[i].key;
		if (strcmp(k, "Function Type") == 0 && av[i].type == 3)
			ftype = av[i].s;
		else if (strcmp(k, "Direction") == 0 && av[i].type == 3) {
			for (int dir = 1; dir < TP_DIR_COUNT; dir++)
				if (strcmp(av[i].s, tp_dir_name((enum tp_dir)dir)) == 0)
					lb.dir = (uint8_t)dir;
		} else if (strcmp(k, "DMA data size(B)") == 0)
			lb.bytes = (uint32_t)av_int(&av[i]);
		else if (strcmp(k, "Start Cycle") == 0)
			start_cycle = (uint64_t)av_int(&av[i]);
		else if (strcmp(k, "Asic Cycle") == 0)
			s->cycles = (uint32_t)av_int(&av[i]);
		else if (strcmp(k, "Stall Cycle") == 0)
			lb.stall = (uint32_t)av_int(&av[i]);
		else if (strcmp(k, "Layer Id") == 0) {
			layer_id = av_int(&av[i]);
			have_layer = 1;
		}
	}
	lb.type = ftype[0] ? tp_profile_str(p, ftype) : 0;
	if (strncmp(ftype, "SYS", 3) == 0 || strcmp(ftype, "DMA_sys") == 0)
		lb.kind = strstr(name, "wait_msg")   ? TP_CMD_SYS_WAIT
		          : strstr(name, "send_msg") ? TP_CMD_SYS_SEND
		                                     : TP_CMD_SYS;
	s->start_cycle_lo = (uint32_t)start_cycle;
	lb.cycle_hi = (uint32_t)(start_cycle >> 32);
	if (tp_slice_set_label(p, t, s, &lb))
		return TP_ENOMEM;
	if (have_layer)
		s->layer = find_layer(r, t->device, t->core, (int32_t)layer_id);
	return TP_OK;
}

/* Appends to q the database ids of the tracks whose model track is of `kind`,
 * comma-separated; returns how many. */
static size_t put_track_ids(const struct rd *r, struct tp_buf *q, enum tp_track_kind kind)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ntracks; i++) {
		int m = r->tracks[i].model;
		if (m >= 0 && r->p->tracks[m].kind == kind)
			tp_buf_printf(q, "%s%zu", n++ ? "," : "", i);
	}
	return n;
}

/* Appends the ids of the annotation keys put_slice reads, comma-separated ("-1" when none is
 * in the database, so the list is never empty). */
static void put_key_ids(const struct rd *r, struct tp_buf *q, const char *const *names)
{
	size_t n = 0;
	for (size_t k = 0; k < r->nkeys; k++)
		for (size_t j = 0; r->keys[k] && names[j]; j++)
			if (strcmp(r->keys[k], names[j]) == 0) {
				tp_buf_printf(q, "%s%zu", n++ ? "," : "", k);
				break;
			}
	if (!n)
		tp_buf_puts(q, "-1");
}

static int load_slices(struct rd *r, int layers_only)
{
	/* Each pass reads only its own tracks' slices (the layer tracks, or the others), and of
	 * their annotations only those put_slice reads (every one for captured threads): the
	 * layer pass of a 400 k-command folder otherwise walked all 5.5 M annotation rows to keep
	 * a fifth of the slices, and an engine command has ~10 annotations of which 7 are read.
	 * Track and key ids are the database's own integers. */
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
	size_t nlayer = put_track_ids(r, &q, TP_TRACK_LAYER);
	tp_buf_puts(&q, ") ORDER BY s.id, a.id");
	tp_buf_putc(&q, 0);
	if (q.oom) {
		tp_buf_free(&q);
		return TP_ENOMEM;
	}
	if (layers_only && !nlayer) {
		tp_buf_free(&q);
		return TP_OK;
	}
	sqlite3_stmt *st;
	int rc = prep(r, q.data, &st);
	tp_buf_free(&q);
	if (rc)
		return rc;
	struct av *av = NULL;
	size_t nav = 0, cap = 0;
	char *cat = NULL, *name = NULL;
	int64_t cur = INT64_MIN, ts = 0, dur = 0;
	uint32_t cmd = 0;
	int track = -1, err = TP_OK;
	/* Strings of the current slice's annotations, freed per slice. */
	char **strs = NULL;
	size_t nstrs = 0, cap_strs = 0;
	for (;;) {
		rc = sqlite3_step(st);
		int row = rc == SQLITE_ROW;
		int64_t id = row ? sqlite3_column_int64(st, 0) : INT64_MIN;
		if (cur != INT64_MIN && (!row || id != cur)) {
			int is_layer = track >= 0 && r->p->tracks[track].kind == TP_TRACK_LAYER;
			if (track >= 0 && is_layer == layers_only)
				err = put_slice(r, track, ts, dur, cat ? cat : "", name ? name : "",
				                cmd, av, nav);
			nav = 0;
			for (size_t i = 0; i < nstrs; i++)
				tp_free(strs[i]);
			nstrs = 0;
			tp_free(cat);
			tp_free(name);
			cat = name = NULL;
			if (err)
				break;
		}
		if (!row)
			break;
		if (id != cur) {
			cur = id;
			ts = sqlite3_column_int64(st, 1);
			dur = sqlite3_column_int64(st, 2);
			int64_t tid = sqlite3_column_int64(st, 3);
			track = tid >= 0 && (size_t)tid < r->ntracks ? r->tracks[tid].model : -1;
			int64_t c = sqlite3_column_int64(st, 6);
			cmd = c > 0 && c <= UINT32_MAX ? (uint32_t)c : 0;
			const char *cs = col_text(st, 4), *ns = col_text(st, 5);
			cat = tp_malloc(strlen(cs) + 1);
			name = tp_malloc(strlen(ns) + 1);
			if (!cat || !name) {
				err = TP_ENOMEM;
				break;
			}
			memcpy(cat, cs, strlen(cs) + 1);
			memcpy(name, ns, strlen(ns) + 1);
		}
		if (sqlite3_column_type(st, 7) == SQLITE_NULL || track < 0)
			continue;
		int64_t kid = sqlite3_column_int64(st, 7);
		if (kid < 0 || (size_t)kid >= r->nkeys || !r->keys[kid])
			continue;
		struct av *v = tp_grow(av, sizeof *v, nav + 1, &cap);
		if (!v) {
			err = TP_ENOMEM;
			break;
		}
		av = v;
		struct av *a = &av[nav++];
		memset(a, 0, sizeof *a);
		a->key = r->keys[kid];
		a->type = (int)sqlite3_column_int64(st, 8);
		a->i = sqlite3_column_int64(st, 9);
		a->d = sqlite3_column_double(st, 10);
		a->s = "";
		if (a->type == 3) {
			const char *s = col_text(st, 11);
			char **sv = tp_grow(strs, sizeof *sv, nstrs + 1, &cap_strs);
			char *c = sv ? tp_malloc(strlen(s) + 1) : NULL;
			if (sv)
				strs = sv;
			if (!c) {
				err = TP_ENOMEM;
				break;
			}
			memcpy(c, s, strlen(s) + 1);
			strs[nstrs++] = c;
			a->s = c;
		}
	}
	for (size_t i = 0; i < nstrs; i++)
		tp_free(strs[i]);
	tp_free(strs);
	tp_free(av);
	tp_free(cat);
	tp_free(name);
	sqlite3_finalize(st);
	if (err)
		return err;
	return rc == SQLITE_DONE ? TP_OK : db_err(r, "reading slice");
}

static int layer_cmp(const void *x, const void *y)
{
	const struct tp_layer *a = x, *b = y;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->core != b->core)
		return a->core < b->core ? -1 : 1;
	if (a->begin_ns != b->begin_ns)
		return a->begin_ns < b->begin_ns ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The database holds a core's layers lane by lane; the layer table wants them in time order
 * (the diff's fallback key counts a layer's position among its core's layers of its type). */
static int sort_layers(struct rd *r)
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
		r->lays[i] = (struct lay){all[i].device, all[i].core, all[i].id, (int32_t)i};
	r->nlays = p->num_layers < r->nlays ? p->num_layers : r->nlays;
	tp_free(all);
	return st;
}

int tp_outdir_read(const char *dir, struct tp_profile **out, struct tp_diag *d)
{
	*out = NULL;
	char *dbp = tp_path_join(dir, "profile.db"), *sjp = tp_path_join(dir, "summary.json");
	if (!dbp || !sjp) {
		tp_free(dbp);
		tp_free(sjp);
		return TP_ENOMEM;
	}
	struct stat stt;
	if (stat(dbp, &stt) != 0) {
		int rc =
		    tp_diag_set(d, TP_EUNSUPPORTED,
		                "%s: a tpuprof output folder without profile.db: comparing output "
		                "folders needs the per-slice tables of profile.db (convert with "
		                "--sqlite), or pass the inputs they were made from",
		                dir);
		tp_free(dbp);
		tp_free(sjp);
		return rc;
	}
	struct rd r;
	memset(&r, 0, sizeof r);
	r.path = dbp;
	r.d = d;
	int rc = TP_OK;
	char *sj = slurp(sjp, 1 << 16); /* the scalars sit at the top of summary.json */
	char text[256];
	double v;
	if (!(r.p = tp_profile_new())) {
		rc = TP_ENOMEM;
		goto out;
	}
	r.tiu_mhz = json_scalar(sj, "tiu_freq_mhz", &v, NULL, 0) && v > 0 ? v : 0;
	r.dma_mhz = json_scalar(sj, "gdma_freq_mhz", &v, NULL, 0) && v > 0 ? v : 0;
	r.p->tiu_freq_mhz = r.tiu_mhz;
	r.p->gdma_freq_mhz = r.dma_mhz;
	char src[200];
	if (json_scalar(sj, "source", NULL, src, sizeof src))
		snprintf(text, sizeof text, "tpuprof-output: %s", src);
	else
		snprintf(text, sizeof text, "tpuprof-output");
	r.p->source = tp_profile_str(r.p, text);
	if (json_scalar(sj, "arch", NULL, text, sizeof text))
		r.p->arch = tp_arch_from_name(text);
	if (json_scalar(sj, "net_name", NULL, text, sizeof text))
		r.p->net_name = tp_profile_str(r.p, text);
	/* One thread uses the connection: no mutex around every column read (a tenth of the
	 * read-back's time). */
	if (sqlite3_open_v2(dbp, &r.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		rc = db_err(&r, "cannot open");
		goto out;
	}
	/* Layers first, so commands can point at them by Layer Id. */
	if ((rc = load_keys(&r)) || (rc = load_tracks(&r)) || (rc = load_slices(&r, 1)))
		goto out;
	if ((rc = sort_layers(&r)) || (rc = index_layers(&r)) || (rc = load_slices(&r, 0)))
		goto out;
	tp_profile_note(r.p, "read back from the tpuprof output folder %s (profile.db)", dir);
	if ((rc = tp_profile_finish(r.p)))
		goto out;
	*out = r.p;
	r.p = NULL;
out:
	if (rc == TP_ENOMEM)
		tp_diag_set(d, rc, "%s: out of memory", dbp);
	sqlite3_close(r.db);
	tp_profile_free(r.p);
	for (size_t i = 0; i < r.nkeys; i++)
		tp_free(r.keys[i]);
	tp_free(r.keys);
	tp_free(r.tracks);
	tp_free(r.dev_of_upid);
	tp_free(r.lays);
	tp_free(r.byid);
	tp_free(sj);
	tp_free(dbp);
	tp_free(sjp);
	return rc;
}
