/*
 * ext.h — declarations shared by the files of the tpuprof._tpuprof CPython extension (the C
 * layer of the Python package over libtpuprof): argument checking (args.c), operator
 * descriptors and tensor details (detail.c), scope objects for `with` statements and
 * decorators (scope.c), and the module itself (module.c). Every function that can fail sets
 * a Python exception and returns -1 or NULL; nothing is recorded by a call that failed.
 */
#ifndef TPUPROF_PYTHON_EXT_H
#define TPUPROF_PYTHON_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "tpuprof/tpuprof.h"

/* ---- args.c: argument parsing with Python's own error messages ---- */

/* Fills out[0..nmax) from positional `args` and keyword `kwnames` (vectorcall convention),
 * NULL for an argument not given; `names` are the parameter names, the first `nreq`
 * required. On a wrong call raises TypeError the way Python does and returns -1. */
int tpx_parse(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              const char *const *names, int nreq, int nmax, PyObject **out);

/* `o` as UTF-8 text. NULL, or None when `none_ok`, gives *out = NULL. Raises TypeError for a
 * non-str, ValueError for an empty string (unless `empty_ok`) or one with a NUL character.
 * The pointer lives as long as `o`. */
int tpx_text(PyObject *o, const char *what, int none_ok, int empty_ok, const char **out);

/* `o` (an int or anything with __index__) as int64 in [lo, hi]; NULL gives `def`. Raises
 * TypeError or ValueError naming `what`. */
int tpx_i64(PyObject *o, const char *what, int64_t lo, int64_t hi, int64_t def, int64_t *out);

/* `o` as a truth value (NULL: 0); raises TypeError unless bool or int. */
int tpx_bool(PyObject *o, const char *what, int *out);

/* A colour: None/NULL (0), 0xRRGGBB or an (r, g, b) tuple -> TPUPROF_RGB value. */
int tpx_color(PyObject *o, uint32_t *out);

/* Gets attribute `name` of `o` into *out: 1 found, 0 absent (*out = NULL, no error), -1
 * error. */
static inline int tpx_getattr_opt(PyObject *o, const char *name, PyObject **out)
{
	*out = PyObject_GetAttrString(o, name);
	if (*out)
		return 1;
	if (!PyErr_ExceptionMatches(PyExc_AttributeError))
		return -1;
	PyErr_Clear();
	return 0;
}

/* Raises the exception for a libtpuprof status code (module.c owns the exception types). */
void tpx_raise_status(int rc, const char *what);

/* ---- detail.c: operator descriptors and per-execution details ---- */

/* tpuprof.Op: an operator descriptor whose address identifies the operator. */
typedef struct {
	PyObject_HEAD struct tpuprof_op op;
	PyObject *type, *name, *post_op; /* str (name, post_op may be NULL) */
} tpx_op_object;
extern PyTypeObject tpx_op_type;

/* A checked operator detail: tensors as (name|None, dtype|None, shape tuple, nbytes) tuples,
 * attributes as (key, value) str tuples. All fields NULL/0 = no detail. */
struct tpx_detail {
	PyObject *inputs, *outputs; /* tuple of tensor tuples, or NULL */
	PyObject *attrs;            /* tuple of (key, value), or NULL */
	PyObject *weight;           /* shape tuple, or NULL */
	double sparsity;            /* negative: unknown */
	uint64_t bytes, flops;      /* 0: unknown */
	int bytes_given;            /* bytes came from the caller (else the tensors' sum) */
};

/* Checks and converts tensors (a tensor-like, a sequence of them or a dict name -> tensor)
 * into a tuple of tensor tuples; None gives NULL with no error. `what` names the argument. */
PyObject *tpx_tensors(PyObject *o, const char *what);

/* Checks and converts attributes (a dict str -> value; values become text, bools
 * "true"/"false") into a tuple of (key, value); None gives NULL with no error. */
PyObject *tpx_attrs(PyObject *o);

/* The sum of the byte sizes of a tuple of tensor tuples (NULL: 0). */
uint64_t tpx_tensor_bytes(PyObject *tensors);

/* Checks every part of an operator detail and fills `d` (which owns the new references; see
 * tpx_detail_clear). Raises TypeError / ValueError and leaves `d` empty on error. */
int tpx_detail_set(struct tpx_detail *d, PyObject *inputs, PyObject *outputs, PyObject *attrs,
                   PyObject *weight, PyObject *sparsity, PyObject *bytes, PyObject *flops);
void tpx_detail_clear(struct tpx_detail *d);

/* Records tpuprof_op_end(op, detail) with `d` converted (mode 2 only; other modes record
 * the end alone). Raises MemoryError (recording the end without detail) if no memory. */
int tpx_op_end(const struct tpuprof_op *op, const struct tpx_detail *d);

/* The Python callable that maps a dtype object or name to (name, itemsize), set by the
 * package (tpuprof._dtypes.dtype_info); cached per dtype object. */
extern PyObject *tpx_dtype_info;
extern PyObject *tpx_dtype_cache;

/* ---- scope.c: with-statement / decorator objects ---- */

extern PyTypeObject tpx_scope_type;
/* Called with (scope, function) by Scope.__call__ to make a decorated function (set by the
 * package: tpuprof._wrap). */
extern PyObject *tpx_wrap;

PyObject *tpx_activity(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw);
PyObject *tpx_step(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw);
PyObject *tpx_range(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw);
PyObject *tpx_runtime(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw);
PyObject *tpx_op_scope(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw);

/* Fills an event attribute (category, colour and, in mode 2, the calling Python function's
 * file / line / name). `keep` receives a reference that must outlive the attribute's use
 * (NULL if none). */
int tpx_event_attr(struct tpuprof_event_attr *a, PyObject *category, PyObject *color,
                   PyObject **keep);

#endif /* TPUPROF_PYTHON_EXT_H */
