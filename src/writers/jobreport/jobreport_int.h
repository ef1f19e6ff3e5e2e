/*
 * jobreport_int.h — private to src/writers/jobreport: the small JSON reader that reads
 * job_entry.json back (and job_summary.json, for `tpuprof diff` of two jobs), the JSON
 * field writers the module's files share, and the statistics helpers.
 */
#ifndef TP_JOBREPORT_INT_H
#define TP_JOBREPORT_INT_H

#include "writers/jobreport/jobreport.h"

/* A parsed JSON value. Strings are NUL-terminated copies (escapes resolved); numbers are
 * doubles, with the exact integer kept when the text was one. Everything lives in the arena
 * given to tp_jr_parse. */
enum { JV_NULL = 0, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };
struct tp_jv {
	int type;
	int is_int;
	int64_t i;
	double num;
	const char *s;
	size_t n;            /* items (array) or members (object) */
	struct tp_jv *items; /* array items / object values */
	const char **keys;   /* object keys */
};

/* Parses text[0..len) (one JSON value, nesting at most 64 deep). Returns the root, or NULL
 * with *err_off set to the offset of the first error (and *why a short reason); out of memory
 * reports *why = "out of memory". */
const struct tp_jv *tp_jr_parse(struct tp_arena *a, const char *text, size_t len, size_t *err_off,
                                const char **why);
/* Member `key` of object v, or NULL. */
const struct tp_jv *tp_jr_get(const struct tp_jv *v, const char *key);
/* Member values with defaults when absent or of another type. */
int64_t tp_jr_int(const struct tp_jv *v, const char *key, int64_t dflt);
double tp_jr_num(const struct tp_jv *v, const char *key, double dflt);
const char *tp_jr_str(const struct tp_jv *v, const char *key, const char *dflt);

/* JSON writers: "key":value with a comma before all but the first (*first tracks it). */
void tp_jr_json_str(struct tp_buf *b, int *first, const char *k, const char *v);
void tp_jr_json_int(struct tp_buf *b, int *first, const char *k, int64_t v);
void tp_jr_json_num(struct tp_buf *b, int *first, const char *k, double v);
/* ,"k":["v0",...] (never first in its object). */
void tp_jr_json_strs(struct tp_buf *b, const char *k, const char *const *v, size_t n);
/* The entry's scalar fields (identity, outcome, figures), shared by job_entry.json and
 * job_summary.json's rows. */
void tp_jr_entry_fields(const struct tp_job_entry *e, struct tp_buf *b, int *first);
/* The job-wide figures of tp_job_finish (converted, failed, devices, alignment, imbalances),
 * shared by job_summary.json and the page's data. */
void tp_jr_job_fields(const struct tp_job *j, struct tp_buf *b, int *first);
/* Reads the scalar fields back from an object tp_jr_entry_fields wrote. TP_OK / TP_ENOMEM. */
int tp_jr_entry_scalars(struct tp_job *j, struct tp_job_entry *e, const struct tp_jv *o);

/* Sets e->eng_util from its cores (the mean over the cores that have each engine). */
void tp_jr_entry_means(struct tp_job_entry *e);

/* The median of v[0..n) (sorted in place); 0 for n = 0. */
double tp_jr_median(double *v, size_t n);

#endif /* TP_JOBREPORT_INT_H */
