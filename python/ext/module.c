/*
 * module.c — tpuprof._tpuprof, the CPython extension over libtpuprof: the control calls
 * (enable, disable, flush, meta, ...), one Python function per recording call of
 * include/tpuprof/tpuprof.h, and the module's exception types. The recording functions use
 * the vectorcall convention and check their arguments before recording anything; they
 * record nothing (and cost one call) when capture is off. The package tpuprof (__init__.py)
 * is the documented API; it re-exports these and adds what is easier in Python.
 */
#include "ext.h"

#include <string.h>

static PyObject *err_base, *err_busy, *err_off, *err_io;

void tpx_raise_status(int rc, const char *what)
{
	switch (rc) {
	case TPUPROF_EINVAL:
		PyErr_Format(PyExc_ValueError, "%s: invalid argument", what);
		break;
	case TPUPROF_EBUSY:
		PyErr_Format(err_busy,
		             "%s: a capture session is already active (started by enable() or by "
		             "TPUPROF=0/1/2 in the environment); call tpuprof.disable() first",
		             what);
		break;
	case TPUPROF_EOFF:
		PyErr_Format(err_off, "%s: no capture session is active", what);
		break;
	case TPUPROF_EIO:
		PyErr_Format(err_io,
		             "%s: the dump directory or file could not be created or written "
		             "(TPUPROF_DIR; see the warning on stderr)",
		             what);
		break;
	case TPUPROF_ENOMEM:
		PyErr_Format(PyExc_MemoryError, "%s: out of memory", what);
		break;
	default:
		PyErr_Format(err_base, "%s: libtpuprof status %d", what, rc);
	}
}

/* ---- control ---- */

/* Runs a control call without the GIL (it may write the dump); raises on failure. */
static PyObject *control(int rc_only, int (*fn)(void), uint32_t maxr, int mode, const char *what)
{
	PyThreadState *ts = PyEval_SaveThread();
	int rc = rc_only ? fn() : tpuprof_enable(maxr, mode);
	PyEval_RestoreThread(ts);
	if (rc != TPUPROF_OK) {
		tpx_raise_status(rc, what);
		return NULL;
	}
	Py_RETURN_NONE;
}

static PyObject *py_enable(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	static const char *const names[] = {"max_records", "mode"};
	PyObject *a[2];
	int64_t maxr, mode;
	if (tpx_parse("enable", args, n, kw, names, 0, 2, a) != 0 ||
	    tpx_i64(a[0], "max_records", 0, UINT32_MAX, 0, &maxr) != 0 ||
	    tpx_i64(a[1], "mode", 0, 2, 1, &mode) != 0)
		return NULL;
	return control(0, NULL, (uint32_t)maxr, (int)mode, "enable");
}

static PyObject *py_disable(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return control(1, tpuprof_disable, 0, 0, "disable");
}

static PyObject *py_flush(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return control(1, tpuprof_flush, 0, 0, "flush");
}

static PyObject *py_mode(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyLong_FromLong(tpuprof_mode());
}

static PyObject *py_meta(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	static const char *const names[] = {"key", "value"};
	PyObject *a[2];
	const char *k, *v;
	if (tpx_parse("meta", args, n, kw, names, 2, 2, a) != 0 ||
	    tpx_text(a[0], "meta key", 0, 0, &k) != 0 || tpx_text(a[1], "meta value", 0, 1, &v))
		return NULL;
	if (strlen(k) > 31 || strlen(v) > 95) {
		PyErr_Format(PyExc_ValueError,
		             "meta: keys are at most 31 bytes and values 95 (got %zu and %zu)",
		             strlen(k), strlen(v));
		return NULL;
	}
	int rc = tpuprof_meta(k, v);
	if (rc == TPUPROF_ENOMEM) {
		PyErr_SetString(err_base, "meta: at most 32 meta calls per process");
		return NULL;
	}
	if (rc != TPUPROF_OK) {
		tpx_raise_status(rc, "meta");
		return NULL;
	}
	Py_RETURN_NONE;
}

static PyObject *py_set_device(PyObject *m, PyObject *arg)
{
	(void)m;
	int64_t d;
	if (tpx_i64(arg, "device", 0, INT32_MAX, 0, &d) != 0)
		return NULL;
	tpuprof_set_device((int)d);
	Py_RETURN_NONE;
}

static PyObject *py_version(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyUnicode_FromString(tpuprof_version());
}

static PyObject *py_thread_name(PyObject *m, PyObject *arg)
{
	(void)m;
	const char *s;
	if (tpx_text(arg, "thread name", 0, 0, &s) != 0)
		return NULL;
	tpuprof_thread_name(s);
	Py_RETURN_NONE;
}

/* ---- recording ---- */

#define NAMES(...)                                                                                 \
	static const char *const names[] = {__VA_ARGS__};                                          \
	PyObject *a[sizeof names / sizeof names[0]]
#define PARSE(fn, nreq) tpx_parse(fn, args, n, kw, names, nreq, (int)(sizeof a / sizeof a[0]), a)

static PyObject *activity_rec(int end, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	NAMES("name", "step", "meta");
	const char *name, *meta;
	int64_t step;
	if (PARSE(end ? "activity_end" : "activity_begin", 1) != 0 ||
	    tpx_text(a[0], "activity name", 0, 0, &name) != 0 ||
	    tpx_i64(a[1], "step", -1, INT64_MAX, -1, &step) != 0 ||
	    tpx_text(a[2], "meta", 1, 1, &meta) != 0)
		return NULL;
	if (end)
		tpuprof_activity_end(name, step, meta);
	else
		tpuprof_activity_begin(name, step, meta);
	Py_RETURN_NONE;
}

static PyObject *py_activity_begin(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	return activity_rec(0, args, n, kw);
}

static PyObject *py_activity_end(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	return activity_rec(1, args, n, kw);
}

static PyObject *py_step_begin(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	NAMES("graph", "step", "warmup");
	const char *g;
	int64_t step;
	int warm;
	if (PARSE("step_begin", 2) != 0 || tpx_text(a[0], "graph", 0, 0, &g) != 0 ||
	    tpx_i64(a[1], "step", 0, INT64_MAX, 0, &step) != 0 ||
	    tpx_bool(a[2], "warmup", &warm) != 0)
		return NULL;
	tpuprof_step_begin(g, step, warm);
	Py_RETURN_NONE;
}

static PyObject *py_step_end(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	NAMES("graph", "step");
	const char *g;
	int64_t step;
	if (PARSE("step_end", 2) != 0 || tpx_text(a[0], "graph", 0, 0, &g) != 0 ||
	    tpx_i64(a[1], "step", 0, INT64_MAX, 0, &step) != 0)
		return NULL;
	tpuprof_step_end(g, step);
	Py_RETURN_NONE;
}

static int op_arg(PyObject *o, const struct tpuprof_op **op)
{
	if (!PyObject_TypeCheck(o, &tpx_op_type)) {
		PyErr_Format(PyExc_TypeError, "op must be a tpuprof.Op, not %.100s",
		             Py_TYPE(o)->tp_name);
		return -1;
	}
	*op = &((tpx_op_object *)o)->op;
	return 0;
}

static PyObject *py_op_begin(PyObject *m, PyObject *arg)
{
	(void)m;
	const struct tpuprof_op *op;
	if (op_arg(arg, &op) != 0)
		return NULL;
	tpuprof_op_begin(op);
	Py_RETURN_NONE;
}

static PyObject *py_op_end(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	NAMES("op", "inputs", "outputs", "attrs", "weight", "sparsity", "bytes", "flops");
	const struct tpuprof_op *op;
	if (PARSE("op_end", 1) != 0 || op_arg(a[0], &op) != 0)
		return NULL;
	if (n + (kw ? PyTuple_GET_SIZE(kw) : 0) == 1) {
		tpuprof_op_end(op, NULL);
		Py_RETURN_NONE;
	}
	struct tpx_detail d = {NULL, NULL, NULL, NULL, -1.0, 0, 0, 0};
	if (tpx_detail_set(&d, a[1], a[2], a[3], a[4], a[5], a[6], a[7]) != 0)
		return NULL;
	int rc = tpx_op_end(op, &d);
	tpx_detail_clear(&d);
	if (rc != 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *name_rec(PyObject *arg, const char *what, void (*rec)(const char *))
{
	const char *s;
	if (tpx_text(arg, what, 0, 0, &s) != 0)
		return NULL;
	rec(s);
	Py_RETURN_NONE;
}

static PyObject *py_runtime_begin(PyObject *m, PyObject *arg)
{
	(void)m;
	return name_rec(arg, "runtime call name", tpuprof_runtime_begin);
}

static PyObject *py_runtime_end(PyObject *m, PyObject *arg)
{
	(void)m;
	return name_rec(arg, "runtime call name", tpuprof_runtime_end);
}

static PyObject *py_range_end(PyObject *m, PyObject *arg)
{
	(void)m;
	return name_rec(arg, "range name", tpuprof_range_end);
}

static PyObject *py_counter(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	NAMES("name", "value");
	const char *s;
	if (PARSE("counter", 2) != 0 || tpx_text(a[0], "counter name", 0, 0, &s) != 0)
		return NULL;
	if (!PyFloat_Check(a[1]) && !PyLong_Check(a[1]) && !PyIndex_Check(a[1])) {
		PyErr_Format(PyExc_TypeError, "counter value must be a number, not %.100s",
		             Py_TYPE(a[1])->tp_name);
		return NULL;
	}
	double v = PyFloat_AsDouble(a[1]);
	if (v == -1.0 && PyErr_Occurred())
		return NULL;
	tpuprof_counter(s, v);
	Py_RETURN_NONE;
}

/* mark, range_begin and async_begin: name [, id], category, color. */
static PyObject *attr_rec(int kind, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	static const char *const fn[] = {"mark", "range_begin", "async_begin"};
	static const char *const plain[] = {"name", "category", "color"};
	static const char *const async[] = {"name", "id", "category", "color"};
	PyObject *a[4];
	int na = kind == 2 ? 4 : 3;
	if (tpx_parse(fn[kind], args, n, kw, kind == 2 ? async : plain, kind == 2 ? 2 : 1, na, a) !=
	    0)
		return NULL;
	PyObject **rest = kind == 2 ? a + 2 : a + 1;
	const char *name;
	int64_t id = 0;
	if (tpx_text(a[0], kind == 1 ? "range name" : "name", 0, 0, &name) != 0 ||
	    (kind == 2 && tpx_i64(a[1], "id", INT64_MIN, INT64_MAX, 0, &id) != 0))
		return NULL;
	struct tpuprof_event_attr attr;
	PyObject *keep;
	if (tpx_event_attr(&attr, rest[0], rest[1], &keep) != 0)
		return NULL;
	if (kind == 0)
		tpuprof_mark(name, &attr);
	else if (kind == 1)
		tpuprof_range_begin(name, &attr);
	else
		tpuprof_async_begin(name, (uint64_t)id, &attr);
	Py_XDECREF(keep);
	Py_RETURN_NONE;
}

static PyObject *py_mark(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	return attr_rec(0, args, n, kw);
}

static PyObject *py_range_begin(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	return attr_rec(1, args, n, kw);
}

static PyObject *py_async_begin(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	return attr_rec(2, args, n, kw);
}

static PyObject *py_async_end(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	NAMES("name", "id");
	const char *s;
	int64_t id;
	if (PARSE("async_end", 2) != 0 || tpx_text(a[0], "name", 0, 0, &s) != 0 ||
	    tpx_i64(a[1], "id", INT64_MIN, INT64_MAX, 0, &id) != 0)
		return NULL;
	tpuprof_async_end(s, (uint64_t)id);
	Py_RETURN_NONE;
}

static PyObject *py_set_hooks(PyObject *m, PyObject *args)
{
	(void)m;
	PyObject *info, *wrap;
	if (!PyArg_ParseTuple(args, "OO:_set_hooks", &info, &wrap))
		return NULL;
	Py_XSETREF(tpx_dtype_info, Py_NewRef(info));
	Py_XSETREF(tpx_wrap, Py_NewRef(wrap));
	PyDict_Clear(tpx_dtype_cache);
	Py_RETURN_NONE;
}

/* ---- module ---- */

#define FAST (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)
static PyMethodDef methods[] = {
    {"enable", FN(py_enable), FAST, "enable(max_records=0, mode=1): start a session."},
    {"disable", py_disable, METH_NOARGS, "disable(): end the session and write its dump."},
    {"flush", py_flush, METH_NOARGS, "flush(): write the active session's dump now."},
    {"mode", py_mode, METH_NOARGS, "mode() -> the active session's mode, or -1."},
    {"meta", FN(py_meta), FAST, "meta(key, value): run metadata for every later dump."},
    {"set_device", py_set_device, METH_O, "set_device(d): D of later dump directories."},
    {"version", py_version, METH_NOARGS, "version() -> libtpuprof's version."},
    {"thread_name", py_thread_name, METH_O, "thread_name(name): name the calling thread."},
    {"activity_begin", FN(py_activity_begin), FAST, "activity_begin(name, step=-1, meta=None)"},
    {"activity_end", FN(py_activity_end), FAST, "activity_end(name, step=-1, meta=None)"},
    {"step_begin", FN(py_step_begin), FAST, "step_begin(graph, step, warmup=False)"},
    {"step_end", FN(py_step_end), FAST, "step_end(graph, step)"},
    {"op_begin", py_op_begin, METH_O, "op_begin(op)"},
    {"op_end", FN(py_op_end), FAST,
     "op_end(op, inputs=None, outputs=None, attrs=None, weight=None, sparsity=None, "
     "bytes=None, flops=0)"},
    {"runtime_begin", py_runtime_begin, METH_O, "runtime_begin(name)"},
    {"runtime_end", py_runtime_end, METH_O, "runtime_end(name)"},
    {"counter", FN(py_counter), FAST, "counter(name, value)"},
    {"mark", FN(py_mark), FAST, "mark(name, category=None, color=None)"},
    {"range_begin", FN(py_range_begin), FAST, "range_begin(name, category=None, color=None)"},
    {"range_end", py_range_end, METH_O, "range_end(name)"},
    {"async_begin", FN(py_async_begin), FAST, "async_begin(name, id, category=None, color=None)"},
    {"async_end", FN(py_async_end), FAST, "async_end(name, id)"},
    {"activity", FN(tpx_activity), FAST, "activity(name, step=-1, meta=None) -> Scope"},
    {"step", FN(tpx_step), FAST, "step(graph, step, warmup=False) -> Scope"},
    {"range", FN(tpx_range), FAST, "range(name, category=None, color=None) -> Scope"},
    {"runtime", FN(tpx_runtime), FAST, "runtime(name) -> Scope"},
    {"op_scope", FN(tpx_op_scope), FAST,
     "op_scope(op, inputs=None, outputs=None, attrs=None, weight=None, sparsity=None, "
     "bytes=None, flops=0) -> Scope"},
    {"_set_hooks", py_set_hooks, METH_VARARGS, "internal: the package's dtype and wrap hooks"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tpuprof._tpuprof",
    .m_doc = "The C layer of the tpuprof package over libtpuprof (see tpuprof).",
    .m_size = -1,
    .m_methods = methods,
};

static PyObject *new_error(PyObject *m, const char *name, PyObject *base, const char *doc)
{
	char full[64];
	snprintf(full, sizeof full, "tpuprof.%s", name);
	PyObject *e = PyErr_NewExceptionWithDoc(full, doc, base, NULL);
	if (e && PyModule_AddObjectRef(m, name, e) != 0)
		Py_CLEAR(e);
	return e;
}

PyMODINIT_FUNC PyInit__tpuprof(void)
{
	if (PyType_Ready(&tpx_op_type) < 0 || PyType_Ready(&tpx_scope_type) < 0)
		return NULL;
	PyObject *m = PyModule_Create(&moddef);
	if (m == NULL)
		return NULL;
	tpx_dtype_cache = PyDict_New();
	PyObject *io_bases = NULL;
	if (tpx_dtype_cache == NULL ||
	    !(err_base = new_error(m, "TpuprofError", PyExc_Exception,
	                           "Base class of the errors tpuprof raises.")) ||
	    !(err_busy =
	          new_error(m, "BusyError", err_base, "A capture session is already active.")) ||
	    !(err_off =
	          new_error(m, "NotActiveError", err_base, "No capture session is active.")) ||
	    !(io_bases = PyTuple_Pack(2, err_base, PyExc_OSError)) ||
	    !(err_io = new_error(m, "CaptureIOError", io_bases,
	                         "The dump directory or file could not be created or written.")) ||
	    PyModule_AddObjectRef(m, "Op", (PyObject *)&tpx_op_type) != 0 ||
	    PyModule_AddObjectRef(m, "Scope", (PyObject *)&tpx_scope_type) != 0 ||
	    PyModule_AddIntConstant(m, "MODE_TIMING", TPUPROF_MODE_TIMING) != 0 ||
	    PyModule_AddIntConstant(m, "MODE_CONDENSED", TPUPROF_MODE_CONDENSED) != 0 ||
	    PyModule_AddIntConstant(m, "MODE_DETAILED", TPUPROF_MODE_DETAILED) != 0) {
		Py_XDECREF(io_bases);
		Py_DECREF(m);
		return NULL;
	}
	Py_DECREF(io_bases);
	return m;
}
