/*
 * vf_reg.c — tiuRegInfo_<core>.txt, tdmaRegInfo_<core>.txt and cdmaRegInfo_<core>.txt as the
 * vendor's printers write them (sophgo-analysis.md §3, reference-outputs.md §3.1): the chip's
 * constants under __CHIP_ARCH_ARGS__, then one block per command in the order of the
 * engine's track (GDMA then SDMA in the tdma file), "\t<key>: <value>" lines. Owns nothing
 * past a call.
 */
#include <stdio.h>
#include <string.h>

#include "writers/vendor/vendor_int.h"

/* __CHIP_ARCH_ARGS__ as the vendor prints it for each chip: its arch tables' keys and values
 * verbatim, spellings included ("TPU Lmem Size(MiB)" holds bytes on BM1688). Transcribed from
 * the vendor's output on the shared dumps (reference/<dump>/tiuRegInfo_0.txt); SG2260E takes
 * BM1690's table with its own core count. */
struct arch_args {
	enum tp_arch arch;
	const char *text; /* the lines after the chip arch, each "\t<key>: <value>\n" */
};

#define L(k, v) "\t" k ": " v "\n"
static const struct arch_args arch_args[] = {
    {TP_ARCH_BM1688,
     L("Chip Arch", "A2") L("Platform", "ASIC") L("Core Num", "2") L("NPU Num", "32")
         L("TPU Lmem Size(MiB)", "4194304") L("Tpu Lmem Addr Width(bits)", "17")
             L("Tpu Bank Addr Width(bits)", "13") L("Execution Unit Number(int8)", "16")
                 L("Bus Max Burst", "16") L("L2 Max Burst", "0") L("Bus Bandwidth", "64")
                     L("DDR Frequency(GHz)", "4266") L("DDR Max BW(GB/s/Core)", "32")
                         L("L2 Max BW(GB/s)", "0") L("Cube IC Align(8bits)", "32")
                             L("Cube OHOW Align(8bits)", "4") L("Cube OHOW Align(16bits)", "4")
                                 L("Vector OHOW Align(8bits)", "16")},
    {TP_ARCH_CV184X,
     L("Chip Arch", "CV184X") L("Platform", "ASIC") L("Core Num", "1") L("NPU Num", "8")
         L("TPU Lmem Size(Bytes)", "524288") L("Tpu Lmem Addr Width(bits)", "16")
             L("Tpu Bank Addr Width(bits)", "12") L("Execution Unit Number(int8)", "8")
                 L("Bus Max Burst", "32") L("L2 Max Burst", "0") L("Bus Bandwidth", "64")
                     L("DDR Frequency(MHz)", "2133") L("DDR Max BW(GB/s/Core)", "4")
                         L("L2 Max BW(GB/s)", "0") L("Cube IC Align(8bits)", "16")
                             L("Cube OHOW Align(8bits)", "4") L("Cube OHOW Align(16bits)", "2")
                                 L("Vector OHOW Align(8bits)", "8")},
    {TP_ARCH_BM1690,
     L("Chip Arch", "sg2260") L("Platform", "ASIC") L("Core Num", "8") L("NPU Num", "64")
         L("TPU Lmem Size(Bytes)", "16777216") L("Tpu Lmem Addr Width(bits)", "18")
             L("Tpu Bank Addr Width(bits)", "14") L("Execution Unit Number(int8)", "64")
                 L("Bus Max Burst", "2") L("L2 Max Burst", "1") L("Bus Bandwidth", "128")
                     L("DDR Frequency(MHz)", "8533") L("DDR Max BW(GB/s/Core)", "68.264")
                         L("L2 Max BW(GB/s)", "128") L("Cube IC Align(8bits)", "64")
                             L("Cube OHOW Align(8bits)", "4") L("Cube OHOW Align(16bits)", "4")
                                 L("Vector OHOW Align(8bits)", "64")},
    {TP_ARCH_SG2260E,
     L("Chip Arch", "sg2260e") L("Platform", "ASIC") L("Core Num", "4") L("NPU Num", "64")
         L("TPU Lmem Size(Bytes)", "16777216") L("Tpu Lmem Addr Width(bits)", "18")
             L("Tpu Bank Addr Width(bits)", "14") L("Execution Unit Number(int8)", "64")
                 L("Bus Max Burst", "2") L("L2 Max Burst", "1") L("Bus Bandwidth", "128")
                     L("DDR Frequency(MHz)", "8533") L("DDR Max BW(GB/s/Core)", "68.264")
                         L("L2 Max BW(GB/s)", "128") L("Cube IC Align(8bits)", "64")
                             L("Cube OHOW Align(8bits)", "4") L("Cube OHOW Align(16bits)", "4")
                                 L("Vector OHOW Align(8bits)", "64")},
};
#undef L

/* A clock as the vendor prints it: an integer when whole. */
static void put_mhz(struct tp_buf *b, const char *key, double mhz)
{
	char v[40];
	if (mhz == (double)(long long)mhz)
		snprintf(v, sizeof v, "%lld", (long long)mhz);
	else
		vf_pyfloat(v, sizeof v, mhz);
	tp_buf_printf(b, "\t%s: %s\n", key, v);
}

static void put_header(const struct tp_profile *p, struct tp_buf *b)
{
	tp_buf_puts(b, "__CHIP_ARCH_ARGS__\n");
	for (size_t i = 0; i < sizeof arch_args / sizeof *arch_args; i++)
		if (arch_args[i].arch == p->arch)
			tp_buf_puts(b, arch_args[i].text);
	put_mhz(b, "TIU Frequency(MHz)", p->tiu_freq_mhz);
	put_mhz(b, "DMA Frequency(MHz)", p->gdma_freq_mhz);
}

static void put_dict(struct tp_buf *b, const struct vf_dict *d)
{
	if (d->val.oom) {
		b->oom = 1;
		return;
	}
	for (size_t i = 0; i < d->n; i++) {
		tp_buf_putc(b, '\t');
		tp_buf_puts(b, d->key[i]);
		tp_buf_puts(b, ": ");
		tp_buf_puts(b, vf_val(d, i));
		tp_buf_putc(b, '\n');
	}
}

static void put_tiu_track(const struct vf_ctx *c, const struct tp_track *t, struct tp_buf *b,
                          struct vf_dict *info, struct vf_dict *extra)
{
	for (size_t i = 0; i < t->count && !b->oom; i++) {
		const char *ftype;
		vf_dict_clear(info);
		vf_dict_clear(extra);
		vf_tiu_record(c, t, i, info, extra, &ftype);
		tp_buf_puts(b, "__TIU_REG_INFO__\n");
		put_dict(b, info);
		if (extra->n) {
			tp_text_put(b, ftype, strlen(ftype), TP_TEXT_CTRL | TP_TEXT_LINE, 0, 0);
			tp_buf_puts(b, ":\n");
			put_dict(b, extra);
		}
	}
}

static void put_dma_track(const struct vf_ctx *c, const struct tp_track *t, const char *tag,
                          struct tp_buf *b, struct vf_dict *d)
{
	for (size_t i = 0; i < t->count && !b->oom; i++) {
		vf_dict_clear(d);
		vf_dma_record(c, t, i, d);
		tp_buf_puts(b, tag);
		put_dict(b, d);
	}
}

/* Whether core `core` of device `dev` has any command on an engine track. */
static int core_has_commands(const struct tp_profile *p, int32_t dev, int32_t core)
{
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (t->device == dev && t->core == core && t->count && t->kind <= TP_TRACK_SDMA)
			return 1;
	}
	return 0;
}

static int write_one(const char *dir, const char *name, struct tp_buf *b, size_t *nfiles,
                     struct tp_diag *d)
{
	int rc = tp_write_buf_file(dir, name, b, d);
	if (rc == TP_OK && nfiles)
		(*nfiles)++;
	return rc;
}

/* The two files of one core (a file whose engine has no track is still written, with the
 * header alone). */
static int write_core(const struct vf_ctx *c, int32_t dev, int32_t core, const char *dir,
                      size_t *nfiles, struct tp_diag *d)
{
	const struct tp_profile *p = c->p;
	struct vf_dict *x = tp_malloc(2 * sizeof *x);
	if (!x)
		return tp_diag_set(d, TP_ENOMEM, "vendor files: out of memory");
	vf_dict_init(&x[0]);
	vf_dict_init(&x[1]);
	static const struct {
		const char *file, *tag;
		enum tp_track_kind kinds[2];
	} files[] = {
	    {"tiuRegInfo", "__TIU_REG_INFO__\n", {TP_TRACK_TIU, TP_TRACK_TIU}},
	    {"tdmaRegInfo", "__TDMA_REG_INFO__\n", {TP_TRACK_GDMA, TP_TRACK_SDMA}},
	};
	int rc = TP_OK;
	for (size_t f = 0; f < sizeof files / sizeof *files && rc == TP_OK; f++) {
		struct tp_buf b;
		tp_buf_init(&b);
		put_header(p, &b);
		for (size_t k = 0; k < 2; k++) {
			if (k && files[f].kinds[1] == files[f].kinds[0])
				break;
			int ti = tp_profile_find_track(p, dev, core, files[f].kinds[k]);
			if (ti < 0)
				continue;
			const struct tp_track *t = &p->tracks[ti];
			if (t->kind == TP_TRACK_TIU)
				put_tiu_track(c, t, &b, &x[0], &x[1]);
			else
				put_dma_track(c, t, files[f].tag, &b, &x[0]);
		}
		char name[64];
		snprintf(name, sizeof name, "%s_%d.txt", files[f].file, (int)core);
		rc = write_one(dir, name, &b, nfiles, d);
		tp_buf_free(&b);
	}
	vf_dict_free(&x[0]);
	vf_dict_free(&x[1]);
	tp_free(x);
	return rc;
}

/* cdmaRegInfo_<port>.txt: one file per CDMA port (a track named "CDMA port N"). */
static int write_cdma(const struct vf_ctx *c, const char *dir, size_t *nfiles, struct tp_diag *d)
{
	const struct tp_profile *p = c->p;
	int rc = TP_OK;
	for (size_t i = 0; i < p->num_tracks && rc == TP_OK; i++) {
		const struct tp_track *t = &p->tracks[i];
		unsigned port;
		if (t->kind != TP_TRACK_CDMA || t->device != 0 || !t->count ||
		    sscanf(tp_str(p, t->name), "CDMA port %u", &port) != 1)
			continue;
		struct vf_dict *x = tp_malloc(sizeof *x);
		if (!x)
			return tp_diag_set(d, TP_ENOMEM, "vendor files: out of memory");
		vf_dict_init(x);
		struct tp_buf b;
		tp_buf_init(&b);
		put_header(p, &b);
		put_dma_track(c, t, "__CDMA_REG_INFO__\n", &b, x);
		char name[64];
		snprintf(name, sizeof name, "cdmaRegInfo_%u.txt", port);
		rc = write_one(dir, name, &b, nfiles, d);
		tp_buf_free(&b);
		vf_dict_free(x);
		tp_free(x);
	}
	return rc;
}

int vf_write_reginfo(const struct vf_ctx *c, const char *dir, size_t *nfiles, struct tp_diag *d)
{
	const struct tp_profile *p = c->p;
	/* One device: the vendor's tools convert one device's dump at a time. */
	for (int32_t core = 0; p->num_devices && core < p->devices[0].num_cores; core++) {
		if (!core_has_commands(p, 0, core))
			continue;
		int rc = write_core(c, 0, core, dir, nfiles, d);
		if (rc != TP_OK)
			return rc;
	}
	return write_cdma(c, dir, nfiles, d);
}
