/*
 * regdef_test.c — consistency checks of the transcribed register tables (regdef_<chip>.c):
 * every class's widths add up to its length with no field of width 0 or > 64 and none
 * crossing a 64-bit word (the ctypes layout of regdef.py equals LSB-first packing only then);
 * the header fields sit where specs/sophgo-costmodel.md §1.4 says the decoder reads them;
 * every class length equals §1.2; every op-index entry names an existing class, lists its
 * sub-operation codes once each in ascending order, and no two entries claim the same header
 * key. The checkers are run once on a deliberately broken table to show that they fail.
 *
 * To check another chip's table, add it to `isas` below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "readers/sophgo/isa/sg_isa.h"

static const struct sg_isa *const isas[] = {
    &sg_isa_bm1688,
    &sg_isa_bm1690,
    &sg_isa_cv184x,
    &sg_isa_bm1684x,
};

enum { ENG_TIU, ENG_DMA, ENG_CDMA };
static const char *const eng_name[] = {"TIU", "DMA", "CDMA"};

static int fails;

static void report(const struct sg_isa *isa, int eng, const char *cls, const char *fmt, ...)
{
	va_list ap;
	const struct sg_chip *c = sg_chip_by_arch(isa->arch);
	printf("FAIL %s %s %s: ", c ? c->c.name : "?", eng_name[eng], cls);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fails++;
}

static void classes(const struct sg_isa *isa, int eng, const struct sg_regclass **cls, size_t *n)
{
	*cls = eng == ENG_TIU ? isa->tiu : eng == ENG_DMA ? isa->dma : isa->cdma;
	*n = eng == ENG_TIU ? isa->ntiu : eng == ENG_DMA ? isa->ndma : isa->ncdma;
}

static void opclasses(const struct sg_isa *isa, int eng, const struct sg_opclass **ops, size_t *n)
{
	*ops = eng == ENG_TIU ? isa->tiu_ops : eng == ENG_DMA ? isa->dma_ops : isa->cdma_ops;
	*n = eng == ENG_TIU ? isa->ntiu_ops : eng == ENG_DMA ? isa->ndma_ops : isa->ncdma_ops;
}

/* Bit offset and width of the first field called `name`; 0 if the class has none. */
static int field_at(const struct sg_regclass *r, const char *name, unsigned *off, unsigned *w)
{
	unsigned o = 0;
	for (size_t i = 0; i < r->nfields; i++) {
		if (strcmp(r->fields[i].name, name) == 0) {
			*off = o;
			*w = r->fields[i].width;
			return 1;
		}
		o += r->fields[i].width;
	}
	return 0;
}

/* Name and width of the field that starts at bit `at`; NULL if none does. */
static const char *field_named_at(const struct sg_regclass *r, unsigned at, unsigned *w)
{
	unsigned o = 0;
	for (size_t i = 0; i < r->nfields && o <= at; i++) {
		if (o == at) {
			*w = r->fields[i].width;
			return r->fields[i].name;
		}
		o += r->fields[i].width;
	}
	return NULL;
}

/* Fields of the vendor tables that do cross a 64-bit word. They are kept as transcribed:
 * LSB-first packing (what the hardware xlsx describes, and what the widths adding up to
 * `length` imply) places them as listed, while tpu-mlir's ctypes layout would push them to
 * the next word; no reference dump holds such a command, so which one the vendor's output
 * follows is unverified. Each entry must still be hit, so a stale one fails. */
static const struct crossing {
	enum tp_arch arch;
	const char *cls, *field;
} crossings[] = {
    {TP_ARCH_BM1690, "sLIN", "opt_rsv0"}, /* bits 55..83 (regdef.py sLIN_reg, 288 bits) */
};
static int crossings_hit[sizeof crossings / sizeof crossings[0]];

static int known_crossing(const struct sg_isa *isa, const char *cls, const char *field)
{
	for (size_t i = 0; i < sizeof crossings / sizeof crossings[0]; i++)
		if (crossings[i].arch == isa->arch && strcmp(crossings[i].cls, cls) == 0 &&
		    strcmp(crossings[i].field, field) == 0) {
			crossings_hit[i]++;
			return 1;
		}
	return 0;
}

/* Classes whose widths do not add up to their `length` in the vendor table. Kept as
 * transcribed; the decoder advances by `length` and must not read fields past it. Each entry
 * must still be hit. */
static const struct overlong {
	enum tp_arch arch;
	const char *cls;
	unsigned sum;
} overlongs[] = {
    /* target_cv184x/regdef.py lists index_hstride (absent from the BM1688/BM1690 tables):
     * 800 bits of fields in a 768-bit descriptor. */
    {TP_ARCH_CV184X, "DMA_gather", 800},
    {TP_ARCH_CV184X, "DMA_scatter", 800},
};
static int overlongs_hit[sizeof overlongs / sizeof overlongs[0]];

static int known_overlong(const struct sg_isa *isa, const char *cls, unsigned sum)
{
	for (size_t i = 0; i < sizeof overlongs / sizeof overlongs[0]; i++)
		if (overlongs[i].arch == isa->arch && strcmp(overlongs[i].cls, cls) == 0 &&
		    overlongs[i].sum == sum) {
			overlongs_hit[i]++;
			return 1;
		}
	return 0;
}

/* Widths: each 1..64, no 64-bit word crossed, sum == length (but the listed exceptions). */
static void check_widths(const struct sg_isa *isa, int eng, const struct sg_regclass *r)
{
	unsigned off = 0;
	if (r->nfields == 0 || r->fields == NULL)
		report(isa, eng, r->op_name, "no fields");
	for (size_t i = 0; i < r->nfields; i++) {
		unsigned w = r->fields[i].width;
		if (w == 0 || w > 64)
			report(isa, eng, r->op_name, "field %s has width %u", r->fields[i].name, w);
		else if (off / 64 != (off + w - 1) / 64 &&
		         !known_crossing(isa, r->op_name, r->fields[i].name))
			report(isa, eng, r->op_name, "field %s (bits %u..%u) crosses a 64-bit word",
			       r->fields[i].name, off, off + w - 1);
		if (r->fields[i].name == NULL || r->fields[i].name[0] == '\0')
			report(isa, eng, r->op_name, "field %zu has no name", i);
		off += w;
	}
	if (off != r->length && !known_overlong(isa, r->op_name, off))
		report(isa, eng, r->op_name, "widths add up to %u, length is %u", off, r->length);
}

static int name_in(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(name, *list) == 0)
			return 1;
	return 0;
}

/* Descriptor length in bits by specs/sophgo-costmodel.md §1.2; 0 = the table does not say. */
static unsigned spec_length(enum tp_arch arch, int eng, const char *name)
{
	/* SEG/sSEG (BM1684X) are not in §1.2; their lengths are regdef.py's, in line with the
	 * table's "TIU long (all classes) 1024". */
	static const char *const tiu_long[] = {
	    "CONV", "CONV_BW", "MM", "MM2", "CMP",   "SFU",      "VC",   "LIN", "AR",
	    "PorD", "RQ&DQ",   "SG", "SGL", "CW&BC", "TRANS&BC", "RAND", "SEG", NULL};
	static const char *const tiu_512[] = {"sCONV", "sCONV_BW", "sPorD", "sAR", NULL};
	static const char *const tiu_384[] = {"sMM", "sCMP", "sVC", "sSG", "sSGL", NULL};
	static const char *const tiu_256[] = {"sMM2",    "sSFU",       "sRQ&sDQ",
	                                      "sCW&sBC", "sTRANS&sBC", NULL};
	static const char *const tiu_128[] = {"SYS_TR_ACC", "LAR", "SYSID", "sSEG", NULL};
	static const char *const cdma_256[] = {
	    "CDMA_send",           "CDMA_general",          "CDMA_receive",
	    "CDMA_lossy_compress", "CDMA_lossy_decompress", NULL};
	static const char *const cdma_512[] = {"CDMA_read", "CDMA_write", NULL};
	static const char *const cdma_128[] = {"sCDMA_sys", "CDMA_tcp_send", "CDMA_tcp_rcv", NULL};
	static const char *const x_dma_384[] = {"sDMA_general", "sDMA_nonzero", NULL};
	static const char *const x_dma_512[] = {"sDMA_matrix", "sDMA_masked_select", NULL};

	static const char *const slin[] = {"sLIN", NULL};
	static const char *const sys[] = {"SYS", NULL};
	static const char *const sdma_sys[] = {"sDMA_sys", NULL};
	/* The first rule whose engine, arch (UNKNOWN: any) and names match. */
	static const struct {
		int eng;
		enum tp_arch arch;
		const char *const *names;
		unsigned bits;
	} rules[] = {
	    {ENG_TIU, TP_ARCH_UNKNOWN, tiu_long, 1024}, {ENG_TIU, TP_ARCH_UNKNOWN, tiu_512, 512},
	    {ENG_TIU, TP_ARCH_UNKNOWN, tiu_384, 384},   {ENG_TIU, TP_ARCH_UNKNOWN, tiu_256, 256},
	    {ENG_TIU, TP_ARCH_BM1690, slin, 288},       {ENG_TIU, TP_ARCH_UNKNOWN, slin, 256},
	    {ENG_TIU, TP_ARCH_CV184X, sys, 64},         {ENG_TIU, TP_ARCH_UNKNOWN, sys, 128},
	    {ENG_TIU, TP_ARCH_UNKNOWN, tiu_128, 128},   {ENG_DMA, TP_ARCH_UNKNOWN, sdma_sys, 128},
	    {ENG_DMA, TP_ARCH_BM1684X, x_dma_384, 384}, {ENG_DMA, TP_ARCH_BM1684X, x_dma_512, 512},
	    {ENG_CDMA, TP_ARCH_UNKNOWN, cdma_256, 256}, {ENG_CDMA, TP_ARCH_UNKNOWN, cdma_512, 512},
	    {ENG_CDMA, TP_ARCH_UNKNOWN, cdma_128, 128},
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (rules[i].eng == eng && (!rules[i].arch || rules[i].arch == arch) &&
		    name_in(name, rules[i].names))
			return rules[i].bits;
	/* Every other long DMA class. */
	return eng == ENG_DMA && strncmp(name, "DMA_", 4) == 0 ? 768 : 0;
}

/* Header fields where the decoder reads them (§1.4). */
static void check_header(const struct sg_isa *isa, int eng, const struct sg_regclass *r)
{
	const struct sg_chip *chip = sg_chip_by_arch(isa->arch);
	unsigned off, w;
	if (eng == ENG_TIU) {
		/* SYS_TR_ACC (and BM1690's SYSID, same layout) carry a 3-bit tsk_eu_typ. */
		int sys_acc = strcmp(r->op_name, "SYS_TR_ACC") == 0 ||
		              (strcmp(r->op_name, "SYSID") == 0 && isa->arch == TP_ARCH_BM1690);
		if (field_at(r, "cmd_short", &off, &w) && (off != 0 || w != 1))
			report(isa, eng, r->op_name, "cmd_short at %u width %u, want 0/1", off, w);
		if (!field_at(r, "tsk_typ", &off, &w) || off != 41 || w != 4)
			report(isa, eng, r->op_name, "tsk_typ not at bits 41..44");
		if (!field_at(r, "tsk_eu_typ", &off, &w) || off != 45 || w != (sys_acc ? 3u : 5u))
			report(isa, eng, r->op_name, "tsk_eu_typ not at bit 45 with width %u",
			       sys_acc ? 3u : 5u);
	} else if (eng == ENG_DMA) {
		unsigned tb = chip ? chip->dma_cmd_type_bits : 0;
		if (field_at(r, "cmd_short", &off, &w) && (off != 3 || w != 1))
			report(isa, eng, r->op_name, "cmd_short at %u width %u, want 3/1", off, w);
		if (!field_at(r, "cmd_type", &off, &w) || off != 32 || w != tb)
			report(isa, eng, r->op_name,
			       "cmd_type not at bit 32 with the chip's width %u", tb);
		/* BM1684X's sDMA_masked_select names it "cmd_special_function(mask_mem)". */
		const char *sp = field_named_at(r, 32 + tb, &w);
		if (sp == NULL || strncmp(sp, "cmd_special_function", 20) != 0 || w != 3)
			report(isa, eng, r->op_name,
			       "cmd_special_function not right after cmd_type");
	} else {
		if (!field_at(r, "cmd_type", &off, &w) || off != 4 || w != 4)
			report(isa, eng, r->op_name, "cmd_type not at bits 4..7");
		if (field_at(r, "cmd_special_function", &off, &w) && (off != 8 || w != 3))
			report(isa, eng, r->op_name, "cmd_special_function not at bits 8..10");
	}
}

static void check_classes(const struct sg_isa *isa, int eng)
{
	const struct sg_regclass *cls;
	size_t n;
	classes(isa, eng, &cls, &n);
	for (size_t i = 0; i < n; i++) {
		const struct sg_regclass *r = &cls[i];
		unsigned want = spec_length(isa->arch, eng, r->op_name);
		check_widths(isa, eng, r);
		check_header(isa, eng, r);
		if (want == 0)
			report(isa, eng, r->op_name, "class not covered by costmodel §1.2");
		else if (r->length != want)
			report(isa, eng, r->op_name, "length %u, costmodel §1.2 says %u", r->length,
			       want);
		for (size_t j = 0; j < i; j++)
			if (strcmp(cls[j].op_name, r->op_name) == 0)
				report(isa, eng, r->op_name, "class listed twice");
	}
}

/* One header key: (cmd_short 0/1, op, sub). A class without sub names claims every sub. */
static int keys_clash(const struct sg_opclass *a, const struct sg_opclass *b)
{
	if (a->op != b->op)
		return 0;
	if (a->is_short >= 0 && b->is_short >= 0 && a->is_short != b->is_short)
		return 0;
	if (a->nsubs == 0 || b->nsubs == 0)
		return 1;
	for (size_t i = 0; i < a->nsubs; i++)
		for (size_t j = 0; j < b->nsubs; j++)
			if (a->subs[i].code == b->subs[j].code)
				return 1;
	return 0;
}

static void check_ops(const struct sg_isa *isa, int eng)
{
	const struct sg_regclass *cls;
	const struct sg_opclass *ops;
	size_t ncls, nops;
	classes(isa, eng, &cls, &ncls);
	opclasses(isa, eng, &ops, &nops);
	if (ncls > 0 && nops == 0)
		report(isa, eng, "-", "classes but no op index");
	for (size_t i = 0; i < nops; i++) {
		const struct sg_opclass *o = &ops[i];
		size_t k;
		for (k = 0; k < ncls; k++)
			if (strcmp(cls[k].op_name, o->op_name) == 0)
				break;
		if (k == ncls)
			report(isa, eng, o->op_name, "op index names a class the table lacks");
		if (o->is_short < -1 || o->is_short > 1)
			report(isa, eng, o->op_name, "is_short %d", o->is_short);
		if ((o->nsubs == 0) != (o->subs == NULL))
			report(isa, eng, o->op_name, "subs and nsubs disagree");
		for (size_t s = 0; s < o->nsubs; s++) {
			if (o->subs[s].name == NULL || o->subs[s].name[0] == '\0')
				report(isa, eng, o->op_name, "sub %u has no name", o->subs[s].code);
			if (s > 0 && o->subs[s].code <= o->subs[s - 1].code)
				report(isa, eng, o->op_name, "sub codes not ascending at %u",
				       o->subs[s].code);
		}
		for (size_t j = 0; j < i; j++)
			if (keys_clash(o, &ops[j]))
				report(isa, eng, o->op_name,
				       "header key (short %d, op %u) also selects %s", o->is_short,
				       o->op, ops[j].op_name);
	}
}

static int check_isa(const struct sg_isa *isa)
{
	int before = fails;
	if (sg_chip_by_arch(isa->arch) == NULL) {
		printf("FAIL arch %d has no chip row\n", (int)isa->arch);
		fails++;
	}
	if (isa->source == NULL || strstr(isa->source, "tpu-mlir") == NULL)
		report(isa, ENG_TIU, "-", "no source named");
	for (int e = ENG_TIU; e <= ENG_CDMA; e++) {
		check_classes(isa, e);
		check_ops(isa, e);
	}
	if (isa->ntiu == 0 || isa->ndma == 0)
		report(isa, ENG_TIU, "-", "TIU or DMA table empty");
	if ((isa->arch == TP_ARCH_BM1690) != (isa->ncdma > 0))
		report(isa, ENG_CDMA, "-", "CDMA tables belong to BM1690 only");
	return fails - before;
}

/* A listed exception must match exactly once: 0 if it did, else 1 after saying so. */
static int not_once(int hits, const char *what)
{
	if (hits == 1)
		return 0;
	printf("FAIL the exception above matched %d %s, want 1\n", hits, what);
	return 1;
}

static void test_tables(void **state)
{
	(void)state;
	fails = 0;
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		size_t nf = 0;
		for (size_t k = 0; k < isas[i]->ntiu; k++)
			nf += isas[i]->tiu[k].nfields;
		printf(
		    "%s: %u TIU, %u DMA, %u CDMA classes (%zu TIU fields), %u+%u+%u op entries\n",
		    sg_chip_by_arch(isas[i]->arch)->c.name, isas[i]->ntiu, isas[i]->ndma,
		    isas[i]->ncdma, nf, isas[i]->ntiu_ops, isas[i]->ndma_ops, isas[i]->ncdma_ops);
		check_isa(isas[i]);
	}
	for (size_t i = 0; i < sizeof crossings / sizeof crossings[0]; i++) {
		printf("%s %s.%s crosses a 64-bit word (listed exception)\n",
		       sg_chip_by_arch(crossings[i].arch)->c.name, crossings[i].cls,
		       crossings[i].field);
		fails += not_once(crossings_hit[i], "fields");
	}
	for (size_t i = 0; i < sizeof overlongs / sizeof overlongs[0]; i++) {
		printf("%s %s: fields add up to %u bits (listed exception)\n",
		       sg_chip_by_arch(overlongs[i].arch)->c.name, overlongs[i].cls,
		       overlongs[i].sum);
		fails += not_once(overlongs_hit[i], "classes");
	}
	assert_int_equal(fails, 0);
}

/* The checkers must catch each kind of mistake: a broken BM1690-like table. */
static void test_checkers_fail(void **state)
{
	static const struct sg_field bad_sum[] = {{"cmd_short", 1},
	                                          {"x", 40},
	                                          {"tsk_typ", 4},
	                                          {"tsk_eu_typ", 5},
	                                          {"rest", 13}}; /* 63 bits, tsk_typ at 41 */
	static const struct sg_field cross[] = {{"cmd_short", 1},  {"a", 40}, {"tsk_typ", 4},
	                                        {"tsk_eu_typ", 5}, {"b", 10}, {"c", 8},
	                                        {"d", 60}}; /* c crosses bit 64 */
	static const struct sg_field zero[] = {{"cmd_short", 1},  {"a", 40}, {"tsk_typ", 4},
	                                       {"tsk_eu_typ", 5}, {"z", 0},  {"rest", 78}};
	static const struct sg_field hdr[] = {{"cmd_short", 1},
	                                      {"a", 39},
	                                      {"tsk_typ", 4},
	                                      {"tsk_eu_typ", 5},
	                                      {"rest", 79}}; /* tsk_typ at 40 */
	static const struct sg_regclass tiu[] = {
	    {"sLIN", 288, bad_sum, 5}, {"SYS", 128, cross, 7}, {"SYS_TR_ACC", 128, zero, 6},
	    {"LAR", 128, hdr, 5},      {"NOPE", 128, hdr, 5},
	};
	static const struct sg_subname s1[] = {{1, "a"}, {2, "b"}}, s2[] = {{2, "c"}},
	                               s3[] = {{3, "x"}, {3, "y"}};
	static const struct sg_opclass ops[] = {
	    {"SYS", -1, 15, s1, 2},
	    {"LAR", 1, 15, s2, 1},
	    {"GONE", 0, 1, NULL, 0},
	    {"sLIN", 0, 10, s3, 2},
	};
	static const struct sg_isa broken = {.arch = TP_ARCH_BM1690,
	                                     .source = "nowhere",
	                                     .tiu = tiu,
	                                     .ntiu = 5,
	                                     .tiu_ops = ops,
	                                     .ntiu_ops = 4};
	(void)state;
	fails = 0;
	printf("-- the following failures are expected --\n");
	check_isa(&broken);
	printf("-- end of expected failures --\n");
	/* sum (sLIN), crossing (SYS), zero width (SYS_TR_ACC), header (LAR and NOPE),
	 * spec length (sLIN 288 ok; NOPE uncovered), missing class (GONE), duplicate key
	 * (LAR vs SYS on sub 2), sub order (sLIN), no source, empty DMA, CDMA missing. */
	assert_true(fails >= 11);
}

#include "tp_test_main.h"
