/*
 * gendump.h — interface of the synthetic Sophgo bmprofile_data generator (tpuprof-gendump).
 *
 * The generator writes a complete, valid profile directory in the BM1688 (2-core capable),
 * BM1684X or BM1684 layout described in shared/specs/sophgo-bmprofile.md: global.profile,
 * iter0.profile, cmd_<base>_<core>_<engine>.dat and a small net_stat.sim. Everything is
 * derived from the options (above all the seed), so the same options give the same bytes.
 * Records are written as they are produced (buffered writers at precomputed file offsets),
 * so memory use does not grow with the number of commands.
 *
 * This is a tool, not part of the tpcore library: it owns no global state and never prints;
 * errors come back as a tp status with a message in a tp_diag.
 */
#ifndef TP_GENDUMP_H
#define TP_GENDUMP_H

#include <stdint.h>

#include "common/common.h"

/* Layer kinds the generator can emit; the mix gives their relative weights. */
enum gd_kind { GD_CONV, GD_POOL, GD_ADD, GD_MATMUL, GD_LOAD, GD_STORE, GD_NKIND };

struct gd_opts {
	int arch;               /* 4 BM1688, 3 BM1684X, 1 BM1684 (the global.profile arch= value) */
	unsigned cores;         /* BM1688: 1..2, BM1684X and BM1684: 1 */
	uint64_t cmds;          /* commands per core, TIU + GDMA, including sys commands */
	uint64_t seed;          /* everything random derives from this */
	unsigned mix[GD_NKIND]; /* relative weights of the layer kinds */
	const char *net;        /* net_name (NULL: "gen_net", or a hostile name with hostile) */
	int hostile;            /* layer/net names with HTML, quotes, backslashes, unicode */
	int wrap;               /* start the 32-bit TIU counter just below 2^32 so it wraps */
	int no_sim;             /* do not write net_stat.sim */
};
typedef struct gd_opts gd_opts;

/* What one generation produced (for tests and the CLI's closing line). */
struct gd_result {
	uint64_t tiu_cmds[2], gdma_cmds[2];   /* commands per core and engine (COMMAND counts) */
	uint64_t tiu_recs[2], gdma_recs[2];   /* PMU records written per core */
	uint64_t dyn_recs[2];                 /* DYN_DATA records per core */
	uint64_t tiu_bytes[2], gdma_bytes[2]; /* cmd file sizes (with zero padding) */
	uint64_t bd_base[2], gdma_base[2];    /* device addresses naming the cmd files */
	uint64_t bytes_total;                 /* all files together */
	uint64_t span_ns;                     /* real time from first command to last end */
};
typedef struct gd_result gd_result;

/* Fills `o` with the defaults: BM1688, 2 cores, 10 000 commands per core, seed 1, the
 * default layer mix (conv 30, pool 8, add 12, matmul 10, load 28, store 12). */
void gd_opts_default(struct gd_opts *o);

/* Parses a layer mix such as "conv=30,pool=10,add=15,matmul=10,load=25,store=10" into
 * o->mix (kinds not named get weight 0). Returns TP_OK or TP_EUSAGE with a message. */
int gd_parse_mix(struct gd_opts *o, const char *spec, struct tp_diag *d);

/* Checks the options and returns the smallest valid --cmds for them in *min_cmds (may be
 * NULL). TP_OK or TP_EUSAGE with a message. */
int gd_check(const struct gd_opts *o, uint64_t *min_cmds, struct tp_diag *d);

/* Writes the dump into directory `outdir` (created if missing). Every file is written under
 * a temporary name and renamed into place at the end, so a failed run leaves no complete-
 * looking file. `res` may be NULL. Returns TP_OK, TP_EUSAGE (bad options) or TP_EOUTPUT /
 * TP_ENOMEM with a message naming the path. Not thread-safe with itself on one outdir. */
int gd_generate(const struct gd_opts *o, const char *outdir, struct gd_result *res,
                struct tp_diag *d);

/* ---- cdm_profile_data (gendump_cdm.c) ---------------------------------------------------- */

enum gd_cdm_mode { GD_CDM_MODE0 = 0, GD_CDM_MODE1 = 1, GD_CDM_MODE2 = 2, GD_CDM_BMODEL = 3 };

struct gd_cdm_opts {
	int sg2260e;    /* 0 BM1690/SG2260 (8 cores max), 1 SG2260E (4 cores max) */
	unsigned cores; /* cdmlib files */
	uint64_t cmds;  /* commands per core (TIU 45 %, GDMA 50 %, SDMA the rest) */
	uint64_t seed;
	int mode;            /* enum gd_cdm_mode */
	unsigned cdma_ports; /* cdma0_{port}.profile files (modes 1 and 2) */
	int wrap;            /* start the cycle counters just below 2^32 */
};

struct gd_cdm_result {
	uint64_t cmds[8][3];    /* TIU, GDMA, SDMA commands per core after the init pair */
	uint64_t cdma_cmds[16]; /* per port */
	uint64_t bytes_total;   /* all files */
	uint64_t span_cycles;   /* real cycles from 0 to the last end */
};

/* Writes a cdm dump into `outdir` (created if missing); files appear under temporary names
 * and are renamed into place. Same options, same bytes. Returns TP_OK, TP_EUSAGE (bad
 * options), TP_EOUTPUT or TP_ENOMEM with a message. `res` may be NULL. */
int gd_generate_cdm(const struct gd_cdm_opts *o, const char *outdir, struct gd_cdm_result *res,
                    struct tp_diag *d);

#endif /* TP_GENDUMP_H */
