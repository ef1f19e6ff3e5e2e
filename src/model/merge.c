/*
 * merge.c — lays a host side next to a device profile (`--trace_file`): finds the alignment of
 * sophgo-cdm.md §10, shifts the device side, and copies the host's events: a Chrome trace's
 * complete events onto "tpudnn op" / "cpu op" host tracks, or a libtpuprof capture's threads,
 * counters and notes as they are. Contract in merge.h. Owns only a per-call track map, freed
 * before returning.
 */
#include "model/merge.h"

#include <stdlib.h>
#include <string.h>

/* Host events the spec drops: the profiler's own bracket events (sophgo-cdm.md §10 step 5). */
static const char *const dropped_names[] = {
    "PyTorch Profiler (0)", "enable_profile",          "my_ops::enable_profile",
    "disable_profile",      "my_ops::disable_profile",
};

static const char *arg_s(const struct tp_profile *p, const struct tp_slice *s, uint32_t key)
{
	const struct tp_arg *a = key ? tp_args_find(p, s->args, key) : NULL;
	return a && a->type == TP_ARG_STR ? tp_str(p, a->v.s) : "";
}

static int meta_i64(const struct tp_profile *p, const char *key, int64_t *v)
{
	const char *s = tp_profile_get_meta(p, key);
	if (!s || tp_parse_i64(s, strlen(s), v) != 0)
		return 0;
	return 1;
}

/* a + b - c without overflow; -1 if it does not fit. */
static int add3(int64_t a, int64_t b, int64_t c, int64_t *out)
{
	int64_t t;
	if (__builtin_add_overflow(a, b, &t) || __builtin_sub_overflow(t, c, out))
		return -1;
	return 0;
}

/* Copies one host argument set into dev; returns the new id (0 if none / oom). */
static uint32_t copy_args(struct tp_profile *dev, const struct tp_profile *host, uint32_t id)
{
	size_t n = 0;
	const struct tp_arg *a = tp_args_get(host, id, &n);
	if (!a || !n)
		return 0;
	tp_args_begin(dev);
	for (size_t i = 0; i < n; i++) {
		struct tp_arg b = a[i];
		b.key = tp_profile_str(dev, tp_str(host, a[i].key));
		if (b.type == TP_ARG_STR)
			b.v.s = tp_profile_str(dev, tp_str(host, a[i].v.s));
		tp_args_add(dev, &b);
	}
	return tp_args_end(dev);
}

/* Whether slice s of host track tr is one of the host trace's complete events (X, B/E pairs)
 * that step 5 copies: every class the reader gives them (enum tp_work) but the steps, and a
 * step's range projected onto a device queue ("ProfilerStep#N" there too) stays out with them. */
static int complete_event(const struct tp_profile *host, const struct tp_work_ids *w,
                          const struct tp_track *tr, const struct tp_slice *s)
{
	enum tp_work c = tp_work_of(w, tp_slice_type(tr, s));
	if (c == TP_WORK_NONE || c == TP_WORK_STEP)
		return 0;
	return c != TP_WORK_DEVICE_ANNOTATION ||
	       strncmp(tp_str(host, tp_slice_name(tr, s)), "ProfilerStep#", 13) != 0;
}

/* What the host trace holds for the alignment (steps 1 and 3), in host ns. */
struct host_scan {
	int have_disable, have_first;
	int64_t disable_end, first_start, first_end;
	size_t threads; /* host tracks with complete events */
};

/* Steps 1 and 3 for tpudnn event s of track tr (`disable`: it is a disable_profile): the
 * latest disable_profile end and the earliest tpudnn event so far. */
static void scan_event(struct host_scan *h, const struct tp_track *tr, const struct tp_slice *s,
                       int disable)
{
	if (disable && (!h->have_disable || tp_slice_end(tr, s) > h->disable_end)) {
		h->disable_end = tp_slice_end(tr, s);
		h->have_disable = 1;
	}
	if (!h->have_first || s->start_ns < h->first_start) {
		h->first_start = s->start_ns;
		h->first_end = tp_slice_end(tr, s);
		h->have_first = 1;
	}
}

/* Steps 1 and 3: disable_profile's end and the earliest tpudnn event (host ns). */
static void scan_host(const struct tp_profile *host, uint32_t k_cat, const struct tp_work_ids *w,
                      struct host_scan *h)
{
	memset(h, 0, sizeof *h);
	for (size_t t = 0; t < host->num_tracks; t++) {
		const struct tp_track *tr = &host->tracks[t];
		int used = 0;
		for (size_t k = 0; k < tr->count; k++) {
			const struct tp_slice *s = &tr->slices[k];
			if (!complete_event(host, w, tr, s))
				continue;
			used = 1;
			if (strcmp(arg_s(host, s, k_cat), "tpudnn") != 0)
				continue;
			scan_event(h, tr, s,
			           strcmp(tp_str(host, tp_slice_name(tr, s)), "disable_profile") ==
			               0);
		}
		h->threads += (size_t)used;
	}
}

/* Step 2 / 3 / fallback: where device time 0 lies, in host-absolute ns (*dev0), and how it was
 * found (*how). TP_OK, or TP_ERANGE with d filled. */
static int device_zero(const struct tp_profile *dev, int64_t host_base, const struct host_scan *h,
                       const char *host_path, int64_t *dev0, const char **how, struct tp_diag *d)
{
	int64_t tail_off, tail_cycle;
	if (h->have_disable && meta_i64(dev, TP_META_TAIL_OFFSET_NS, &tail_off) &&
	    meta_i64(dev, TP_META_PMU_TAIL_CYCLE, &tail_cycle) && tail_cycle >= 0) {
		double mhz = dev->tiu_freq_mhz > 0 ? dev->tiu_freq_mhz : 1000.0;
		int64_t tail_ns = tp_cycles_to_ns((uint64_t)tail_cycle, mhz);
		int64_t anchor;
		if (add3(host_base, h->disable_end, tail_off, &anchor) ||
		    __builtin_sub_overflow(anchor, tail_ns, dev0))
			return tp_diag_set(d, TP_ERANGE,
			                   "%s: host and device clocks do not fit in "
			                   "64-bit nanoseconds",
			                   host_path);
		*how = "tail";
	} else if (h->have_first) {
		if (__builtin_add_overflow(host_base, h->first_end, dev0))
			return tp_diag_set(d, TP_ERANGE, "%s: timestamps out of range", host_path);
		*how = "first tpudnn event";
	} else {
		*dev0 = host_base;
		*how = "none";
	}
	return TP_OK;
}

/* Moves every device slice, layer and counter sample by `shift` ns. TP_OK or TP_ENOMEM. */
static int shift_device(struct tp_profile *dev, int64_t shift)
{
	for (size_t t = 0; t < dev->num_tracks; t++)
		for (size_t k = 0; k < dev->tracks[t].count; k++) {
			dev->tracks[t].slices[k].start_ns +=
			    shift; /* the end moves with the start */
		}
	for (size_t i = 0; i < dev->num_layers; i++) {
		struct tp_layer ly;
		if (tp_profile_layer(dev, i, &ly)->begin_ns <= ly.end_ns) {
			ly.begin_ns += shift;
			ly.end_ns += shift;
			if (tp_profile_set_layer(dev, i, &ly) != TP_OK)
				return TP_ENOMEM;
		}
	}
	for (size_t c = 0; c < dev->num_counters; c++)
		for (size_t k = 0; k < dev->counters[c].count; k++)
			dev->counters[c].samples[k].ts_ns += shift;
	return TP_OK;
}

/* One axis: the earliest of the host's start (host_base, host-absolute ns) and the device's
 * first event (device time 0 at dev0) becomes 0. Moves the device side there and gives how far
 * host times move (*host_shift >= 0) and where device time 0 now lies (*shift). TP_OK,
 * TP_ERANGE or TP_ENOMEM with d filled. */
static int one_axis(struct tp_profile *dev, int64_t host_base, int64_t dev0, const char *host_path,
                    int64_t *shift, int64_t *host_shift, struct tp_diag *d)
{
	int64_t base = host_base, dev_first_abs;
	if (__builtin_add_overflow(dev0, dev->span_begin_ns, &dev_first_abs))
		return tp_diag_set(d, TP_ERANGE, "%s: timestamps out of range", host_path);
	if (dev_first_abs < base)
		base = dev_first_abs;
	if (__builtin_sub_overflow(dev0, base, shift))
		return tp_diag_set(d, TP_ERANGE, "%s: timestamps out of range", host_path);
	if (shift_device(dev, *shift) != TP_OK)
		return tp_diag_set(d, TP_ENOMEM, "out of memory merging %s", host_path);
	*host_shift = host_base - base; /* >= 0 and fits: base <= host_base */
	return TP_OK;
}

static int dropped_name(const char *name)
{
	int drop = 0;
	for (size_t n = 0; n < sizeof dropped_names / sizeof *dropped_names; n++)
		drop |= strcmp(name, dropped_names[n]) == 0;
	return drop;
}

/* What step 5 works with: the host's key ids and the dev track each (host track, class)
 * goes to. */
struct copy_ctx {
	struct tp_profile *dev;
	const struct tp_profile *host;
	uint32_t k_cat;
	const struct tp_work_ids *w;
	size_t host_threads;
	int64_t host_shift;
	int *map; /* host track * 2 + class (0 tpudnn, 1 other) -> dev track, -1 until made */
	uint64_t copied, dropped;
};

/* The dev track of host track t's events of class cls, made on first use; -1 out of memory. */
static int dest_track(struct copy_ctx *c, size_t t, int cls)
{
	const struct tp_track *tr = &c->host->tracks[t];
	int *slot = &c->map[t * 2 + (size_t)cls];
	if (*slot < 0) {
		char tname[300];
		const char *base_name = cls == 0 ? "tpudnn op" : "cpu op";
		if (c->host_threads > 1)
			snprintf(tname, sizeof tname, "%s (%s)", base_name,
			         tp_str(c->host, tr->name));
		else
			snprintf(tname, sizeof tname, "%s", base_name);
		*slot = tp_profile_add_track(c->dev, 0, -1, TP_TRACK_HOST, tname, 0);
		if (*slot < 0)
			return -1;
		c->dev->tracks[*slot].tid = tr->tid;
	}
	return *slot;
}

/* Step 5 for host track t: its complete events onto "tpudnn op" / "cpu op" tracks. */
static int copy_track(struct copy_ctx *c, size_t t)
{
	struct tp_profile *dev = c->dev;
	const struct tp_profile *host = c->host;
	const struct tp_track *tr = &host->tracks[t];
	for (size_t k = 0; k < tr->count; k++) {
		const struct tp_slice *s = &tr->slices[k];
		if (!complete_event(host, c->w, tr, s))
			continue;
		const char *name = tp_str(host, tp_slice_name(tr, s));
		if (dropped_name(name)) {
			c->dropped++;
			continue;
		}
		const char *cat = arg_s(host, s, c->k_cat);
		int dt = dest_track(c, t, strcmp(cat, "tpudnn") == 0 ? 0 : 1);
		if (dt < 0)
			return TP_ENOMEM;
		uint32_t args = copy_args(dev, host, s->args);
		struct tp_slice *x = tp_track_push(dev, dt);
		if (!x)
			return TP_ENOMEM;
		x->start_ns = s->start_ns + c->host_shift;
		tp_slice_set_end(dev, &dev->tracks[dt], x, tp_slice_end(tr, s) + c->host_shift);
		struct tp_label lb = {.name = tp_profile_str(dev, name)};
		lb.type = tp_profile_str(dev, cat[0] ? cat : "host");
		tp_slice_set_label(dev, &dev->tracks[dt], x, &lb);
		x->args = args;
		c->copied++;
	}
	return TP_OK;
}

/* The meta keys and the note that say how the merge went. */
static void merge_notes(struct tp_profile *dev, const char *host_path, const char *how,
                        int64_t shift, const struct copy_ctx *c)
{
	char num[32];
	tp_profile_set_meta(dev, "host_trace.alignment", how);
	snprintf(num, sizeof num, "%lld", (long long)shift);
	tp_profile_set_meta(dev, "host_trace.device_offset_ns", num);
	if (strcmp(how, "none") == 0)
		tp_profile_note(dev,
		                "host trace %s has no tpudnn event: the device timeline is "
		                "placed at the start of the host trace, not aligned",
		                host_path);
	else
		tp_profile_note(
		    dev,
		    "host trace %s merged: %llu host events (%llu profiler "
		    "events dropped), aligned by %s",
		    host_path, (unsigned long long)c->copied, (unsigned long long)c->dropped,
		    strcmp(how, "tail") == 0 ? "disable_profile's end minus tail_offset_ns"
		                             : "the end of the first tpudnn event");
}

int tp_profile_merge_host(struct tp_profile *dev, const struct tp_profile *host,
                          const char *host_path, struct tp_diag *d)
{
	if (!dev->num_devices)
		return tp_diag_set(d, TP_EUSAGE, "%s: no device to merge the host trace into",
		                   host_path);
	int64_t host_base = 0;
	const char *hb = tp_profile_get_meta(host, TP_META_TRACE_BASE_NS);
	if (hb)
		tp_parse_i64(hb, strlen(hb), &host_base);
	uint32_t k_cat = tp_profile_find_str(host, "cat");
	struct tp_work_ids w;
	tp_work_ids(host, &w);
	struct host_scan h;
	scan_host(host, k_cat, &w, &h);
	int64_t dev0 = 0;
	const char *how = "none";
	int st = device_zero(dev, host_base, &h, host_path, &dev0, &how, d);
	if (st)
		return st;

	int64_t shift, host_shift;
	if ((st = one_axis(dev, host_base, dev0, host_path, &shift, &host_shift, d)) != TP_OK)
		return st;

	struct copy_ctx c = {dev, host, k_cat, &w, h.threads, host_shift, NULL, 0, 0};
	c.map = tp_malloc((host->num_tracks ? host->num_tracks : 1) * 2 * sizeof *c.map);
	if (!c.map)
		return tp_diag_set(d, TP_ENOMEM, "out of memory merging %s", host_path);
	for (size_t i = 0; i < host->num_tracks * 2; i++)
		c.map[i] = -1;
	for (size_t t = 0; t < host->num_tracks && st == TP_OK; t++)
		st = copy_track(&c, t);
	tp_free(c.map);
	if (st == TP_OK) {
		merge_notes(dev, host_path, how, shift, &c);
		st = tp_profile_finish(dev);
	}
	if (st)
		return tp_diag_set(d, st, "out of memory merging %s", host_path);
	return TP_OK;
}

/* ---- A libtpuprof capture as the host side ----------------------------------------------- */

/* The capture's events that play the part of the Chrome rule's `tpudnn` events: runtime / driver
 * calls (type TP_CAP_TYPE_RUNTIME, tpuprof_runtime_begin/end) and slices whose "category"
 * argument (the capture reader's key for ranges, marks and async ranges) is "tpudnn". */
struct cap_keys {
	uint32_t ty_runtime, k_category;
};

static int cap_tpudnn(const struct tp_profile *cap, const struct cap_keys *k,
                      const struct tp_track *tr, const struct tp_slice *s)
{
	if (k->ty_runtime && tp_slice_type(tr, s) == k->ty_runtime)
		return 1;
	return k->k_category && strcmp(arg_s(cap, s, k->k_category), "tpudnn") == 0;
}

/* Steps 1 and 3 on a capture: the latest end of a tpudnn event named disable_profile (or
 * my_ops::disable_profile, as the PyTorch call is spelled) and the earliest tpudnn event. */
static void scan_capture(const struct tp_profile *cap, const struct cap_keys *k,
                         struct host_scan *h)
{
	memset(h, 0, sizeof *h);
	for (size_t t = 0; t < cap->num_tracks; t++) {
		const struct tp_track *tr = &cap->tracks[t];
		h->threads += tr->count > 0;
		for (size_t i = 0; i < tr->count; i++) {
			const struct tp_slice *s = &tr->slices[i];
			if (!cap_tpudnn(cap, k, tr, s))
				continue;
			const char *name = tp_str(cap, tp_slice_name(tr, s));
			scan_event(h, tr, s,
			           strcmp(name, "disable_profile") == 0 ||
			               strcmp(name, "my_ops::disable_profile") == 0);
		}
	}
}

/* Copies capture track t (its kind, name, tid, drop count and every slice with its label and
 * arguments, moved by `shift`) onto a new track of dev's device 0; *copied counts the slices.
 * The new track's index, or -1 out of memory. */
static int copy_cap_track(struct tp_profile *dev, const struct tp_profile *cap, size_t t,
                          int64_t shift, uint64_t *copied)
{
	const struct tp_track *tr = &cap->tracks[t];
	int nt = tp_profile_add_track(dev, 0, -1, (enum tp_track_kind)tr->kind,
	                              tp_str(cap, tr->name), 0);
	if (nt < 0 || tp_track_reserve(dev, nt, tr->count) != TP_OK)
		return -1;
	dev->tracks[nt].tid = tr->tid;
	dev->tracks[nt].dropped = tr->dropped;
	for (size_t i = 0; i < tr->count; i++) {
		const struct tp_slice *s = &tr->slices[i];
		struct tp_label lb = *tp_slice_label(tr, s);
		lb.name = tp_profile_str(dev, tp_str(cap, lb.name));
		lb.type = tp_profile_str(dev, tp_str(cap, lb.type));
		uint32_t args = copy_args(dev, cap, s->args);
		struct tp_slice *x = tp_track_push(dev, nt);
		if (!x)
			return -1;
		x->start_ns = s->start_ns + shift;
		struct tp_track *dt = &dev->tracks[nt];
		if (tp_slice_set_end(dev, dt, x, tp_slice_end(tr, s) + shift) != TP_OK ||
		    tp_slice_set_label(dev, dt, x, &lb) != TP_OK)
			return -1;
		x->args = args;
		(*copied)++;
	}
	return nt;
}

/* Step 5 on a capture: every track, counter series and note of `cap`, host times moved by
 * `shift`. TP_OK or TP_ENOMEM. */
static int copy_capture(struct tp_profile *dev, const struct tp_profile *cap, const char *host_path,
                        int64_t shift, uint64_t *copied)
{
	int st = TP_OK;
	int *map = tp_malloc((cap->num_tracks ? cap->num_tracks : 1) * sizeof *map);
	if (!map)
		return TP_ENOMEM;
	for (size_t t = 0; t < cap->num_tracks && st == TP_OK; t++)
		if ((map[t] = copy_cap_track(dev, cap, t, shift, copied)) < 0)
			st = TP_ENOMEM;
	for (size_t i = 0; i < cap->num_counters && st == TP_OK; i++) {
		const struct tp_counter *c = &cap->counters[i];
		int32_t track =
		    c->track >= 0 && (size_t)c->track < cap->num_tracks ? map[c->track] : -1;
		int nc = tp_profile_add_counter(dev, 0, track, tp_str(cap, c->name),
		                                tp_str(cap, c->unit));
		if (nc < 0) {
			st = TP_ENOMEM;
			break;
		}
		for (size_t k = 0; k < c->count && st == TP_OK; k++)
			st = tp_counter_push(dev, nc, c->samples[k].ts_ns + shift,
			                     c->samples[k].value);
	}
	for (size_t i = 0; i < cap->num_notes && st == TP_OK; i++)
		st = tp_profile_note(dev, "host capture %s: %s", host_path,
		                     tp_str(cap, cap->notes[i].text));
	tp_free(map);
	return st;
}

int tp_profile_merge_capture(struct tp_profile *dev, const struct tp_profile *cap,
                             const char *host_path, struct tp_diag *d)
{
	if (!dev->num_devices)
		return tp_diag_set(d, TP_EUSAGE, "%s: no device to merge the host capture into",
		                   host_path);
	struct cap_keys k = {tp_profile_find_str(cap, TP_CAP_TYPE_RUNTIME),
	                     tp_profile_find_str(cap, "category")};
	struct host_scan h;
	scan_capture(cap, &k, &h);
	/* The capture reader already put the capture's earliest event at 0: host time is that. */
	int64_t dev0 = 0, shift, host_shift;
	const char *how = "none";
	int st = device_zero(dev, 0, &h, host_path, &dev0, &how, d);
	if (st || (st = one_axis(dev, 0, dev0, host_path, &shift, &host_shift, d)) != TP_OK)
		return st;
	uint64_t copied = 0;
	st = copy_capture(dev, cap, host_path, host_shift, &copied);
	if (st == TP_OK) {
		char num[32];
		snprintf(num, sizeof num, "%lld", (long long)shift);
		tp_profile_set_meta(dev, "host_trace.alignment", how);
		tp_profile_set_meta(dev, "host_trace.device_offset_ns", num);
		if (strcmp(how, "none") == 0)
			st = tp_profile_note(dev,
			                     "host capture %s has no runtime call and no tpudnn "
			                     "event: the device timeline is placed at the start of "
			                     "the capture, not aligned",
			                     host_path);
		else
			st = tp_profile_note(
			    dev,
			    "host capture %s merged: %llu host events on %zu threads, "
			    "aligned by %s",
			    host_path, (unsigned long long)copied, h.threads,
			    strcmp(how, "tail") == 0 ? "disable_profile's end minus tail_offset_ns"
			                             : "the end of the first runtime call or "
			                               "tpudnn event");
	}
	if (st == TP_OK)
		st = tp_profile_finish(dev);
	if (st)
		return tp_diag_set(d, st, "out of memory merging %s", host_path);
	return TP_OK;
}
