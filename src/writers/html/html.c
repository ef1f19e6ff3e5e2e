/*
 * html.c — writes result.html: the page skeleton, CSS and JS embedded at build time from
 * src/writers/html/web/ (generated html_assets.c), with the profile's data as one JSON document
 * inside <script type="application/json" id="tp-data">. This file plans the page (lanes,
 * argument sets, memory records), fills the template, writes the document's head and string
 * table and lists the parts of the sections of html_lanes.c, html_args.c, html_data.c and (a
 * capture's page: its own script, counter lanes and "capture" section) html_capture.c, which
 * encode through html_cols.c; html_par.c writes the parts on --jobs threads.
 *
 * Data layout (read by the page script in web/, version 2): small things (arch, clocks, per-core
 * engine statistics, rankings, notes) as plain JSON; everything per command, per layer or per
 * memory record as binary integer columns (html_put_col: base64 of zigzag varints, plain / delta /
 * runs, whichever is shortest; about 20 bytes per command in all). Each timeline lane has "ts" (gap
 * from the previous command's end, ns), "dur" (with "durRes":1 the difference from
 * trunc(cyc / mhz * 1000)), name/type as indexes into one string table of the strings
 * actually used, cmd id, cycles, bytes, layer index + 1, height 0..1000 (only for lanes
 * without "hd":1: TIU and DMA heights are derived by the page), direction, dtype, stall,
 * dependency, argument set, class, depth, uArch rate, Alg / uArch Ops. A column with the same
 * value for every command is written as that one number (and left out when it is 0).
 *
 * Owns nothing beyond one call: every buffer is released before tp_html_write_file returns.
 * Memory beyond the profile: the parts' buffers and column buffers of 4 bytes per layer (each
 * column computed once, see html_vals), within budgets that do not grow with the thread count
 * (html_par.c); the Layer lanes made from the layer table, 4 bytes per layer (their slice
 * order); the memory records; the string table's maps, 8 bytes per profile string.
 * Strings from the input only ever pass through tp_buf_json_str (JSON, "</" and "<!--"
 * escaped) or html_text (the <title>), and the page inserts them with textContent.
 */
#include "model/argkeys.h"
#include "writers/html/html_int.h"

#include "writers/capreport/capreport.h"

#include "common/timings.h"

#include <string.h>

/* Generated from web/ by embed_assets.cmake. */
extern const unsigned char tp_html_page_html[];
extern const size_t tp_html_page_html_len;
extern const unsigned char tp_html_app_css[];
extern const size_t tp_html_app_css_len;
extern const unsigned char tp_html_app_js[];
extern const size_t tp_html_app_js_len;
extern const unsigned char tp_html_cap_js[]; /* a capture's page: the script's capture parts */
extern const size_t tp_html_cap_js_len;
extern const unsigned char tp_html_accel_js[];
extern const size_t tp_html_accel_js_len;

/* The column buffer (struct ctx.vals) holds at least this many values (256 KB). */
#define VALS_MIN ((size_t)1 << 16)

/* Text for an HTML element body (the <title>): & < > " ' become character references. */
static void html_text(struct tp_buf *b, const char *s)
{
	/* One line of valid UTF-8 without control characters (common's text-safety layer). */
	struct tp_buf t;
	tp_buf_init(&t);
	tp_text_put(&t, s, strlen(s), TP_TEXT_CTRL | TP_TEXT_LINE, 0, 0);
	s = t.data && !t.oom ? t.data : "";
	for (; *s; s++) {
		const char *ref = tp_html_ref(*s);
		if (ref)
			tp_buf_puts(b, ref);
		else
			tp_buf_putc(b, *s);
	}
	tp_buf_free(&t);
}

/* The strings `name` (an expression of the index i) for i in [0, n) as a JSON array's
 * elements, comma-separated. */
#define PUT_STRS(b, i, n, name)                                                                    \
	for (size_t i = 0; i < (size_t)(n); i++) {                                                 \
		if (i)                                                                             \
			tp_buf_putc(b, ',');                                                       \
		html_put_str(b, name);                                                             \
	}

static void emit_head(struct ctx *c, double bw_max_seen)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_profile *p = c->p;
	struct arch_facts f = html_facts_of(p->chip);
	tp_buf_puts(b, "{\"v\":1,\"arch\":");
	html_put_str(b, tp_arch_name(p->arch));
	tp_buf_puts(b, ",\"net\":");
	html_put_str(b, tp_str(p, p->net_name));
	tp_buf_puts(b, ",\"source\":");
	html_put_str(b, tp_str(p, p->source));
	tp_buf_puts(b, ",\"tiuMhz\":");
	html_put_real(b, p->tiu_freq_mhz);
	tp_buf_puts(b, ",\"gdmaMhz\":");
	html_put_real(b, p->gdma_freq_mhz);
	tp_buf_puts(b, ",\"spanNs\":");
	tp_buf_i64(b, p->span_end_ns - p->span_begin_ns);
	tp_buf_puts(b, ",\"ddrMaxGbps\":");
	html_put_real(b, f.ddr_max_gbps);
	tp_buf_puts(b, ",\"bwScale\":");
	html_put_real(b, c->bw_scale);
	tp_buf_puts(b, ",\"bwMaxSeen\":");
	html_put_real(b, bw_max_seen);
	tp_buf_puts(b, ",\"dirs\":[");
	PUT_STRS(b, d, TP_DIR_COUNT, tp_dir_name((enum tp_dir)d));
	tp_buf_puts(b, "],\"dtypes\":[");
	PUT_STRS(b, d, TP_DT_COUNT, tp_dtype_name((enum tp_dtype)d));
	tp_buf_puts(b, "],\"meta\":[");
	for (size_t i = 0; i < p->num_meta; i++) {
		if (i)
			tp_buf_putc(b, ',');
		tp_buf_putc(b, '[');
		html_put_str(b, tp_str(p, p->meta[i].key));
		tp_buf_putc(b, ',');
		html_put_str(b, tp_str(p, p->meta[i].value));
		tp_buf_putc(b, ']');
	}
	tp_buf_puts(b, "],\"notes\":[");
	PUT_STRS(b, i, p->num_notes, tp_str(p, p->notes[i].text));
	tp_buf_puts(b, "],\"devices\":[");
	PUT_STRS(b, i, p->num_devices, tp_str(p, p->devices[i].name));
	tp_buf_putc(b, ']');
}
#undef PUT_STRS

/* Profiles with device lanes: the accelerator section's script (web/accel.js, a function)
 * called with {"accelerator": ...}, summary.json's member (its strings escaped by
 * tp_buf_json_str, "</" included, so it cannot end the script element). Other pages get
 * nothing here. */
static void emit_accel(struct ctx *c)
{
	if (!c->a || !c->a->accel)
		return;
	struct tp_buf *b = &c->o.b;
	tp_buf_putc(b, '\n');
	tp_buf_put(b, tp_html_accel_js, tp_html_accel_js_len);
	tp_buf_puts(b, "({");
	tp_capreport_accel_json(c->p, c->a->accel, b);
	tp_buf_puts(b, "});\n");
}

/* ---- The data's own parts (the sections' are in html_lanes.c and html_data.c) ---- */

static void head_part(struct ctx *c, const struct part *pt)
{
	(void)pt;
	emit_head(c, c->bw_seen);
	tp_buf_puts(&c->o.b, ",\"lanes\":[");
}

/* A capture's page: after lane pt->u, its counter series; after the last, those of no lane. */
static void cap_lane_part(struct ctx *c, const struct part *pt)
{
	html_cap_lane_written(c, pt->u);
}

static void cap_lanes_end_part(struct ctx *c, const struct part *pt)
{
	(void)pt;
	html_cap_lanes_end(c);
}

static void cap_part(struct ctx *c, const struct part *pt)
{
	(void)pt;
	html_cap_emit(c);
}

static void lanes_end_part(struct ctx *c, const struct part *pt)
{
	(void)pt;
	tp_buf_putc(&c->o.b, ']');
}

static void analysis_part(struct ctx *c, const struct part *pt)
{
	(void)pt;
	html_emit_analysis(c, c->max_cores);
}

/* The string table last: it holds every string the sections above used (all numbered once
 * the finds are, or, on a capture's page, once the parts before it are written), in parts of
 * STRS_PART page indexes: strings [pt->a, pt->a + STRS_PART) (pt->k: 1 for the first, which
 * opens the array; 2 for the end, which closes it and the document). The ranges cover the
 * profile's string count, the most the page can use; those past the used ones are empty. */
#define STRS_PART 16384

static void strs_part(struct ctx *c, const struct part *pt)
{
	struct tp_buf *b = &c->o.b;
	if (pt->k == 2) {
		tp_buf_puts(b, "]}");
		return;
	}
	if (pt->k == 1)
		tp_buf_puts(b, ",\"strs\":[");
	size_t e = pt->a + STRS_PART < c->sm.n ? pt->a + STRS_PART : c->sm.n;
	for (size_t i = pt->a; i < e; i++) {
		if (i)
			tp_buf_putc(b, ',');
		html_put_str(b, tp_str(c->p, c->sm.inv[i]));
		html_flush(&c->o, 0);
	}
}

static void strs_parts(const struct ctx *c, struct parts *ps)
{
	for (size_t a = 0; a < c->sm.nprof; a += STRS_PART)
		html_part_add(ps, strs_part, NULL, a, 0, a == 0);
	html_part_add(ps, strs_part, NULL, 0, 0, 2);
}

/* The data's parts in page order, and the finds of the strings they use. */
static void data_parts(struct ctx *c, const struct lane *views, size_t nl, struct parts *finds,
                       struct parts *ps)
{
	html_part_add(ps, head_part, NULL, 0, 0, 0);
	for (size_t i = 0; i < nl; i++) {
		html_lane_parts(&views[i], i, finds, ps);
		if (c->cap)
			html_part_add(ps, cap_lane_part, &views[i], 0, 0, 0);
	}
	if (c->cap)
		html_part_add(ps, cap_lanes_end_part, NULL, 0, 0, 0);
	html_part_add(ps, lanes_end_part, NULL, 0, 0, 0);
	html_args_parts(c, finds, ps);
	html_part_add(ps, analysis_part, NULL, 0, 0, 0);
	html_part_add(finds, analysis_part, NULL, 0, 0, 0);
	html_layers_parts(c, finds, ps);
	html_mem_parts(c, finds, ps);
	if (c->cap)
		html_part_add(ps, cap_part, NULL, 0, 0, 0);
	strs_parts(c, ps);
}

/* Writes the page template, replacing @TITLE@, @CSS@, @JS@ and @DATA@ (the parts). */
static int emit_page(struct ctx *c, const struct parts *finds, const struct parts *ps)
{
	struct tp_buf *b = &c->o.b;
	const char *t = (const char *)tp_html_page_html;
	const char *end = t + tp_html_page_html_len;
	while (t < end && !c->o.err) {
		const char *at = memchr(t, '@', (size_t)(end - t));
		if (!at) {
			tp_buf_put(b, t, (size_t)(end - t));
			break;
		}
		tp_buf_put(b, t, (size_t)(at - t));
		t = at;
		if (!strncmp(t, "@TITLE@", 7) && c->cap) {
			tp_buf_puts(b, "tpuprof: capture of ");
			html_text(b, c->p->num_devices ? tp_str(c->p, c->p->devices[0].name)
			                               : "a process");
			t += 7;
		} else if (!strncmp(t, "@TITLE@", 7)) {
			const char *net = tp_str(c->p, c->p->net_name);
			tp_buf_puts(b, "tpuprof: ");
			html_text(b, *net ? net : "profile");
			tp_buf_puts(b, " on ");
			html_text(b, tp_arch_name(c->p->arch));
			t += 7;
		} else if (!strncmp(t, "@CSS@", 5)) {
			tp_buf_put(b, tp_html_app_css, tp_html_app_css_len);
			t += 5;
		} else if (!strncmp(t, "@JS@", 4)) {
			if (c->cap)
				tp_buf_put(b, tp_html_cap_js, tp_html_cap_js_len);
			else
				tp_buf_put(b, tp_html_app_js, tp_html_app_js_len);
			emit_accel(c);
			t += 4;
		} else if (!strncmp(t, "@DATA@", 6)) {
			int rc = html_parts_write(c, finds, ps);
			if (rc && !c->o.err)
				c->o.err = rc;
			t += 6;
		} else {
			tp_buf_putc(b, '@');
			t++;
		}
		html_flush(&c->o, 0);
	}
	html_flush(&c->o, 1);
	return c->o.err;
}

/* What the parts read, made before them: the lanes and their views, the argument sets to
 * embed, a capture's extras, the DMA bandwidth scale and the memory records. */
static int plan(struct ctx *c, struct lane **lanes, size_t *nl, struct lane **views,
                uint32_t ***ords)
{
	const struct tp_profile *p = c->p;
	int rc = html_collect_lanes(p, c->max_cores, c->jobs, lanes, nl);
	if (!rc)
		rc = html_plan_args(c, *lanes, *nl);
	if (!rc)
		rc = html_args_plan(c);
	if (!rc)
		rc = html_cap_new(p, c->a, *lanes, *nl, &c->cap);
	if (!rc)
		rc = html_bw_max_seen(p, c->jobs, *lanes, *nl, &c->bw_seen);
	if (!rc)
		rc = html_lane_views(c->jobs, *lanes, *nl, views, ords);
	if (!rc)
		rc = html_mem_plan(c);
	if (rc)
		return rc;
	/* DMA block heights: bandwidth over the arch's DDR peak, or over the highest bandwidth
	 * seen when the arch has no known peak (or a command exceeds it). */
	c->bw_scale = html_facts_of(p->chip).ddr_max_gbps;
	if (c->bw_seen > c->bw_scale)
		c->bw_scale = c->bw_seen;
	/* A column buffer: as many entries as layers (4 bytes a layer), at least VALS_MIN; lanes
	 * longer than that recompute their columns instead (same bytes). The parts borrow them
	 * (html_vals); a capture's page, on one thread, has its own. No buffer: the same bytes. */
	c->cap_vals = p->num_layers > VALS_MIN ? p->num_layers : VALS_MIN;
	if (c->cap && !(c->vals = tp_malloc(c->cap_vals * sizeof *c->vals)))
		c->cap_vals = 0;
	return TP_OK;
}

int html_write_file(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                    size_t max_cores, unsigned jobs, const struct html_budgets *budgets,
                    struct tp_diag *d)
{
	struct ctx c;
	struct tp_afile af = {0};
	struct lane *lanes = NULL, *views = NULL;
	uint32_t **ords = NULL;
	struct parts finds = {0}, ps = {0};
	struct tp_layer_memo memo;
	size_t nl = 0;
	int rc;
	memset(&c, 0, sizeof c);
	memset(&memo, 0, sizeof memo);
	c.p = p;
	c.a = a;
	c.t0 = p->span_begin_ns;
	c.max_cores = max_cores;
	c.jobs = jobs ? jobs : 1;
	c.budgets = *budgets;
	c.memo = &memo;
	tp_buf_init(&c.o.b);
	c.sm.nprof = p->strs.count ? p->strs.count : 1;
	if (c.sm.nprof < UINT32_MAX) {
		c.sm.idx = tp_calloc(c.sm.nprof, sizeof *c.sm.idx);
		c.sm.inv = tp_malloc(c.sm.nprof * sizeof *c.sm.inv);
	}
	if (!c.sm.idx || !c.sm.inv) {
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	c.k.uarch_rate = tp_profile_find_str(p, TP_KEY_UARCH_RATE);
	c.k.alg_ops = tp_profile_find_str(p, TP_KEY_ALG_OPS);
	c.k.uarch_ops = tp_profile_find_str(p, TP_KEY_UARCH_OPS);
	tp_tm_begin("plan");
	rc = plan(&c, &lanes, &nl, &views, &ords);
	tp_tm_end();
	if (!rc) {
		data_parts(&c, views, nl, &finds, &ps);
		rc = finds.oom || ps.oom ? TP_ENOMEM : TP_OK;
	}
	if (rc) {
		rc = tp_diag_set(d, rc, "%s: out of memory", path);
		goto out;
	}
	rc = tp_afile_open(&af, path, d);
	if (rc)
		goto out;
	c.o.f = &af;
	rc = emit_page(&c, &finds, &ps);
	if (rc) {
		rc = rc == TP_ENOMEM    ? tp_diag_set(d, rc, "%s: out of memory", path)
		     : rc == HTML_EMISS ? tp_diag_set(d, TP_EOUTPUT,
		                                      "%s: internal error: a string of the page "
		                                      "was not numbered",
		                                      path)
		                        : tp_afile_fail(&af, d);
		tp_afile_abort(&af);
		goto out;
	}
	rc = tp_afile_commit(&af, d);
out:
	tp_free(finds.v);
	tp_free(ps.v);
	html_mem_free(c.mem);
	html_args_free(c.args);
	html_cap_free(c.cap);
	for (size_t i = 0; ords && i < nl; i++)
		tp_free(ords[i]);
	tp_free(ords);
	tp_free(views);
	html_lanes_free(lanes, nl);
	tp_free(c.argmap);
	tp_free(c.vals);
	tp_free(c.sm.idx);
	tp_free(c.sm.inv);
	tp_buf_free(&c.o.b);
	return rc;
}

int tp_html_write_file(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                       size_t max_cores, unsigned jobs, struct tp_diag *d)
{
	return html_write_file(p, a, path, max_cores, jobs, &html_budgets_default, d);
}

int tp_html_output_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                         const struct tp_out_opts *o, struct tp_diag *d)
{
	return tp_html_write_file(p, a, path, o ? o->max_cores : 0,
	                          o && o->jobs > 0 ? (unsigned)o->jobs : 1, d);
}
