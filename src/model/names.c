/*
 * names.c — the enum name tables of the model (architectures, track kinds, transfer
 * directions, data types) shared by every reader and writer, and the facts tied to those
 * enums (which directions touch DDR or L2, a data type's size), and the type strings of the
 * trace slice classes (enum tp_work).
 */
#include "model/model.h"

#include <strings.h>

static const char *const arch_names[] = {"unknown", "BM1684", "BM1684X", "BM1688",
                                         "BM1690",  "CPU",    "CV184X",  "SG2260E"};
_Static_assert(sizeof arch_names / sizeof *arch_names == TP_ARCH_COUNT, "one name per arch");

const char *tp_arch_name(enum tp_arch a)
{
	return (unsigned)a < sizeof arch_names / sizeof *arch_names ? arch_names[a] : "unknown";
}

enum tp_arch tp_arch_from_name(const char *name)
{
	static const struct {
		const char *n;
		enum tp_arch a;
	} alias[] = {
	    {"BM1684", TP_ARCH_BM1684},   {"BM1684X", TP_ARCH_BM1684X}, {"BM1688", TP_ARCH_BM1688},
	    {"A2", TP_ARCH_BM1688},       {"CV186X", TP_ARCH_BM1688},   {"CV186AH", TP_ARCH_BM1688},
	    {"BM1690", TP_ARCH_BM1690},   {"SG2260", TP_ARCH_BM1690},   {"CV184X", TP_ARCH_CV184X},
	    {"SG2260E", TP_ARCH_SG2260E}, {"BM1690E", TP_ARCH_SG2260E}, {"CPU", TP_ARCH_CPU}};
	for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
		if (strcasecmp(name, alias[i].n) == 0)
			return alias[i].a;
	return TP_ARCH_UNKNOWN;
}

const char *tp_track_kind_name(enum tp_track_kind k)
{
	static const char *const n[] = {"TIU", "GDMA",  "SDMA",   "CDMA",
	                                "MCU", "Layer", "Thread", "Host"};
	return (unsigned)k < TP_TRACK_KIND_COUNT ? n[k] : "?";
}

const char *tp_dir_name(enum tp_dir d)
{
	static const char *const n[] = {"-",          "DDR->LMEM", "LMEM->DDR", "DDR->DDR",
	                                "LMEM->LMEM", "DDR->L2M",  "L2M->DDR",  "L2M->LMEM",
	                                "LMEM->L2M",  "L2M->L2M"};
	return (unsigned)d < TP_DIR_COUNT ? n[d] : "-";
}

int tp_dir_reads_ddr(enum tp_dir d)
{
	return d == TP_DIR_DDR_TO_LMEM || d == TP_DIR_DDR_TO_DDR || d == TP_DIR_DDR_TO_L2;
}

int tp_dir_writes_ddr(enum tp_dir d)
{
	return d == TP_DIR_LMEM_TO_DDR || d == TP_DIR_DDR_TO_DDR || d == TP_DIR_L2_TO_DDR;
}

int tp_dir_touches_l2(enum tp_dir d)
{
	return d == TP_DIR_DDR_TO_L2 || d == TP_DIR_L2_TO_DDR || d == TP_DIR_L2_TO_LMEM ||
	       d == TP_DIR_LMEM_TO_L2 || d == TP_DIR_L2_TO_L2;
}

const char *tp_dtype_name(enum tp_dtype t)
{
	static const char *const n[] = {"",      "FP32",   "FP16",  "INT8",   "UINT8",
	                                "INT16", "UINT16", "INT32", "UINT32", "BF16",
	                                "FP8",   "INT4",   "FP64",  "INT64",  "BOOL"};
	return (unsigned)t < TP_DT_COUNT ? n[t] : "";
}

unsigned tp_dtype_size(enum tp_dtype t)
{
	static const unsigned char s[] = {0, 4, 2, 1, 1, 2, 2, 4, 4, 2, 1, 1, 8, 8, 1};
	return (unsigned)t < TP_DT_COUNT ? s[t] : 0;
}

static const char *const work_types[] = {"",
                                         TP_CAP_TYPE_OP,
                                         TP_CAP_TYPE_RUNTIME,
                                         TP_CAP_TYPE_STEP,
                                         TP_TRACE_TYPE_ANNOTATION,
                                         TP_TRACE_TYPE_PROFILER,
                                         TP_TRACE_TYPE_KERNEL,
                                         TP_TRACE_TYPE_MEMCPY,
                                         TP_TRACE_TYPE_MEMSET,
                                         TP_TRACE_TYPE_COLLECTIVE,
                                         TP_TRACE_TYPE_DEVICE_ANNOTATION,
                                         TP_TRACE_TYPE_SYNC};
_Static_assert(sizeof work_types / sizeof *work_types == TP_WORK_COUNT, "one type per class");

const char *tp_work_type(enum tp_work w)
{
	return (unsigned)w < TP_WORK_COUNT ? work_types[w] : "";
}

void tp_work_ids(const struct tp_profile *p, struct tp_work_ids *w)
{
	w->id[0] = 0;
	for (int i = 1; i < TP_WORK_COUNT; i++)
		w->id[i] = tp_profile_find_str(p, work_types[i]);
}
