/*
 * xlsx_gen.c — test and benchmark driver for the workbook (not installed): builds a synthetic
 * profile (xlsx_fixture.c), writes OUT_DIR/PerfDoc/PerfAI_output.xlsx through the same
 * entry point (tp_xlsx_output_write) the CLI uses, and prints on stdout a
 * JSON object with the numbers the workbook must show (from tp_analyze) for
 * xlsx_check.py. In `bench` mode it prints rows/s and peak RSS instead.
 *
 * usage: xlsx_gen engines OUT_DIR [TIU0 TIU1 GDMA0 GDMA1 SDMA0 SDMA1]
 *        xlsx_gen layers OUT_DIR | bad OUT_DIR | capture OUT_DIR [STEPS]
 *        xlsx_gen bench OUT_DIR COMMANDS
 *        xlsx_gen bench-profile OUT_DIR COMMANDS   (the same profile, no workbook: the RSS
 *                                                   baseline the workbook adds to)
 *        xlsx_gen bare OUT_DIR ROWS [CELLS]  libxlsxwriter's own ceiling: a bare
 *                  loop writing ROWS rows of CELLS cells (default 22, the average of a
 *                  tpuprof engine sheet; every third a short string, the rest numbers) into
 *                  OUT_DIR/bare.xlsx in constant_memory mode, no tpuprof code involved
 *        xlsx_gen bare OUT_DIR ROWS CELLS STR_PERMILLE STR_LEN FRAC_PERMILLE  the same with
 *                  the cell census of a real workbook (bench/xlsx_census.py): STR_PERMILLE
 *                  of the cells are strings of STR_LEN bytes, FRAC_PERMILLE of the numbers
 *                  have a fractional part (3 decimals, as the µs columns; libxlsxwriter's
 *                  "%.16G" costs more for them); formats as tpuprof uses them
 *
 * Environment: XLSX_GEN_ROWS (a count or "all") sets the row cap as the CLI's --xlsx_rows
 * does; XLSX_GEN_MAX_ROWS (16 ... 1048576) lowers the rows per sheet, which stands in for
 * Excel's limit (the workbook is then written by tp_xlsx_write with tp_xlsx_opts.max_rows);
 * XLSX_GEN_LAYERS sets the layers per core of the `layers` mode (default 4).
 */
#include "fixtures/c/xlsx_fixture.h"
#include "writers/xlsx/xlsx.h"

#include <xlsxwriter.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_expect(const struct tp_profile *p, const struct tp_analysis *a)
{
	printf("{\"total_time_ns\": %" PRId64 ", \"cores\": [", a->total_time_ns);
	for (size_t i = 0; i < a->num_cores; i++) {
		const struct tp_core_stats *c = &a->cores[i];
		printf("%s{\"core\": %d, \"tiu_cycle\": %" PRIu64 ", \"gdma_cycle\": %" PRIu64
		       ", \"gdma_ddr_gbps\": %.17g, \"tiu_util\": %.17g, \"parallelism\": %.17g}",
		       i ? ", " : "", (int)c->core, c->eng[TP_TRACK_TIU].working_cycle,
		       c->eng[TP_TRACK_GDMA].working_cycle, c->eng[TP_TRACK_GDMA].ddr_avg_gbps,
		       c->eng[TP_TRACK_TIU].utilization, c->parallelism);
	}
	printf("], \"tracks\": [");
	for (size_t i = 0; i < p->num_tracks; i++)
		printf("%s{\"kind\": \"%s\", \"core\": %d, \"count\": %zu, \"freq\": %.17g}",
		       i ? ", " : "", tp_track_kind_name((enum tp_track_kind)p->tracks[i].kind),
		       (int)p->tracks[i].core, p->tracks[i].count, p->tracks[i].freq_mhz);
	printf("]}\n");
}

/* The census-driven variant: same cell types and sizes as the workbook measured. */
static int bare_census(const char *dir, size_t rows, size_t cells, unsigned str_pm, size_t str_len,
                       unsigned frac_pm)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/bare.xlsx", dir);
	lxw_workbook_options wo = {.constant_memory = LXW_TRUE, .use_zip64 = LXW_TRUE};
	double t0 = now_s();
	lxw_workbook *wb = workbook_new_opt(path, &wo);
	if (!wb) {
		fprintf(stderr, "xlsx_gen: cannot create %s\n", path);
		return 3;
	}
	lxw_format *fint = workbook_add_format(wb), *freal = workbook_add_format(wb);
	format_set_num_format(fint, "0");
	format_set_num_format(freal, "0.000");
	/* Eight distinct strings of str_len bytes (at most 63). */
	char words[8][64];
	if (str_len > 63)
		str_len = 63;
	for (int w = 0; w < 8; w++) {
		for (size_t k = 0; k < str_len; k++)
			words[w][k] = (char)('a' + (w * 7 + (int)k) % 26);
		words[w][str_len] = '\0';
	}
	/* Which columns hold strings, spread over the row (error diffusion). */
	unsigned char *is_str = calloc(cells ? cells : 1, 1);
	if (!is_str)
		return 2;
	for (size_t c = 0, acc = 0; c < cells; c++) {
		acc += str_pm;
		if (acc >= 1000) {
			acc -= 1000;
			is_str[c] = 1;
		}
	}
	lxw_worksheet *ws = NULL;
	uint32_t r = 0;
	unsigned facc = 0;
	lxw_error e = LXW_NO_ERROR;
	for (size_t i = 0; i < rows && e == LXW_NO_ERROR; i++, r++) {
		if (!ws || r >= 1048575) {
			ws = workbook_add_worksheet(wb, NULL);
			r = 0;
		}
		for (size_t c = 0; c < cells; c++) {
			if (is_str[c]) {
				e = worksheet_write_string(ws, r, (lxw_col_t)c, words[(i + c) & 7],
				                           NULL);
				continue;
			}
			facc += frac_pm;
			if (facc >= 1000) {
				facc -= 1000;
				e = worksheet_write_number(ws, r, (lxw_col_t)c,
				                           (double)(i * 31 + c) / 1000.0, freal);
			} else {
				e = worksheet_write_number(ws, r, (lxw_col_t)c,
				                           (double)(i * 977 + c * 13), fint);
			}
		}
	}
	free(is_str);
	lxw_error ce = workbook_close(wb);
	double dt = now_s() - t0;
	if (e != LXW_NO_ERROR || ce != LXW_NO_ERROR) {
		fprintf(stderr, "xlsx_gen: %s\n", lxw_strerror(e != LXW_NO_ERROR ? e : ce));
		return 3;
	}
	printf("xlsx bare (census): %zu rows x %zu cells (%u/1000 strings of %zu B, %u/1000 "
	       "fractional numbers) in %.2f s wall = %.0f rows/s\n",
	       rows, cells, str_pm, str_len, frac_pm, dt, (double)rows / dt);
	return 0;
}

static int bare(const char *dir, size_t rows, size_t cells)
{
	static const char *const words[] = {"conv2d", "TIU",    "GDMA", "DDR->LMEM",
	                                    "INT8",   "matmul", "L2M",  "FP16"};
	char path[4096];
	snprintf(path, sizeof path, "%s/bare.xlsx", dir);
	lxw_workbook_options wo = {.constant_memory = LXW_TRUE};
	double t0 = now_s();
	lxw_workbook *wb = workbook_new_opt(path, &wo);
	if (!wb) {
		fprintf(stderr, "xlsx_gen: cannot create %s\n", path);
		return 3;
	}
	lxw_worksheet *ws = NULL;
	uint32_t r = 0;
	for (size_t i = 0; i < rows; i++, r++) {
		if (!ws || r >= 1048575) {
			ws = workbook_add_worksheet(wb, NULL);
			r = 0;
		}
		for (size_t c = 0; c < cells; c++) {
			if (c % 3 == 1)
				worksheet_write_string(ws, r, (lxw_col_t)c, words[(i + c) & 7],
				                       NULL);
			else
				worksheet_write_number(ws, r, (lxw_col_t)c,
				                       (double)i * 1.25 + (double)c, NULL);
		}
	}
	lxw_error e = workbook_close(wb);
	double dt = now_s() - t0;
	if (e != LXW_NO_ERROR) {
		fprintf(stderr, "xlsx_gen: %s\n", lxw_strerror(e));
		return 3;
	}
	printf("xlsx bare: %zu rows x %zu cells in %.2f s wall = %.0f rows/s\n", rows, cells, dt,
	       (double)rows / dt);
	return 0;
}

/* OUT_DIR/PerfDoc/PerfAI_output.xlsx with `max_rows` rows per sheet. */
/* The CLI's "xlsx" output (its registry entry) as far as this tool is concerned. */
static const struct tp_output xlsx_output = {
    .name = "xlsx", .file = TP_XLSX_FILE, .write = tp_xlsx_output_write};

static int write_max_rows(const struct tp_profile *p, const struct tp_analysis *a,
                          const struct tp_out_opts *o, uint32_t max_rows, struct tp_diag *d)
{
	char dir[4096], path[4200];
	snprintf(dir, sizeof dir, "%s/PerfDoc", o->out_dir);
	snprintf(path, sizeof path, "%s/%s", o->out_dir, TP_XLSX_FILE);
	int st = tp_mkdirs(dir, d);
	if (st != TP_OK)
		return st;
	struct tp_xlsx_opts xo = {.max_rows = max_rows, .row_cap = o->xlsx_rows};
	return tp_xlsx_write(p, a, path, &xo, d);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr,
		        "usage: xlsx_gen engines|layers|bad|capture|bench OUT_DIR [N...]\n");
		return 1;
	}
	const char *mode = argv[1];
	const char *rows_env = getenv("XLSX_GEN_ROWS");
	uint64_t cap = 0; /* the default */
	if (rows_env) {
		if (tp_xlsx_parse_rows(rows_env, &cap)) {
			fprintf(stderr, "xlsx_gen: XLSX_GEN_ROWS must be a count or 'all'\n");
			return 1;
		}
	}
	if (!strcmp(mode, "bare") && argc == 8)
		return bare_census(
		    argv[2], (size_t)strtoull(argv[3], NULL, 10),
		    (size_t)strtoull(argv[4], NULL, 10), (unsigned)strtoul(argv[5], NULL, 10),
		    (size_t)strtoull(argv[6], NULL, 10), (unsigned)strtoul(argv[7], NULL, 10));
	if (!strcmp(mode, "bare"))
		return bare(argv[2], argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : 1000000,
		            argc > 4 ? (size_t)strtoull(argv[4], NULL, 10) : 22);
	const char *max_env = getenv("XLSX_GEN_MAX_ROWS");
	uint64_t max_rows = 0; /* Excel's limit */
	if (max_env && (tp_parse_u64(max_env, strlen(max_env), &max_rows) != 0 || max_rows < 16 ||
	                max_rows > TP_XLSX_EXCEL_MAX_ROWS)) {
		fprintf(stderr, "xlsx_gen: XLSX_GEN_MAX_ROWS must be 16 ... %u\n",
		        TP_XLSX_EXCEL_MAX_ROWS);
		return 1;
	}
	struct tp_profile *p = NULL;
	struct fx_engines_cfg cfg = {.tiu = {257, 47}, .gdma = {145, 21}, .sdma = {0, 0}};
	const char *layers_env = getenv("XLSX_GEN_LAYERS");
	if (layers_env)
		cfg.layers_per_core = (size_t)strtoull(layers_env, NULL, 10);
	int bench = !strcmp(mode, "bench") || !strcmp(mode, "bench-profile");
	int write = strcmp(mode, "bench-profile") != 0;
	if (!strcmp(mode, "engines") || !strcmp(mode, "layers") || !strcmp(mode, "bad")) {
		size_t *v[] = {&cfg.tiu[0],  &cfg.tiu[1],  &cfg.gdma[0],
		               &cfg.gdma[1], &cfg.sdma[0], &cfg.sdma[1]};
		for (int i = 3; i < argc && i - 3 < 6; i++)
			*v[i - 3] = (size_t)strtoull(argv[i], NULL, 10);
		cfg.layers = !strcmp(mode, "layers");
		cfg.bad_strings = !strcmp(mode, "bad");
		p = fx_engines(&cfg);
	} else if (!strcmp(mode, "capture")) {
		p = fx_capture(argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 4);
	} else if (bench) {
		size_t n = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : 1000000;
		/* Most commands on TIU core 0 so one sheet passes Excel's row limit when n does. */
		cfg.tiu[0] = n * 7 / 10;
		cfg.tiu[1] = n / 10;
		cfg.gdma[0] = n / 10;
		cfg.gdma[1] = n - cfg.tiu[0] - cfg.tiu[1] - cfg.gdma[0];
		p = fx_engines(&cfg);
	} else {
		fprintf(stderr, "xlsx_gen: unknown mode %s\n", mode);
		return 1;
	}
	if (!p) {
		fprintf(stderr, "xlsx_gen: out of memory building the profile\n");
		return 2;
	}
	struct tp_analysis a;
	if (tp_analyze(p, &a) != TP_OK) {
		fprintf(stderr, "xlsx_gen: analysis failed\n");
		tp_profile_free(p);
		return 2;
	}
	struct tp_out_opts o = {.out_dir = argv[2], .xlsx_rows = cap};
	struct tp_diag d = {0};
	double t0 = now_s();
	int st = !write     ? TP_OK
	         : max_rows ? write_max_rows(p, &a, &o, (uint32_t)max_rows, &d)
	                    : tp_output_write(&xlsx_output, p, &a, &o, &d);
	double dt = now_s() - t0;
	if (st != TP_OK) {
		fprintf(stderr, "xlsx_gen: %s\n", d.msg);
	} else if (bench) {
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		size_t rows = tp_profile_slice_count(p);
		double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		if (write)
			printf("xlsx bench: %zu command rows written in %.2f s wall = %.0f rows/s; "
			       "process CPU %.2f s; peak RSS %ld MiB\n",
			       rows, dt, (double)rows / dt, cpu, ru.ru_maxrss / 1024);
		else
			printf(
			    "xlsx bench: profile of %zu commands built, no workbook; process CPU "
			    "%.2f s; peak RSS %ld MiB\n",
			    rows, cpu, ru.ru_maxrss / 1024);
	} else {
		print_expect(p, &a);
	}
	tp_analysis_free(&a);
	tp_profile_free(p);
	return st == TP_OK ? 0 : tp_status_exit_code(st);
}
