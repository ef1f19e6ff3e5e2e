/*
 * sg_layers.c — layer information of a Sophgo dump from the compiler's side files
 * tensor_location.json and final.mlir (sophgo-cdm.md §9, sophgo-bmprofile.md §8.3), for every
 * Sophgo reader: one tp_layer per JSON entry (id = file-line, type = opcode without "tpu.",
 * name = the op's MLIR loc name from final.mlir, else its first result's name; group from the
 * final.mlir Group/Yield ranges), its operands and results as tp_tensors (shape, dtype,
 * DDR address or local-memory offset, slice sizes), and the join to the commands exactly as
 * the vendor's PerfAI does: the entry owns TIU cmd ids before[0]+1 .. after[0] and DMA cmd ids
 * before[1]+1 .. after[1] on core_id (Cmd Id = PMU inst_id + 1); a (cmd id, core) claimed twice
 * stays with the first entry (the vendor asserts it never happens) and is counted in a note.
 *
 * tensor_location.json format: a JSON array of objects
 *   {"file-line": int, "subnet_id": int, "core_id": int, "opcode": "tpu.<Op>",
 *    "is_local": bool, "tiu_dma_id(before)": [tiu, dma], "tiu_dma_id(after)": [tiu, dma],
 *    "operands": [tensor...], "results": [tensor...], "buffers": [...]}
 *   tensor = {"address": int, "layout": str, "memory_type": "<1x3x46x128xf32>", "name": str,
 *             "reshape": str, "shape": [int...], "slice": "[0:1, 0:3, 0:1, 0:46, 0:128]",
 *             "type": "tensor<1x3x128x128xf32[, <ddr address> : i64]>"}   ({} = none)
 * Both files are side files: nothing here fails a conversion except out of
 * memory. A file that cannot be read or parsed is skipped with one note naming `path:LINE`;
 * entries without their id pair are skipped and counted; unknown keys are ignored; numbers
 * outside ±2^53 are treated as absent (never cast unchecked). Owns: struct sg_layers.
 */
#include "readers/sophgo/sg_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Loading.                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* The bytes around a parse error, printable and bounded by the buffer (never past its end). */
static void excerpt(const uint8_t *data, size_t size, size_t at, char *out, size_t outn)
{
	size_t k = 0;
	for (size_t i = at; i < size && i < at + 20 && k + 5 < outn; i++) {
		unsigned char c = data[i];
		if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\')
			out[k++] = (char)c;
		else
			k += (size_t)snprintf(out + k, outn - k, "\\x%02x", c);
	}
	out[k] = 0;
}

int sg_layers_parse_json(struct tp_profile *p, const uint8_t *data, size_t size, const char *path,
                         struct sg_layers *L)
{
	const char *end = NULL;
	/* ParseWithLengthOpts reports the error position through `end` instead of the global
	 * cJSON_GetErrorPtr, and never reads past size (a mapping is not NUL-terminated). The
	 * excerpt is taken from the caller's buffer, which is still valid here. */
	cJSON *root = cJSON_ParseWithLengthOpts((const char *)data, size, &end, 0);
	if (!root) {
		if (p->oom)
			return TP_ENOMEM;
		size_t at = end && end >= (const char *)data && end <= (const char *)data + size
		                ? (size_t)(end - (const char *)data)
		                : 0;
		unsigned long line = 1;
		for (size_t i = 0; i < at; i++)
			line += data[i] == '\n';
		char near[128];
		excerpt(data, size, at, near, sizeof near);
		tp_profile_note(p,
		                "%s:%lu: not valid JSON (near \"%s\"); layer information from it "
		                "skipped",
		                path, line, near);
		return TP_OK;
	}
	if (!cJSON_IsArray(root)) {
		cJSON_Delete(root);
		tp_profile_note(
		    p,
		    "%s:1: not a JSON array of layer entries; layer information from it "
		    "skipped",
		    path);
		return TP_OK;
	}
	cJSON_Delete((cJSON *)L->json);
	L->json = root;
	return TP_OK;
}

/* Parses side file f (read from path) into L. TP_OK or an error status. */
typedef int (*side_parse_fn)(struct tp_profile *p, const struct tp_file *f, const char *path,
                             struct sg_layers *L);

/* Loads side file `path` and parses it with `parse`. A file that cannot be read is a note
 * "<why>; <what> skipped"; only out of memory is an error then. */
static int load_side(struct tp_profile *p, const char *path, const char *what, side_parse_fn parse,
                     struct sg_layers *L)
{
	struct tp_diag d = {0};
	struct tp_file f;
	if (tp_file_load(&f, path, &d) != TP_OK) {
		if (d.status == TP_ENOMEM)
			return TP_ENOMEM;
		tp_profile_note(p, "%s; %s skipped", d.msg, what);
		return TP_OK;
	}
	p->stats.files_read++;
	int rc = parse(p, &f, path, L);
	tp_file_release(&f);
	return rc;
}

static int parse_json(struct tp_profile *p, const struct tp_file *f, const char *path,
                      struct sg_layers *L)
{
	return sg_layers_parse_json(p, f->data, f->size, path, L);
}

static int parse_mlir(struct tp_profile *p, const struct tp_file *f, const char *path,
                      struct sg_layers *L)
{
	int rc = sg_mlir_parse((const char *)f->data, f->size, &L->mlir);
	if (rc != TP_OK)
		return rc;
	L->have_mlir = 1;
	if (L->mlir.bad_lines)
		tp_profile_note(p,
		                "%s:%lu: unreadable loc() or alias line; %lu such line(s) skipped",
		                path, L->mlir.first_bad_line, L->mlir.bad_lines);
	char buf[64];
	if (L->mlir.have_flops) {
		snprintf(buf, sizeof buf, "%lld", (long long)L->mlir.flops);
		if (tp_profile_set_meta(p, "mlir_flops", buf) != TP_OK)
			return TP_ENOMEM;
	}
	if (L->mlir.chip[0] && tp_profile_set_meta(p, "mlir_chip", L->mlir.chip) != TP_OK)
		return TP_ENOMEM;
	if (L->mlir.mode[0] && tp_profile_set_meta(p, "mlir_mode", L->mlir.mode) != TP_OK)
		return TP_ENOMEM;
	return TP_OK;
}

int sg_layers_load(struct tp_profile *p, const char *json_path, const char *mlir_path,
                   struct sg_layers *L)
{
	memset(L, 0, sizeof *L);
	int rc = TP_OK;
	if (json_path)
		rc = load_side(p, json_path, "layer information", parse_json, L);
	if (rc == TP_OK && mlir_path)
		rc = load_side(p, mlir_path, "MLIR layer names", parse_mlir, L);
	if (rc != TP_OK)
		sg_layers_free(L);
	return rc;
}

void sg_layers_free(struct sg_layers *L)
{
	cJSON_Delete((cJSON *)L->json);
	if (L->have_mlir)
		sg_mlir_free(&L->mlir);
	memset(L, 0, sizeof *L);
}

/* ---------------------------------------------------------------------------------------- */
/* Entries -> layers and tensors.                                                           */
/* ---------------------------------------------------------------------------------------- */

/* A JSON number (or bool) that fits an int64 exactly; 0 if absent, not a number or out of
 * ±2^53 (no unchecked double -> int64 cast). */
static int num_of(const cJSON *v, int64_t *out)
{
	if (cJSON_IsBool(v)) {
		*out = cJSON_IsTrue(v);
		return 1;
	}
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
	    fabs(v->valuedouble) > 9007199254740992.0)
		return 0;
	*out = (int64_t)v->valuedouble;
	return 1;
}

static int json_int(const cJSON *o, const char *key, int64_t *out)
{
	return num_of(cJSON_GetObjectItemCaseSensitive(o, key), out);
}

static int json_pair(const cJSON *o, const char *key, int64_t *a, int64_t *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 2)
		return 0;
	return num_of(cJSON_GetArrayItem(v, 0), a) && num_of(cJSON_GetArrayItem(v, 1), b);
}

static const char *json_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* MLIR element type -> tp_dtype ("f32", "bf16", "si8", "ui8", "i32", ...). */
static uint8_t mlir_dtype(const char *s, size_t n)
{
	static const struct {
		const char *k;
		uint8_t t;
	} m[] = {{"f32", TP_DT_FP32},  {"f16", TP_DT_FP16},     {"bf16", TP_DT_BF16},
	         {"i8", TP_DT_INT8},   {"si8", TP_DT_INT8},     {"ui8", TP_DT_UINT8},
	         {"i16", TP_DT_INT16}, {"si16", TP_DT_INT16},   {"ui16", TP_DT_UINT16},
	         {"i32", TP_DT_INT32}, {"si32", TP_DT_INT32},   {"ui32", TP_DT_UINT32},
	         {"i64", TP_DT_INT64}, {"si64", TP_DT_INT64},   {"f64", TP_DT_FP64},
	         {"i4", TP_DT_INT4},   {"si4", TP_DT_INT4},     {"ui4", TP_DT_INT4},
	         {"i1", TP_DT_BOOL},   {"f8E4M3FN", TP_DT_FP8}, {"f8E5M2", TP_DT_FP8}};
	for (size_t i = 0; i < sizeof m / sizeof *m; i++)
		if (strlen(m[i].k) == n && !memcmp(m[i].k, s, n))
			return m[i].t;
	return TP_DT_NONE;
}

/* Element type of "<1x3x46x128xf32>" or "tensor<1x3x128x128xf32, 123 : i64>": the token after
 * the last 'x' of the dims, up to '>' or ','. */
static uint8_t type_dtype(const char *s)
{
	if (!s)
		return TP_DT_NONE;
	const char *lt = strchr(s, '<');
	if (!lt)
		return TP_DT_NONE;
	const char *e = lt + 1;
	while (*e && *e != '>' && *e != ',')
		e++;
	const char *b = e;
	while (b > lt + 1 && b[-1] != 'x')
		b--;
	return mlir_dtype(b, (size_t)(e - b));
}

/* Dims of "<1x3x46x128xf32>"; returns ndim. */
static unsigned type_dims(const char *s, int64_t *dims)
{
	const char *p = s ? strchr(s, '<') : NULL;
	unsigned nd = 0;
	if (!p)
		return 0;
	p++;
	while (nd < TP_MAX_DIMS && *p >= '0' && *p <= '9') {
		int64_t v = 0;
		while (*p >= '0' && *p <= '9' && v < ((int64_t)1 << 48))
			v = v * 10 + (*p++ - '0');
		if (*p != 'x')
			break;
		dims[nd++] = v;
		p++;
	}
	return nd;
}

/* Sizes of the ranges of "[0:1, 0:3, 0:1, 0:46, 0:128]"; returns how many. */
static unsigned slice_sizes(const char *s, int64_t *sz, unsigned max)
{
	unsigned k = 0;
	if (!s)
		return 0;
	while (*s && k < max) {
		char *e;
		long long a = strtoll(s, &e, 10);
		if (e == s || *e != ':') {
			s++;
			continue;
		}
		s = e + 1;
		long long b = strtoll(s, &e, 10);
		if (e == s)
			break;
		sz[k++] = b > a ? b - a : 0;
		s = e;
	}
	return k;
}

/* The file-line of the entry whose result has name id `nm`: a sorted (name, line) table. */
struct producer {
	uint32_t name;
	int32_t line;
};
static int cmp_prod(const void *a, const void *b)
{
	const struct producer *x = a, *y = b;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int add_tensor(struct tp_profile *p, const cJSON *t, int is_in, int32_t layer, int32_t line,
                      const struct producer *prod, size_t nprod)
{
	if (!cJSON_IsObject(t) || !t->child)
		return 0; /* {} = no tensor (e.g. a `none` operand) */
	struct tp_tensor tt = {0};
	tt.layer = layer;
	tt.is_in = (uint8_t)is_in;
	tt.id = is_in ? -1 : line;
	const char *name = json_str(t, "name");
	if (is_in && name && nprod) {
		uint32_t id = tp_profile_find_str(p, name);
		struct producer key = {.name = id}, *hit;
		if (id && (hit = bsearch(&key, prod, nprod, sizeof *prod, cmp_prod)) != NULL)
			tt.id = hit->line;
	}
	const char *type = json_str(t, "type"), *mem = json_str(t, "memory_type");
	tt.dtype = type_dtype(mem);
	if (!tt.dtype)
		tt.dtype = type_dtype(type);
	const cJSON *sh = cJSON_GetObjectItemCaseSensitive(t, "shape");
	if (cJSON_IsArray(sh)) {
		const cJSON *v;
		cJSON_ArrayForEach(v, sh)
		{
			int64_t x;
			if (tt.ndim >= TP_MAX_DIMS || !num_of(v, &x) || x < 0)
				break;
			tt.shape[tt.ndim++] = x;
		}
	} else {
		tt.ndim = (uint8_t)type_dims(mem ? mem : type, tt.shape);
	}
	int64_t addr = 0;
	json_int(t, "address", &addr);
	/* A global tensor's type carries its DDR address ("..., 2201171394560 : i64>"). */
	if (type && strstr(type, " : i64>") && addr > 0)
		tt.gaddr = (uint64_t)addr;
	else if (addr > 0)
		tt.loffset = (uint64_t)addr;
	int64_t sz[5];
	unsigned ns = slice_sizes(json_str(t, "slice"), sz, 5);
	if (ns >= 4 && !tt.gaddr) {
		tt.nslice = (uint32_t)(sz[0] > UINT32_MAX ? UINT32_MAX : sz[0]);
		int64_t h = sz[ns == 5 ? 3 : 2];
		tt.hslice = (uint32_t)(h > UINT32_MAX ? UINT32_MAX : h);
	}
	return tp_profile_add_tensor(p, &tt) < 0 ? -1 : 1;
}

/* The join of one (core, engine) track. The layers' id ranges come from the JSON and the
 * slices' ids from the PMU records, so neither may size an array: the ranges are cut into
 * elementary segments at their bounds (at most two per layer), each segment owned by the
 * first layer that claims it, and a slice finds its segment by binary search. */
struct claims {
	uint64_t *bound; /* sorted distinct segment bounds; segment i = [bound[i], bound[i+1]) */
	int32_t *owner;  /* layer of segment i, -1 none */
	uint32_t *next;  /* first unowned segment at or after i (path-compressed) */
	size_t nbound;
};

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Index of bound v (present by construction). */
static size_t bound_at(const struct claims *c, uint64_t v)
{
	size_t lo = 0, hi = c->nbound;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->bound[mid] <= v)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t next_free(struct claims *c, uint32_t i)
{
	while (c->next[i] != i) {
		c->next[i] = c->next[c->next[i]];
		i = c->next[i];
	}
	return i;
}

/* The range [lo, hi] of layer L: it owns the segments no earlier layer owns; the ids it
 * claims that an earlier layer already owns are counted in *dups. */
static void claim(struct claims *c, uint32_t lo, uint32_t hi, int32_t L, uint64_t *dups)
{
	uint32_t first = (uint32_t)bound_at(c, lo), end = (uint32_t)bound_at(c, (uint64_t)hi + 1);
	uint64_t fresh = 0;
	for (uint32_t i = next_free(c, first); i < end; i = next_free(c, i)) {
		c->owner[i] = L;
		fresh += c->bound[i + 1] - c->bound[i];
		c->next[i] = i + 1;
	}
	*dups += (uint64_t)hi - lo + 1 - fresh;
}

/* The range of layer L on this track clipped to [1, maxid]; 0 when it claims nothing here. */
static int layer_range(struct tp_profile *p, size_t L, int32_t core, int tiu, uint32_t maxid,
                       uint32_t *lo, uint32_t *hi)
{
	struct tp_layer lyv;
	const struct tp_layer *ly = tp_profile_layer(p, L, &lyv);
	if (ly->core != core)
		return 0;
	*lo = tiu ? ly->tiu_first : ly->gdma_first;
	*hi = tiu ? ly->tiu_last : ly->gdma_last;
	if (*hi > maxid)
		*hi = maxid;
	return *lo && *lo <= *hi;
}

/* Builds the segments of the layers [first_layer, num_layers) on this track. TP_OK or
 * TP_ENOMEM; c is empty (nbound 0) when no layer claims an id here. */
static int claims_build(struct tp_profile *p, int32_t core, int tiu, size_t first_layer,
                        uint32_t maxid, struct claims *c, uint64_t *dups)
{
	size_t n = 0;
	uint32_t lo, hi;
	for (size_t L = first_layer; L < p->num_layers; L++)
		n += (size_t)layer_range(p, L, core, tiu, maxid, &lo, &hi);
	if (!n)
		return TP_OK;
	c->bound = tp_malloc(2 * n * sizeof *c->bound);
	c->owner = tp_malloc(2 * n * sizeof *c->owner);
	c->next = tp_malloc(2 * n * sizeof *c->next);
	if (!c->bound || !c->owner || !c->next)
		return TP_ENOMEM;
	for (size_t L = first_layer; L < p->num_layers; L++)
		if (layer_range(p, L, core, tiu, maxid, &lo, &hi)) {
			c->bound[c->nbound++] = lo;
			c->bound[c->nbound++] = (uint64_t)hi + 1;
		}
	qsort(c->bound, c->nbound, sizeof *c->bound, cmp_u64);
	size_t k = 1;
	for (size_t i = 1; i < c->nbound; i++)
		if (c->bound[i] != c->bound[k - 1])
			c->bound[k++] = c->bound[i];
	c->nbound = k;
	for (size_t i = 0; i < k; i++) {
		c->owner[i] = -1;
		c->next[i] = (uint32_t)i;
	}
	for (size_t L = first_layer; L < p->num_layers; L++)
		if (layer_range(p, L, core, tiu, maxid, &lo, &hi))
			claim(c, lo, hi, (int32_t)L, dups);
	return TP_OK;
}

/* The layer owning cmd id `id`, -1 none. *seg is the last segment found (slices mostly come
 * in id order, so it is tried first). */
static int32_t owner_of(const struct claims *c, uint32_t id, size_t *seg)
{
	if (c->nbound < 2 || id < c->bound[0] || id >= c->bound[c->nbound - 1])
		return -1;
	if (!(c->bound[*seg] <= id && id < c->bound[*seg + 1]))
		*seg = bound_at(c, id);
	return c->owner[*seg];
}

/* Gives the layers of one (core, engine) track their commands, and the commands their layer. */
static int join_track(struct tp_profile *p, int track, int32_t core, int tiu, size_t first_layer,
                      uint32_t skip_type, uint64_t *dups)
{
	if (track < 0)
		return TP_OK;
	struct tp_track *t = &p->tracks[track];
	uint32_t maxid = 0;
	for (size_t i = 0; i < t->count; i++)
		if (t->slices[i].cmd_id > maxid)
			maxid = t->slices[i].cmd_id;
	if (!maxid)
		return TP_OK;
	struct claims c = {0};
	int rc = claims_build(p, core, tiu, first_layer, maxid, &c, dups);
	size_t seg = 0;
	for (size_t i = 0; rc == TP_OK && c.nbound && i < t->count; i++) {
		struct tp_slice *s = &t->slices[i];
		int32_t L = owner_of(&c, s->cmd_id, &seg);
		if (L < 0 || (skip_type && tp_slice_type(t, s) == skip_type))
			continue;
		s->layer = L;
		rc = tp_profile_layer_touch(p, (size_t)L, s->start_ns, tp_slice_end(t, s), tiu, 0);
	}
	tp_free(c.bound);
	tp_free(c.owner);
	tp_free(c.next);
	return rc == TP_OK ? TP_OK : TP_ENOMEM;
}

/* Producers of named results, for operand tensor ids: sorted by name into *out (caller
 * frees). */
static int collect_producers(struct tp_profile *p, const cJSON *root, struct producer **out,
                             size_t *nout)
{
	struct producer *prod = NULL;
	size_t nprod = 0, cap = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, root)
	{
		int64_t line;
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(e, "results"), *r;
		if (!json_int(e, "file-line", &line) || line < 0 || line > INT32_MAX ||
		    !cJSON_IsArray(res))
			continue;
		cJSON_ArrayForEach(r, res)
		{
			const char *nm = json_str(r, "name");
			if (!nm)
				continue;
			struct producer *np = tp_grow(prod, sizeof *prod, nprod + 1, &cap);
			if (!np) {
				tp_free(prod);
				return TP_ENOMEM;
			}
			prod = np;
			prod[nprod++] = (struct producer){tp_profile_str(p, nm), (int32_t)line};
		}
	}
	if (nprod)
		qsort(prod, nprod, sizeof *prod, cmp_prod);
	*out = prod;
	*nout = nprod;
	return TP_OK;
}

/* The layer of entry e (with its tiu_dma_id pairs tb/ta, db/da), its name from final.mlir
 * where it has one. */
static struct tp_layer entry_layer(struct tp_profile *p, const cJSON *e, const struct sg_mlir *m,
                                   int64_t tb, int64_t ta, int64_t db, int64_t da)
{
	int64_t line = -1, core = 0, subnet = -1, loc = 0;
	json_int(e, "file-line", &line);
	json_int(e, "core_id", &core);
	json_int(e, "subnet_id", &subnet);
	json_int(e, "is_local", &loc);
	if (line < -1 || line > INT32_MAX)
		line = -1;
	if (core < 0) /* kept (as core 0 does not claim it: it owns no command) */
		core = INT32_MAX;
	if (core > INT32_MAX)
		core = INT32_MAX;
	if (subnet < -1 || subnet > INT32_MAX)
		subnet = -1;
	const char *opname = json_str(e, "opcode");
	if (!opname)
		opname = "";
	if (strncmp(opname, "tpu.", 4) == 0)
		opname += 4;
	struct tp_layer ly = {0};
	ly.id = (int32_t)line;
	ly.type = tp_profile_str(p, opname);
	const char *nm = m && line > 0 ? sg_mlir_name(m, (uint32_t)line) : NULL;
	if (!nm || !*nm) {
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(e, "results");
		const cJSON *r0 = cJSON_IsArray(res) ? cJSON_GetArrayItem(res, 0) : NULL;
		nm = r0 ? json_str(r0, "name") : NULL;
	}
	ly.name = tp_profile_str(p, nm ? nm : "");
	ly.core = (int32_t)core;
	ly.subnet = (int32_t)subnet;
	ly.group = m && line > 0 ? sg_mlir_group_of(m, (uint32_t)line) : -1;
	ly.is_local = loc != 0;
	ly.is_data_move = !strcmp(opname, "Load") || !strcmp(opname, "Store");
	/* The vendor's ranges: range(before + 1, after + 1) per engine. */
	if (ta > tb && tb >= 0 && ta <= UINT32_MAX) {
		ly.tiu_first = (uint32_t)tb + 1;
		ly.tiu_last = (uint32_t)ta;
	}
	if (da > db && db >= 0 && da <= UINT32_MAX) {
		ly.gdma_first = (uint32_t)db + 1;
		ly.gdma_last = (uint32_t)da;
	}
	ly.begin_ns = 0;
	ly.end_ns = -1;
	ly.first_tensor = (uint32_t)p->num_tensors;
	return ly;
}

/* Entry e's operand and result tensors for layer li (ly, as added). */
static int entry_tensors(struct tp_profile *p, const cJSON *e, int li, struct tp_layer *ly,
                         const struct producer *prod, size_t nprod)
{
	static const char *const lists[2] = {"operands", "results"};
	uint32_t nt = 0;
	for (int k = 0; k < 2; k++) {
		const cJSON *arr = cJSON_GetObjectItemCaseSensitive(e, lists[k]), *t;
		if (!cJSON_IsArray(arr))
			continue;
		cJSON_ArrayForEach(t, arr)
		{
			int a = add_tensor(p, t, k == 0, li, ly->id, prod, nprod);
			if (a < 0)
				return TP_ENOMEM;
			nt += (uint32_t)a;
		}
	}
	if (nt) {
		ly->num_tensors = nt;
		if (tp_profile_set_layer(p, (size_t)li, ly) != TP_OK)
			return TP_ENOMEM;
	}
	return TP_OK;
}

int sg_layers_apply(struct tp_profile *p, const struct sg_layers *L, const char *json_path,
                    const int *tiu_track, const int *gdma_track, unsigned ncores, int tensors,
                    uint32_t skip_type)
{
	const cJSON *root = L->json;
	if (!root)
		return TP_OK;
	const struct sg_mlir *m = L->have_mlir ? &L->mlir : NULL;
	size_t base = p->num_layers;
	uint64_t skipped = 0, first_skip = 0, idx = 0, dups = 0;
	struct producer *prod = NULL;
	size_t nprod = 0;
	if (tensors && collect_producers(p, root, &prod, &nprod) != TP_OK)
		return TP_ENOMEM;
	int rc = TP_OK;
	const cJSON *e;
	cJSON_ArrayForEach(e, root)
	{
		idx++;
		int64_t tb = 0, db = 0, ta = 0, da = 0;
		if (!cJSON_IsObject(e) || !json_pair(e, "tiu_dma_id(before)", &tb, &db) ||
		    !json_pair(e, "tiu_dma_id(after)", &ta, &da)) {
			if (!skipped++)
				first_skip = idx;
			continue;
		}
		struct tp_layer ly = entry_layer(p, e, m, tb, ta, db, da);
		int li = tp_profile_add_layer(p, &ly);
		if (li < 0) {
			rc = TP_ENOMEM;
			break;
		}
		if (tensors && (rc = entry_tensors(p, e, li, &ly, prod, nprod)) != TP_OK)
			break;
	}
	tp_free(prod);
	if (rc != TP_OK)
		return rc;
	if (skipped)
		tp_profile_note(p,
		                "%s: %llu entr%s without a tiu_dma_id(before)/(after) pair skipped "
		                "(first: entry %llu)",
		                json_path, (unsigned long long)skipped, skipped == 1 ? "y" : "ies",
		                (unsigned long long)first_skip);
	for (unsigned k = 0; k < ncores; k++) {
		if ((rc = join_track(p, tiu_track[k], (int32_t)k, 1, base, skip_type, &dups)) !=
		        TP_OK ||
		    (rc = join_track(p, gdma_track[k], (int32_t)k, 0, base, skip_type, &dups)) !=
		        TP_OK)
			return rc;
	}
	if (dups)
		tp_profile_note(p,
		                "%s: %llu command id(s) claimed by more than one entry; each stays "
		                "with the first",
		                json_path, (unsigned long long)dups);
	return TP_OK;
}

void sg_layers_name_from_mlir(struct tp_profile *p, const struct sg_layers *L, size_t first)
{
	if (!L->have_mlir)
		return;
	for (size_t i = first; i < p->num_layers; i++) {
		struct tp_layer lyv, *ly = &lyv;
		tp_profile_layer(p, i, ly);
		if (ly->id <= 0)
			continue;
		int32_t group = ly->group;
		uint32_t name = ly->name;
		if (ly->group < 0)
			ly->group = sg_mlir_group_of(&L->mlir, (uint32_t)ly->id);
		const char *cur = tp_str(p, ly->name);
		const char *nm = sg_mlir_name(&L->mlir, (uint32_t)ly->id);
		if ((!cur || !*cur) && nm && *nm)
			ly->name = tp_profile_str(p, nm);
		if ((ly->group != group || ly->name != name) &&
		    tp_profile_set_layer(p, i, ly) != TP_OK)
			return; /* the sticky oom flag fails tp_profile_finish */
	}
}
