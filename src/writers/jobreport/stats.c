/*
 * stats.c — the job-wide figures derived from the entries (tp_job_finish): the order the
 * report lists calls in, the slowest and the most imbalanced call, each call against its
 * siblings, the imbalance across devices, and whether the calls share a clock.
 */
#include "writers/jobreport/jobreport_int.h"

#include <stdlib.h>

int tp_job_natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			while (*a == '0' && a[1] >= '0' && a[1] <= '9')
				a++;
			while (*b == '0' && b[1] >= '0' && b[1] <= '9')
				b++;
			size_t na = strspn(a, "0123456789"), nb = strspn(b, "0123456789");
			if (na != nb)
				return na < nb ? -1 : 1;
			int c = strncmp(a, b, na);
			if (c)
				return c;
			a += na;
			b += nb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

double tp_jr_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct tp_job_entry *a = x, *b = y;
	int c = tp_job_natcmp(a->device, b->device);
	if (c)
		return c;
	if (a->call != b->call)
		return a->call < b->call ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Totals of the other converted calls that are e's siblings: the same call number on other
 * devices when there are any (want_devices), else the other calls of e's device; only calls
 * of the same chip compare (a CPU trace is no sibling of a BM1690 call). */
static size_t siblings(const struct tp_job *j, const struct tp_job_entry *e, int want_devices,
                       double *out)
{
	size_t n = 0;
	for (size_t i = 0; i < j->n; i++) {
		const struct tp_job_entry *s = &j->e[i];
		if (s == e || !s->ok || strcmp(s->arch, e->arch) != 0)
			continue;
		int same_dev = strcmp(s->device, e->device) == 0;
		if (want_devices ? (!same_dev && s->call == e->call) : same_dev)
			out[n++] = (double)s->total_ns;
	}
	return n;
}

static void sibling_figures(struct tp_job *j, double *tmp)
{
	for (size_t i = 0; i < j->n; i++) {
		struct tp_job_entry *e = &j->e[i];
		if (!e->ok)
			continue;
		size_t n = siblings(j, e, 1, tmp);
		if (n) {
			double sum = (double)e->total_ns;
			for (size_t k = 0; k < n; k++)
				sum += tmp[k];
			e->dev_share = sum > 0 ? (double)e->total_ns * (double)(n + 1) / sum : 0;
		} else {
			n = siblings(j, e, 0, tmp);
		}
		e->siblings = n;
		double med = tp_jr_median(tmp, n);
		e->sibling_dev = med > 0 ? ((double)e->total_ns - med) / med : 0;
	}
}

/* Per call number and chip: max / mean of the converted calls' totals across devices. */
static void device_imbalance(struct tp_job *j)
{
	for (size_t i = 0; i < j->n; i++) {
		if (!j->e[i].ok)
			continue;
		double sum = 0, max = 0;
		size_t n = 0;
		for (size_t k = 0; k < j->n; k++) {
			const struct tp_job_entry *s = &j->e[k];
			if (!s->ok || s->call != j->e[i].call || strcmp(s->arch, j->e[i].arch) != 0)
				continue;
			sum += (double)s->total_ns;
			max = (double)s->total_ns > max ? (double)s->total_ns : max;
			n++;
		}
		double imb = n > 1 && sum > 0 ? max * (double)n / sum : 0;
		if (imb > j->device_imbalance) {
			j->device_imbalance = imb;
			j->device_imbalance_call = j->e[i].call;
		}
	}
}

static void highlights(struct tp_job *j)
{
	j->slowest = j->imbalanced = j->n;
	for (size_t i = 0; i < j->n; i++) {
		const struct tp_job_entry *e = &j->e[i];
		if (!e->ok)
			continue;
		if (j->slowest == j->n || e->total_ns > j->e[j->slowest].total_ns)
			j->slowest = i;
		if (e->ncores > 1 && e->imbalance > 0 &&
		    (j->imbalanced == j->n || e->imbalance > j->e[j->imbalanced].imbalance))
			j->imbalanced = i;
	}
}

void tp_job_finish(struct tp_job *j)
{
	if (j->n)
		qsort(j->e, j->n, sizeof *j->e, cmp_entry);
	j->ndevices = j->nfailed = 0;
	j->aligned = 1;
	j->anchor = -1;
	for (size_t i = 0; i < j->n; i++) {
		const struct tp_job_entry *e = &j->e[i];
		if (!i || strcmp(e->device, j->e[i - 1].device) != 0)
			j->ndevices++;
		if (!e->ok) {
			j->nfailed++;
			continue;
		}
		if (e->anchor == TP_JOB_ANCHOR_NONE || (j->anchor >= 0 && e->anchor != j->anchor))
			j->aligned = 0;
		j->anchor = e->anchor;
	}
	if (j->anchor < 0 || !j->aligned)
		j->anchor = TP_JOB_ANCHOR_NONE;
	j->aligned = j->aligned && j->anchor != TP_JOB_ANCHOR_NONE;
	highlights(j);
	j->device_imbalance = 0;
	j->device_imbalance_call = 0;
	device_imbalance(j);
	double *tmp = j->n ? tp_malloc(j->n * sizeof *tmp) : NULL;
	if (tmp)
		sibling_figures(j, tmp);
	tp_free(tmp);
}

void tp_jr_job_fields(const struct tp_job *j, struct tp_buf *b, int *first)
{
	tp_jr_json_int(b, first, "converted", (int64_t)(j->n - j->nfailed));
	tp_jr_json_int(b, first, "failed", (int64_t)j->nfailed);
	tp_jr_json_int(b, first, "num_devices", (int64_t)j->ndevices);
	tp_jr_json_int(b, first, "aligned", j->aligned);
	tp_jr_json_str(b, first, "anchor", tp_job_anchor_name(j->anchor));
	tp_jr_json_num(b, first, "device_imbalance", j->device_imbalance);
	tp_jr_json_int(b, first, "device_imbalance_call", j->device_imbalance_call);
	tp_jr_json_num(b, first, "core_imbalance",
	               j->imbalanced < j->n ? j->e[j->imbalanced].imbalance : 0);
}
