/*
 * vendor_int.h — private to the vendor-files writer: an ordered key/value record with the
 * semantics of the Python dict the vendor's printers fill (a key set twice keeps its first
 * place and takes the last value), the number formats of those printers, and the builders of
 * one command's record in each printer's layout.
 */
#ifndef TP_VENDOR_INT_H
#define TP_VENDOR_INT_H

#include "writers/vendor/vendor.h"

/* Which of the vendor's printers a chip's files come from. */
enum vf_flavour {
	VF_NONE = 0,
	VF_PERFAI, /* tpu-mlir bmprofile_perfAI (BM1688/CV186X, CV184X): Global Idx last */
	VF_CDM,    /* the BM1690 printer of cdm_profile_data (BM1690, SG2260E) */
	VF_LEGACY, /* tpu_profile.py --format layer, bmprofile_analyze (BM1684X, BM1684) */
};
enum vf_flavour vf_flavour_of(const struct tp_profile *p);

#define VF_MAX_KEYS 256
#define VF_SLOTS 512

/* One record: keys in first-insertion order, values as text. Keys are borrowed (literals or
 * the profile's strings) and must outlive the record's use; values are copied into `val`. */
struct vf_dict {
	size_t n;
	const char *key[VF_MAX_KEYS];
	size_t off[VF_MAX_KEYS]; /* value offsets in val */
	uint16_t slot[VF_SLOTS]; /* hash of the keys: index + 1, 0 empty */
	struct tp_buf val;
};
void vf_dict_init(struct vf_dict *d);
void vf_dict_clear(struct vf_dict *d);
void vf_dict_free(struct vf_dict *d);
/* d[key] = val (a key already present keeps its place). A record past VF_MAX_KEYS drops the
 * key (no descriptor has that many fields). */
void vf_set(struct vf_dict *d, const char *key, const char *val);
void vf_set_u64(struct vf_dict *d, const char *key, uint64_t v);
void vf_set_i64(struct vf_dict *d, const char *key, int64_t v);
/* The value of key, or NULL. */
const char *vf_get(const struct vf_dict *d, const char *key);
static inline const char *vf_val(const struct vf_dict *d, size_t i)
{
	return d->val.data + d->off[i];
}

/* A double as Python's repr() prints it ("0.0", "19.4347", "1e-05"). */
void vf_pyfloat(char *out, size_t n, double v);
/* A model argument's value as the vendor's printer shows it (reals in Python's repr). */
void vf_arg_text(const struct tp_profile *p, const struct tp_arg *a, char *out, size_t n);

/* What the builders need about the profile. */
struct vf_ctx {
	const struct tp_profile *p;
	enum vf_flavour fl;
};

/* The record of command i of a TIU track in the printer's layout: the info part, the line
 * "<Function Type>:" (*ftype), and the extra part (descriptor fields, Msg Id, Sd\Wt Count).
 * Global Idx is 1-based (docs/vendor-files.md). Also sets "Data Type" in *extra_csv, the CSV's
 * columns the text files do not print (may be NULL). */
void vf_tiu_record(const struct vf_ctx *c, const struct tp_track *t, size_t i, struct vf_dict *info,
                   struct vf_dict *extra, const char **ftype);
/* The record of command i of a DMA track (GDMA, SDMA, CDMA): one dict. */
void vf_dma_record(const struct vf_ctx *c, const struct tp_track *t, size_t i, struct vf_dict *d);

/* The register-info text files (tiuRegInfo_N.txt, tdmaRegInfo_N.txt, cdmaRegInfo_N.txt). */
int vf_write_reginfo(const struct vf_ctx *c, const char *dir, size_t *nfiles, struct tp_diag *d);
/* instruction.csv of the legacy path (vf_instr.c). */
int vf_write_instruction_csv(const struct vf_ctx *c, const char *dir, size_t *nfiles,
                             struct tp_diag *d);
/* PerfAI_output.csv. */
int vf_write_perfai_csv(const struct vf_ctx *c, const char *dir, size_t *nfiles, struct tp_diag *d);

/* summary.csv, layer.csv and mac_util.csv of a legacy chip (nothing for other chips, or
 * without layers), from the layer table of analysis a. */
int vf_write_layer_files(const struct vf_ctx *c, const struct tp_analysis *a, const char *dir,
                         size_t *nfiles, struct tp_diag *d);

#endif /* TP_VENDOR_INT_H */
