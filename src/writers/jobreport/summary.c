/*
 * summary.c — job_summary.txt and job_summary.json: one row per device × call (chip, cores,
 * total time, per-engine utilisation, DDR bandwidth, uArch rate, core imbalance, the call
 * against its siblings), totals per device, the imbalance across devices per call number,
 * the calls that differ most from their siblings, and the dumps that failed with their error.
 */
#include "writers/jobreport/jobreport_int.h"

#include <math.h>
#include <stdlib.h>

#define OUTLIERS 10 /* calls listed as differing most from their siblings */

/* Indexes of the converted calls with siblings, largest |deviation| first (ties in report
 * order), at most max. */
static size_t outliers(const struct tp_job *j, size_t *idx, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (!j->e[i].ok || !j->e[i].siblings)
			continue;
		double v = fabs(j->e[i].sibling_dev);
		if (n == max && v <= fabs(j->e[idx[n - 1]].sibling_dev))
			continue;
		size_t k = n < max ? n++ : max - 1; /* full: the last one drops out */
		while (k > 0 && v > fabs(j->e[idx[k - 1]].sibling_dev)) {
			idx[k] = idx[k - 1];
			k--;
		}
		idx[k] = i;
	}
	return n;
}

static void pct_cell(struct tp_buf *b, int present, double v)
{
	if (!present) {
		tp_buf_printf(b, " %6s", "-");
		return;
	}
	char s[32];
	snprintf(s, sizeof s, "%6.2f", v * 100);
	tp_buf_printf(b, " %6s", s);
}

/* Width of the Device column: the longest label, 6 to 40 bytes. */
static int dev_width(const struct tp_job *j)
{
	size_t w = 6;
	for (size_t i = 0; i < j->n; i++)
		if (strlen(j->e[i].device) > w)
			w = strlen(j->e[i].device);
	return w > 40 ? 40 : (int)w;
}

static void text_row(struct tp_buf *b, const struct tp_job *j, size_t i, int w)
{
	const struct tp_job_entry *e = &j->e[i];
	char dev[48], call[24];
	tp_text_copy(dev, (size_t)w + 1, e->device, TP_TEXT_TERM | TP_TEXT_LINE);
	snprintf(call, sizeof call, "%lld", (long long)e->call);
	tp_buf_printf(b, "%-*s %5s ", w, dev, call);
	if (!e->ok) {
		char f[32];
		snprintf(f, sizeof f, "FAILED (exit %d)", e->exit_code);
		tp_buf_printf(b, "%-90s", f);
	} else {
		char arch[16];
		tp_text_copy(arch, sizeof arch, e->arch, TP_TEXT_TERM | TP_TEXT_LINE);
		tp_buf_printf(b, "%-8s %5d ", arch, e->num_cores);
		char tot[32];
		snprintf(tot, sizeof tot, "%.3f", (double)e->total_ns / 1000);
		tp_buf_printf(b, "%12s", tot);
		int has[TP_ENGINES] = {0};
		for (size_t c = 0; c < e->ncores; c++)
			for (int k = 0; k < TP_ENGINES; k++)
				has[k] |= e->cores[c].eng[k].present;
		for (int k = 0; k < TP_ENGINES; k++)
			pct_cell(b, has[k], e->eng_util[k]);
		tp_buf_printf(b, " %9.2f", e->ddr_gbps);
		pct_cell(b, e->has_uarch, e->uarch_rate);
		if (e->imbalance > 0)
			tp_buf_printf(b, " %7.2f", e->imbalance);
		else
			tp_buf_printf(b, " %7s", "-");
		if (e->siblings)
			tp_buf_printf(b, " %+8.1f%%", e->sibling_dev * 100);
		else
			tp_buf_printf(b, " %9s", "-");
	}
	tp_buf_printf(b, "  %s%s", i == j->slowest ? "[slowest] " : "",
	              i == j->imbalanced ? "[most imbalanced] " : "");
	tp_text_put(b, e->name, strlen(e->name), TP_TEXT_TERM | TP_TEXT_LINE, 0, 0);
	tp_buf_putc(b, '\n');
}

/* The entries of the device of entry i (sorted: they follow one another) end at the returned
 * index; *n and *sum get its converted calls and their total time. */
static size_t device_run(const struct tp_job *j, size_t i, size_t *n, int64_t *sum)
{
	size_t k = i;
	*n = 0;
	*sum = 0;
	for (; k < j->n && strcmp(j->e[k].device, j->e[i].device) == 0; k++)
		if (j->e[k].ok) {
			*sum += j->e[k].total_ns;
			(*n)++;
		}
	return k;
}

static void text_devices(struct tp_buf *b, const struct tp_job *j, int w)
{
	tp_buf_printf(b, "\nPer device (converted calls)\n%-*s  Calls   Total(us)    Mean(us)\n", w,
	              "Device");
	for (size_t i = 0; i < j->n;) {
		size_t n;
		int64_t sum;
		size_t k = device_run(j, i, &n, &sum);
		char dev[48];
		tp_text_copy(dev, (size_t)w + 1, j->e[i].device, TP_TEXT_TERM | TP_TEXT_LINE);
		tp_buf_printf(b, "%-*s %6zu %11.3f %11.3f\n", w, dev, n, (double)sum / 1000,
		              n ? (double)sum / 1000 / (double)n : 0.0);
		i = k;
	}
}

static void text_findings(struct tp_buf *b, const struct tp_job *j)
{
	tp_buf_puts(b, "\nImbalance\n");
	if (j->device_imbalance > 0)
		tp_buf_printf(b, "  across devices: %.3f (max / mean of the totals of call %lld)\n",
		              j->device_imbalance, (long long)j->device_imbalance_call);
	else
		tp_buf_puts(b, "  across devices: n/a (no call number on two devices)\n");
	if (j->imbalanced < j->n)
		tp_buf_printf(b,
		              "  across cores: %.3f at %s call %lld (max / mean of the cores' busy "
		              "time)\n",
		              j->e[j->imbalanced].imbalance, j->e[j->imbalanced].device,
		              (long long)j->e[j->imbalanced].call);
	else
		tp_buf_puts(b, "  across cores: n/a (no call with two cores)\n");
	size_t idx[OUTLIERS];
	size_t n = outliers(j, idx, OUTLIERS);
	tp_buf_puts(b, "\nCalls that differ most from their siblings (same call on other devices, "
	               "else the device's other calls)\n");
	if (!n)
		tp_buf_puts(b, "  none (every call is alone)\n");
	for (size_t k = 0; k < n; k++) {
		const struct tp_job_entry *e = &j->e[idx[k]];
		tp_buf_printf(b,
		              "  %zu. %s call %lld: %.3f us, %+.1f%% against the median of its "
		              "siblings\n",
		              k + 1, e->device, (long long)e->call, (double)e->total_ns / 1000,
		              e->sibling_dev * 100);
	}
	if (j->nnotes)
		tp_buf_printf(b, "\nNotes (%zu)\n", j->nnotes);
	for (size_t i = 0; i < j->nnotes; i++)
		tp_buf_printf(b, "  %s\n", j->notes[i]);
	if (!j->nfailed)
		return;
	tp_buf_printf(b, "\nFailed (%zu)\n", j->nfailed);
	for (size_t i = 0; i < j->n; i++)
		if (!j->e[i].ok)
			tp_buf_printf(b, "  %s: exit %d: %s\n", j->e[i].name, j->e[i].exit_code,
			              j->e[i].error);
}

void tp_job_summary_text(const struct tp_job *j, struct tp_buf *b)
{
	size_t from = b->len;
	tp_buf_printf(b, "tpuprof job report: %s\n", j->title);
	tp_buf_printf(b, "%zu dumps: %zu converted, %zu failed; %zu devices\n", j->n,
	              j->n - j->nfailed, j->nfailed, j->ndevices);
	if (j->aligned)
		tp_buf_printf(b, "Devices aligned on the %s every call records.\n",
		              j->anchor == TP_JOB_ANCHOR_TRACE ? "trace clock" : "host wall clock");
	else
		tp_buf_puts(b, "Devices not aligned: not every call records a shared clock; each "
		               "device's calls run back to back from 0 in job.pftrace.\n");
	int w = dev_width(j);
	tp_buf_printf(b, "\n%-*s %5s %-8s %5s %12s %6s %6s %6s %6s %9s %6s %7s %9s  Dump\n", w,
	              "Device", "Call", "Chip", "Cores", "Total(us)", "TIU%", "GDMA%", "SDMA%",
	              "CDMA%", "DDR(GB/s)", "uArch%", "CoreImb", "vsSibl");
	for (size_t i = 0; i < j->n; i++)
		text_row(b, j, i, w);
	text_devices(b, j, w);
	text_findings(b, j);
	tp_buf_clean(b, from, TP_TEXT_TERM);
}

/* ---- job_summary.json --------------------------------------------------------------------- */

static void json_calls(struct tp_buf *b, const struct tp_job *j)
{
	tp_buf_puts(b, ",\"calls\":[");
	for (size_t i = 0; i < j->n; i++) {
		const struct tp_job_entry *e = &j->e[i];
		int f = 1;
		tp_buf_puts(b, i ? ",{" : "{");
		tp_jr_entry_fields(e, b, &f);
		tp_buf_puts(b, ",\"engine_util\":{");
		for (int k = 0; k < TP_ENGINES; k++) {
			int g = k == 0;
			tp_jr_json_num(b, &g, tp_track_kind_name((enum tp_track_kind)k),
			               e->eng_util[k]);
		}
		tp_buf_putc(b, '}');
		tp_jr_json_num(b, &f, "dev_share", e->dev_share);
		tp_jr_json_int(b, &f, "siblings", (int64_t)e->siblings);
		tp_jr_json_num(b, &f, "sibling_dev", e->sibling_dev);
		tp_jr_json_int(b, &f, "slowest", i == j->slowest);
		tp_jr_json_int(b, &f, "most_imbalanced", i == j->imbalanced);
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, ']');
}

static void json_devices(struct tp_buf *b, const struct tp_job *j)
{
	tp_buf_puts(b, ",\"devices\":[");
	int first = 1;
	for (size_t i = 0; i < j->n;) {
		size_t n;
		int64_t sum;
		size_t k = device_run(j, i, &n, &sum);
		int f = 1;
		tp_buf_puts(b, first ? "{" : ",{");
		first = 0;
		tp_jr_json_str(b, &f, "device", j->e[i].device);
		tp_jr_json_int(b, &f, "calls", (int64_t)(k - i));
		tp_jr_json_int(b, &f, "converted", (int64_t)n);
		tp_jr_json_int(b, &f, "total_ns", sum);
		tp_buf_putc(b, '}');
		i = k;
	}
	tp_buf_putc(b, ']');
}

void tp_job_summary_json(const struct tp_job *j, struct tp_buf *b)
{
	int f = 1;
	tp_buf_putc(b, '{');
	tp_jr_json_str(b, &f, "tool", "tpuprof");
	tp_jr_json_str(b, &f, "version", TP_VERSION);
	tp_jr_json_int(b, &f, "tpuprof_job_summary", 1);
	tp_jr_json_str(b, &f, "job", j->title);
	tp_jr_json_int(b, &f, "dumps", (int64_t)j->n);
	tp_jr_job_fields(j, b, &f);
	json_calls(b, j);
	json_devices(b, j);
	size_t idx[OUTLIERS];
	size_t n = outliers(j, idx, OUTLIERS);
	tp_buf_puts(b, ",\"outliers\":[");
	for (size_t k = 0; k < n; k++) {
		int g = 1;
		tp_buf_puts(b, k ? ",{" : "{");
		tp_jr_json_str(b, &g, "name", j->e[idx[k]].name);
		tp_jr_json_str(b, &g, "device", j->e[idx[k]].device);
		tp_jr_json_int(b, &g, "call", j->e[idx[k]].call);
		tp_jr_json_num(b, &g, "sibling_dev", j->e[idx[k]].sibling_dev);
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, ']');
	tp_jr_json_strs(b, "notes", j->notes, j->nnotes);
	tp_buf_puts(b, "}\n");
}
