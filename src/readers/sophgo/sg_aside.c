/*
 * sg_aside.c — what a Sophgo reader's per-core worker keeps aside (struct sg_aside: profile
 * notes and read statistics) until the calling thread adds it to the profile in core order,
 * so that the profile (notes are interned strings) is the same for every thread count. Used
 * by bmp_perfai.c (bmp_iter_perfai's core jobs) and cdm_cores.c (cdm_read_cores). Also how
 * many cores those readers hold in flight at once (sg_wave), bounded by memory.
 */
#include "readers/sophgo/sg_int.h"

#include <stdio.h>

void sg_vnote(struct tp_profile *p, struct sg_aside *a, const char *fmt, va_list ap)
{
	char buf[1024]; /* tp_profile_note's own limit */
	vsnprintf(buf, sizeof buf, fmt, ap);
	if (!a) {
		tp_profile_note(p, "%s", buf);
		return;
	}
	char *c = tp_strdup(buf);
	char **v = c ? tp_grow(a->notes, sizeof *v, a->nnotes + 1, &a->cap) : NULL;
	if (!v) {
		tp_free(c);
		a->oom = 1;
		return;
	}
	a->notes = v;
	v[a->nnotes++] = c;
}

static void stats_add(struct tp_read_stats *s, const struct tp_read_stats *f)
{
	s->files_read += f->files_read;
	s->blocks_read += f->blocks_read;
	s->blocks_skipped += f->blocks_skipped;
	s->records_read += f->records_read;
	s->records_dropped += f->records_dropped;
	s->bytes_missing += f->bytes_missing;
}

int sg_aside_apply(struct tp_profile *p, struct sg_aside *a)
{
	for (size_t i = 0; i < a->nnotes; i++)
		tp_profile_note(p, "%s", a->notes[i]);
	stats_add(&p->stats, &a->stats);
	int oom = a->oom;
	sg_aside_free(a);
	return oom ? TP_ENOMEM : TP_OK;
}

void sg_aside_move(struct sg_aside *to, struct sg_aside *from)
{
	stats_add(&to->stats, &from->stats);
	to->oom |= from->oom;
	if (from->nnotes) {
		char **v = tp_grow(to->notes, sizeof *v, to->nnotes + from->nnotes, &to->cap);
		if (!v) {
			to->oom = 1;
		} else {
			to->notes = v;
			memcpy(v + to->nnotes, from->notes, from->nnotes * sizeof *v);
			to->nnotes += from->nnotes;
			from->nnotes = 0;
		}
	}
	sg_aside_free(from);
}

void sg_aside_free(struct sg_aside *a)
{
	for (size_t i = 0; i < a->nnotes; i++)
		tp_free(a->notes[i]);
	tp_free(a->notes);
	memset(a, 0, sizeof *a);
}

size_t sg_wave(const uint64_t *est, size_t k0, size_t n, unsigned jobs)
{
	size_t w = 1;
	uint64_t spare = 0;
	while (w < jobs && k0 + w < n && (spare += est[k0 + w]) <= SG_WAVE_SPARE)
		w++;
	return w;
}
