/*
 * main.c — the tpuprof-gendump command line: parses options, runs gd_generate and prints
 * one summary line. Owns nothing beyond main().
 *
 *   tpuprof-gendump [--arch BM1688|BM1684X|BM1684] [--cores N] [--cmds N] [--seed S]
 *                   [--layers conv=30,pool=8,...] [--net NAME] [--hostile] [--wrap]
 *                   [--no-sim] [--quiet] OUTDIR
 *   tpuprof-gendump --format cdm [--arch BM1690|SG2260|SG2260E] [--cores N] [--cmds N]
 *                   [--seed S] [--mode 0|1|2|bmodel] [--cdma-ports P] [--wrap] [--quiet] OUTDIR
 *
 * Exit codes: 0 ok, 1 usage, 3 output failure (tp_status_exit_code).
 */
#include "gendump.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void usage(FILE *f)
{
	fputs(
	    "usage: tpuprof-gendump [options] OUTDIR\n"
	    "Writes a synthetic Sophgo bmprofile_data directory (same options -> same bytes).\n"
	    "  --arch BM1688|BM1684X|BM1684  layout to write (default BM1688)\n"
	    "  --cores N               cores (BM1688: 1..2, default 2; BM1684X, BM1684: 1)\n"
	    "  --cmds N                commands per core, TIU + GDMA (default 10000)\n"
	    "  --seed S                random seed (default 1)\n"
	    "  --layers MIX            layer weights, e.g. conv=30,pool=8,add=12,matmul=10,"
	    "load=28,store=12\n"
	    "  --net NAME              net_name (default gen_net)\n"
	    "  --hostile               layer/net names with HTML, quotes, backslashes, unicode\n"
	    "  --wrap                  start the 32-bit TIU counter just below 2^32 so it wraps\n"
	    "  --no-sim                do not write net_stat.sim\n"
	    "  --quiet                 print nothing on success\n"
	    "  --format cdm            write a cdm_profile_data directory instead (BM1690/SG2260,\n"
	    "                          SG2260E): --arch BM1690|SG2260|SG2260E, --cores (8 / 4 by\n"
	    "                          default), --cmds per core, --seed, --wrap and\n"
	    "  --mode 0|1|2|bmodel     cdm: PMU only, DYN_DATA, DYN_EXTRA, bmodel descriptors (1)\n"
	    "  --cdma-ports P          cdm: CDMA port files (modes 1 and 2; default 0)\n",
	    f);
}

static int num(const char *opt, const char *s, uint64_t *v)
{
	if (!s || tp_parse_u64(s, strlen(s), v) != 0) {
		fprintf(stderr, "tpuprof-gendump: %s needs a non-negative integer\n", opt);
		return -1;
	}
	return 0;
}

/* An argument that is none of the options: the OUTDIR when none was given yet. Returns 1 (after
 * the message, `in` naming the format, and the usage with `show_usage`) for an unknown option
 * or a second OUTDIR. */
static int take_outdir(const char *a, const char **out, const char *in, int show_usage)
{
	if (a[0] == '-' && a[1]) {
		fprintf(stderr, "tpuprof-gendump: unknown or incomplete option '%s'%s\n", a, in);
		if (show_usage)
			usage(stderr);
		return 1;
	}
	if (*out) {
		fprintf(stderr, "tpuprof-gendump: more than one OUTDIR given\n");
		return 1;
	}
	*out = a;
	return 0;
}

static int main_cdm(int argc, char **argv)
{
	struct gd_cdm_opts o = {.cores = 0, .cmds = 10000, .seed = 1, .mode = GD_CDM_MODE1};
	struct tp_diag d = {0};
	const char *out = NULL;
	int quiet = 0;
	uint64_t v;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--format")) {
			i++;
		} else if (!strcmp(a, "--arch") && next) {
			if (!strcasecmp(next, "BM1690") || !strcasecmp(next, "SG2260"))
				o.sg2260e = 0;
			else if (!strcasecmp(next, "SG2260E"))
				o.sg2260e = 1;
			else {
				fprintf(
				    stderr,
				    "tpuprof-gendump: --format cdm: --arch must be BM1690, SG2260 "
				    "or SG2260E\n");
				return 1;
			}
			i++;
		} else if (!strcmp(a, "--cores") || !strcmp(a, "--cmds") || !strcmp(a, "--seed") ||
		           !strcmp(a, "--cdma-ports")) {
			if (num(a, next, &v))
				return 1;
			if (!strcmp(a, "--cores"))
				o.cores = v > 64 ? 65 : (unsigned)v;
			else if (!strcmp(a, "--cmds"))
				o.cmds = v;
			else if (!strcmp(a, "--seed"))
				o.seed = v;
			else
				o.cdma_ports = v > 64 ? 65 : (unsigned)v;
			i++;
		} else if (!strcmp(a, "--mode") && next) {
			if (!strcmp(next, "bmodel"))
				o.mode = GD_CDM_BMODEL;
			else if (next[0] >= '0' && next[0] <= '2' && !next[1])
				o.mode = next[0] - '0';
			else {
				fprintf(stderr,
				        "tpuprof-gendump: --mode must be 0, 1, 2 or bmodel\n");
				return 1;
			}
			i++;
		} else if (!strcmp(a, "--wrap")) {
			o.wrap = 1;
		} else if (!strcmp(a, "--quiet")) {
			quiet = 1;
		} else if (take_outdir(a, &out, " for --format cdm", 0)) {
			return 1;
		}
	}
	if (!out) {
		usage(stderr);
		return 1;
	}
	if (!o.cores)
		o.cores = o.sg2260e ? 4 : 8;
	struct gd_cdm_result r;
	int rc = gd_generate_cdm(&o, out, &r, &d);
	if (rc != TP_OK) {
		fprintf(stderr, "tpuprof-gendump: %s\n", d.msg);
		return tp_status_exit_code(rc);
	}
	if (!quiet) {
		uint64_t cmds = 0;
		for (unsigned c = 0; c < o.cores; c++)
			cmds += r.cmds[c][0] + r.cmds[c][1] + r.cmds[c][2];
		printf("tpuprof-gendump: %s: cdm %s, %u core(s), %llu commands, %llu bytes\n", out,
		       o.sg2260e ? "SG2260E" : "BM1690", o.cores, (unsigned long long)cmds,
		       (unsigned long long)r.bytes_total);
		for (unsigned c = 0; c < o.cores; c++)
			printf("core %u: TIU %llu GDMA %llu SDMA %llu\n", c,
			       (unsigned long long)r.cmds[c][0], (unsigned long long)r.cmds[c][1],
			       (unsigned long long)r.cmds[c][2]);
		for (unsigned p = 0; p < o.cdma_ports; p++)
			printf("port %u: CDMA %llu\n", p, (unsigned long long)r.cdma_cmds[p]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--format")) {
			if (!strcmp(argv[i + 1], "cdm"))
				return main_cdm(argc, argv);
			if (strcmp(argv[i + 1], "bmprofile") != 0) {
				fprintf(stderr,
				        "tpuprof-gendump: --format must be bmprofile or cdm\n");
				return 1;
			}
		}
	struct gd_opts o;
	struct tp_diag d = {0};
	const char *out = NULL;
	int quiet = 0, cores_given = 0;
	uint64_t v;
	gd_opts_default(&o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--arch") && next) {
			if (!strcmp(next, "BM1688") || !strcmp(next, "bm1688"))
				o.arch = 4;
			else if (!strcmp(next, "BM1684X") || !strcmp(next, "bm1684x"))
				o.arch = 3;
			else if (!strcmp(next, "BM1684") || !strcmp(next, "bm1684"))
				o.arch = 1;
			else {
				fprintf(stderr,
				        "tpuprof-gendump: --arch must be BM1688, BM1684X or "
				        "BM1684\n");
				return 1;
			}
			i++;
		} else if (!strcmp(a, "--format") && next) {
			i++; /* "bmprofile" (main() routed "cdm" elsewhere) */
		} else if (!strcmp(a, "--cores")) {
			if (num(a, next, &v) || v > 64)
				return 1;
			o.cores = (unsigned)v;
			cores_given = 1;
			i++;
		} else if (!strcmp(a, "--cmds")) {
			if (num(a, next, &v))
				return 1;
			o.cmds = v;
			i++;
		} else if (!strcmp(a, "--seed")) {
			if (num(a, next, &v))
				return 1;
			o.seed = v;
			i++;
		} else if (!strcmp(a, "--layers") && next) {
			if (gd_parse_mix(&o, next, &d) != TP_OK) {
				fprintf(stderr, "tpuprof-gendump: %s\n", d.msg);
				return 1;
			}
			i++;
		} else if (!strcmp(a, "--net") && next) {
			o.net = next;
			i++;
		} else if (!strcmp(a, "--hostile")) {
			o.hostile = 1;
		} else if (!strcmp(a, "--wrap")) {
			o.wrap = 1;
		} else if (!strcmp(a, "--no-sim")) {
			o.no_sim = 1;
		} else if (!strcmp(a, "--quiet")) {
			quiet = 1;
		} else if (take_outdir(a, &out, "", 1)) {
			return 1;
		}
	}
	if (!out) {
		usage(stderr);
		return 1;
	}
	if (o.arch != 4 && !cores_given)
		o.cores = 1;
	struct gd_result r;
	int rc = gd_generate(&o, out, &r, &d);
	if (rc != TP_OK) {
		fprintf(stderr, "tpuprof-gendump: %s\n", d.msg);
		return tp_status_exit_code(rc);
	}
	if (!quiet) {
		uint64_t cmds = 0;
		for (unsigned i = 0; i < o.cores; i++)
			cmds += r.tiu_cmds[i] + r.gdma_cmds[i];
		printf(
		    "tpuprof-gendump: %s: %u core(s), %llu commands, %llu bytes, %llu.%03llu us of "
		    "device time\n",
		    out, o.cores, (unsigned long long)cmds, (unsigned long long)r.bytes_total,
		    (unsigned long long)(r.span_ns / 1000), (unsigned long long)(r.span_ns % 1000));
	}
	return 0;
}
