/*
 * merge.c — lays a host Chrome trace next to a device profile (`--trace_file`): finds the
 * alignment of sophgo-cdm.md §10, shifts the device side, copies the host's complete events
 * onto "tpudnn op" / "cpu op" host tracks. Contract in traceread.h. Owns only a per-call
 * track map, freed before returning.
 */
#include "readers/traceread/traceread.h"

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
		const char *k = tp_str(host, a[i].key);
		switch (a[i].type) {
		case TP_ARG_INT:
			tp_args_add_int(dev, k, a[i].v.i);
			break;
		case TP_ARG_UINT:
			tp_args_add_uint(dev, k, a[i].v.u);
			break;
		case TP_ARG_REAL:
			tp_args_add_real(dev, k, a[i].v.d);
			break;
		default:
			tp_args_add_str(dev, k, tp_str(host, a[i].v.s));
			break;
		}
	}
	return tp_args_end(dev);
}

int tp_traceread_merge_host(struct tp_profile *dev, const struct tp_profile *host,
                            const char *host_path, struct tp_diag *d)
{
	if (!dev->num_devices)
		return tp_diag_set(d, TP_EUSAGE, "%s: no device to merge the host trace into",
		                   host_path);
	int64_t host_base = 0;
	const char *hb = tp_profile_get_meta(host, TP_TRACEREAD_META_BASE_NS);
	if (hb)
		tp_parse_i64(hb, strlen(hb), &host_base);
	uint32_t k_cat = tp_profile_find_str(host, "cat");
	uint32_t ty_op = tp_profile_find_str(host, TP_CAP_TYPE_OP);

	/* Steps 1 and 3: disable_profile's end and the earliest tpudnn event (host ns). */
	int have_disable = 0, have_first = 0;
	int64_t disable_end = 0, first_start = 0, first_end = 0;
	size_t host_threads = 0;
	for (size_t t = 0; t < host->num_tracks; t++) {
		const struct tp_track *tr = &host->tracks[t];
		int used = 0;
		for (size_t k = 0; k < tr->count; k++) {
			const struct tp_slice *s = &tr->slices[k];
			if (tp_slice_type(tr, s) != ty_op || !ty_op)
				continue;
			used = 1;
			if (strcmp(arg_s(host, s, k_cat), "tpudnn") != 0)
				continue;
			if (strcmp(tp_str(host, tp_slice_name(tr, s)), "disable_profile") == 0 &&
			    (!have_disable || tp_slice_end(tr, s) > disable_end)) {
				disable_end = tp_slice_end(tr, s);
				have_disable = 1;
			}
			if (!have_first || s->start_ns < first_start) {
				first_start = s->start_ns;
				first_end = tp_slice_end(tr, s);
				have_first = 1;
			}
		}
		host_threads += (size_t)used;
	}

	/* Step 2 / 3 / fallback: where device time 0 lies, in host-absolute ns. */
	int64_t tail_off, tail_cycle, dev0;
	const char *how;
	if (have_disable && meta_i64(dev, TP_META_TAIL_OFFSET_NS, &tail_off) &&
	    meta_i64(dev, TP_META_PMU_TAIL_CYCLE, &tail_cycle) && tail_cycle >= 0) {
		double mhz = dev->tiu_freq_mhz > 0 ? dev->tiu_freq_mhz : 1000.0;
		int64_t tail_ns = tp_cycles_to_ns((uint64_t)tail_cycle, mhz);
		int64_t anchor;
		if (add3(host_base, disable_end, tail_off, &anchor) ||
		    __builtin_sub_overflow(anchor, tail_ns, &dev0))
			return tp_diag_set(d, TP_ERANGE,
			                   "%s: host and device clocks do not fit in "
			                   "64-bit nanoseconds",
			                   host_path);
		how = "tail";
	} else if (have_first) {
		if (__builtin_add_overflow(host_base, first_end, &dev0))
			return tp_diag_set(d, TP_ERANGE, "%s: timestamps out of range", host_path);
		how = "first tpudnn event";
	} else {
		dev0 = host_base;
		how = "none";
	}

	/* One axis: the earliest of the host's start and the device's first event is 0. */
	int64_t dev_first = dev->span_begin_ns, base = host_base, shift;
	int64_t dev_first_abs;
	if (__builtin_add_overflow(dev0, dev_first, &dev_first_abs))
		return tp_diag_set(d, TP_ERANGE, "%s: timestamps out of range", host_path);
	if (dev_first_abs < base)
		base = dev_first_abs;
	if (__builtin_sub_overflow(dev0, base, &shift))
		return tp_diag_set(d, TP_ERANGE, "%s: timestamps out of range", host_path);
	int64_t host_shift = host_base - base; /* >= 0, fits: base <= host_base */

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
				return tp_diag_set(d, TP_ENOMEM, "out of memory merging %s",
				                   host_path);
		}
	}
	for (size_t c = 0; c < dev->num_counters; c++)
		for (size_t k = 0; k < dev->counters[c].count; k++)
			dev->counters[c].samples[k].ts_ns += shift;

	/* Step 5: host complete events onto "tpudnn op" / "cpu op" tracks. */
	int st = TP_OK;
	uint64_t copied = 0, dropped = 0;
	int *map = tp_malloc((host->num_tracks ? host->num_tracks : 1) * 2 * sizeof *map);
	if (!map)
		return tp_diag_set(d, TP_ENOMEM, "out of memory merging %s", host_path);
	for (size_t i = 0; i < host->num_tracks * 2; i++)
		map[i] = -1;
	for (size_t t = 0; t < host->num_tracks && st == TP_OK; t++) {
		const struct tp_track *tr = &host->tracks[t];
		for (size_t k = 0; k < tr->count; k++) {
			const struct tp_slice *s = &tr->slices[k];
			if (tp_slice_type(tr, s) != ty_op || !ty_op)
				continue;
			const char *name = tp_str(host, tp_slice_name(tr, s));
			int drop = 0;
			for (size_t n = 0; n < sizeof dropped_names / sizeof *dropped_names; n++)
				drop |= strcmp(name, dropped_names[n]) == 0;
			if (drop) {
				dropped++;
				continue;
			}
			const char *cat = arg_s(host, s, k_cat);
			int cls = strcmp(cat, "tpudnn") == 0 ? 0 : 1;
			int *slot = &map[t * 2 + (size_t)cls];
			if (*slot < 0) {
				char tname[300];
				const char *base_name = cls == 0 ? "tpudnn op" : "cpu op";
				if (host_threads > 1)
					snprintf(tname, sizeof tname, "%s (%s)", base_name,
					         tp_str(host, tr->name));
				else
					snprintf(tname, sizeof tname, "%s", base_name);
				*slot = tp_profile_add_track(dev, 0, -1, TP_TRACK_HOST, tname, 0);
				if (*slot < 0) {
					st = TP_ENOMEM;
					break;
				}
				dev->tracks[*slot].tid = tr->tid;
			}
			uint32_t args = copy_args(dev, host, s->args);
			struct tp_slice *x = tp_track_push(dev, *slot);
			if (!x) {
				st = TP_ENOMEM;
				break;
			}
			x->start_ns = s->start_ns + host_shift;
			tp_slice_set_end(dev, &dev->tracks[*slot], x,
			                 tp_slice_end(tr, s) + host_shift);
			struct tp_label lb = {.name = tp_profile_str(dev, name)};
			lb.type = tp_profile_str(dev, cat[0] ? cat : "host");
			tp_slice_set_label(dev, &dev->tracks[*slot], x, &lb);
			x->args = args;
			copied++;
		}
	}
	tp_free(map);
	if (st == TP_OK) {
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
			    host_path, (unsigned long long)copied, (unsigned long long)dropped,
			    strcmp(how, "tail") == 0 ? "disable_profile's end minus tail_offset_ns"
			                             : "the end of the first tpudnn event");
		st = tp_profile_finish(dev);
	}
	if (st)
		return tp_diag_set(d, st, "out of memory merging %s", host_path);
	return TP_OK;
}
