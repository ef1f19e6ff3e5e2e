/*
 * scope.c — tpuprof.Scope, the object behind `with tpuprof.activity(...)`, `tpuprof.step`,
 * `tpuprof.range`, `tpuprof.runtime` and `tpuprof.op`: __enter__ records the begin,
 * __exit__ the end (also when the body raises, so scopes always nest), and calling a scope
 * with a function decorates it. Every argument is checked when the scope is made, so entering
 * and leaving it never fails and never records one side only.
 */
#include "ext.h"

#include <frameobject.h>

PyObject *tpx_wrap;

enum scope_kind { SK_ACTIVITY, SK_STEP, SK_RANGE, SK_RUNTIME, SK_OP };
static const char *const kind_names[] = {"activity", "step", "range", "runtime", "op"};

typedef struct {
	PyObject_HEAD int kind;
	PyObject *name;      /* str: activity / graph / range / runtime name */
	PyObject *meta;      /* activity meta text, or range category (str or NULL) */
	PyObject *op;        /* tpuprof.Op for SK_OP */
	int64_t step;        /* activity or graph step */
	int warmup;          /* graph step */
	uint32_t color;      /* range colour */
	struct tpx_detail d; /* operator detail */
} scope_object;

static void scope_dealloc(scope_object *self)
{
	Py_XDECREF(self->name);
	Py_XDECREF(self->meta);
	Py_XDECREF(self->op);
	tpx_detail_clear(&self->d);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static scope_object *scope_make(int kind, PyObject *name, PyObject *meta)
{
	scope_object *s = PyObject_New(scope_object, &tpx_scope_type);
	if (s == NULL)
		return NULL;
	s->kind = kind;
	s->name = Py_XNewRef(name);
	s->meta = meta == Py_None ? NULL : Py_XNewRef(meta);
	s->op = NULL;
	s->step = -1;
	s->warmup = 0;
	s->color = 0;
	struct tpx_detail none = {NULL, NULL, NULL, NULL, -1.0, 0, 0, 0};
	s->d = none;
	return s;
}

int tpx_event_attr(struct tpuprof_event_attr *a, PyObject *category, PyObject *color,
                   PyObject **keep)
{
	const struct tpuprof_event_attr init = TPUPROF_EVENT_ATTR_INIT;
	*a = init;
	*keep = NULL;
	if (tpx_text(category, "category", 1, 1, &a->category) != 0 ||
	    tpx_color(color, &a->color) != 0)
		return -1;
	if (tpuprof_mode() != TPUPROF_MODE_DETAILED)
		return 0;
	/* The source location of the Python code that called us. */
	PyFrameObject *f = PyEval_GetFrame();
	if (f == NULL)
		return 0;
	PyCodeObject *code = PyFrame_GetCode(f);
	a->line = PyFrame_GetLineNumber(f);
	a->file = PyUnicode_AsUTF8(code->co_filename);
	a->function = PyUnicode_AsUTF8(code->co_qualname);
	if (a->file == NULL || a->function == NULL) {
		PyErr_Clear();
		a->file = a->function = NULL;
	}
	*keep = (PyObject *)code;
	return 0;
}

static PyObject *scope_enter(scope_object *self, PyObject *unused)
{
	(void)unused;
	/* The strings were checked when the scope was made. */
	const char *name = self->name ? PyUnicode_AsUTF8(self->name) : NULL;
	const char *meta = self->meta ? PyUnicode_AsUTF8(self->meta) : NULL;
	switch (self->kind) {
	case SK_ACTIVITY:
		tpuprof_activity_begin(name, self->step, meta);
		break;
	case SK_STEP:
		tpuprof_step_begin(name, self->step, self->warmup);
		break;
	case SK_RANGE: {
		struct tpuprof_event_attr a;
		PyObject *keep;
		if (tpx_event_attr(&a, self->meta, NULL, &keep) != 0)
			return NULL;
		a.color = self->color;
		tpuprof_range_begin(name, &a);
		Py_XDECREF(keep);
		break;
	}
	case SK_RUNTIME:
		tpuprof_runtime_begin(name);
		break;
	case SK_OP:
		tpuprof_op_begin(&((tpx_op_object *)self->op)->op);
		break;
	}
	return Py_NewRef((PyObject *)self);
}

static PyObject *scope_exit(scope_object *self, PyObject *const *args, Py_ssize_t n)
{
	(void)args;
	(void)n;
	const char *name = self->name ? PyUnicode_AsUTF8(self->name) : NULL;
	switch (self->kind) {
	case SK_ACTIVITY:
		tpuprof_activity_end(name, self->step,
		                     self->meta ? PyUnicode_AsUTF8(self->meta) : NULL);
		break;
	case SK_STEP:
		tpuprof_step_end(name, self->step);
		break;
	case SK_RANGE:
		tpuprof_range_end(name);
		break;
	case SK_RUNTIME:
		tpuprof_runtime_end(name);
		break;
	case SK_OP:
		if (tpx_op_end(&((tpx_op_object *)self->op)->op, &self->d) != 0)
			return NULL;
		break;
	}
	Py_RETURN_FALSE;
}

static PyObject *scope_call(scope_object *self, PyObject *args, PyObject *kw)
{
	PyObject *fn;
	if ((kw && PyDict_GET_SIZE(kw)) || PyTuple_GET_SIZE(args) != 1 ||
	    !PyCallable_Check(fn = PyTuple_GET_ITEM(args, 0))) {
		PyErr_SetString(
		    PyExc_TypeError,
		    "a tpuprof scope decorates one function: @tpuprof.activity(\"name\")");
		return NULL;
	}
	if (tpx_wrap == NULL) {
		PyErr_SetString(PyExc_RuntimeError, "tpuprof._tpuprof used without the package");
		return NULL;
	}
	return PyObject_CallFunctionObjArgs(tpx_wrap, (PyObject *)self, fn, NULL);
}

/* Setting `outputs` (or `inputs`, `attrs`) inside the body: checked now, recorded at exit. */
static int scope_set_part(scope_object *self, PyObject *v, int which)
{
	if (self->kind != SK_OP) {
		PyErr_SetString(PyExc_AttributeError, "only operator scopes have tensors");
		return -1;
	}
	struct tpx_detail *d = &self->d;
	PyObject *nv = which == 2 ? tpx_attrs(v) : tpx_tensors(v, which ? "outputs" : "inputs");
	if (nv == NULL && PyErr_Occurred())
		return -1;
	PyObject **slot = which == 0 ? &d->inputs : which == 1 ? &d->outputs : &d->attrs;
	Py_XSETREF(*slot, nv);
	if (!d->bytes_given)
		d->bytes = tpx_tensor_bytes(d->inputs) + tpx_tensor_bytes(d->outputs);
	return 0;
}

static PyObject *tensors_get(PyObject *t)
{
	if (t == NULL)
		return PyTuple_New(0);
	return Py_NewRef(t);
}

static PyObject *scope_get_inputs(scope_object *self, void *c)
{
	(void)c;
	return tensors_get(self->d.inputs);
}
static PyObject *scope_get_outputs(scope_object *self, void *c)
{
	(void)c;
	return tensors_get(self->d.outputs);
}
static PyObject *scope_get_attrs(scope_object *self, void *c)
{
	(void)c;
	return tensors_get(self->d.attrs);
}
static int scope_set_inputs(scope_object *self, PyObject *v, void *c)
{
	(void)c;
	return scope_set_part(self, v, 0);
}
static int scope_set_outputs(scope_object *self, PyObject *v, void *c)
{
	(void)c;
	return scope_set_part(self, v, 1);
}
static int scope_set_attrs(scope_object *self, PyObject *v, void *c)
{
	(void)c;
	return scope_set_part(self, v, 2);
}

static PyObject *scope_get_op(scope_object *self, void *c)
{
	(void)c;
	return Py_NewRef(self->op ? self->op : Py_None);
}

static PyObject *scope_get_kind(scope_object *self, void *c)
{
	(void)c;
	return PyUnicode_FromString(kind_names[self->kind]);
}

static PyObject *scope_repr(scope_object *self)
{
	if (self->kind == SK_OP)
		return PyUnicode_FromFormat("tpuprof.op(%R)", self->op);
	if (self->kind == SK_ACTIVITY || self->kind == SK_STEP)
		return PyUnicode_FromFormat("tpuprof.%s(%R, %lld)", kind_names[self->kind],
		                            self->name, (long long)self->step);
	return PyUnicode_FromFormat("tpuprof.%s(%R)", kind_names[self->kind], self->name);
}

static PyMethodDef scope_methods[] = {
    {"__enter__", (PyCFunction)scope_enter, METH_NOARGS, "Records the begin."},
    {"__exit__", (PyCFunction)(void (*)(void))scope_exit, METH_FASTCALL,
     "Records the end (also when the body raised); never suppresses the exception."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef scope_getset[] = {
    {"inputs", (getter)scope_get_inputs, (setter)scope_set_inputs,
     "operator scopes: the input tensors as (name, dtype, shape, nbytes) tuples", NULL},
    {"outputs", (getter)scope_get_outputs, (setter)scope_set_outputs,
     "operator scopes: the output tensors; assign them inside the body", NULL},
    {"attrs", (getter)scope_get_attrs, (setter)scope_set_attrs,
     "operator scopes: the attributes as (key, value) tuples", NULL},
    {"op", (getter)scope_get_op, NULL, "operator scopes: the tpuprof.Op; else None", NULL},
    {"kind", (getter)scope_get_kind, NULL,
     "\"activity\", \"step\", \"range\", \"runtime\" or \"op\"", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject tpx_scope_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tpuprof.Scope",
    .tp_basicsize = sizeof(scope_object),
    .tp_dealloc = (destructor)scope_dealloc,
    .tp_repr = (reprfunc)scope_repr,
    .tp_call = (ternaryfunc)scope_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A recorded scope: use it in a with statement or as a decorator.",
    .tp_methods = scope_methods,
    .tp_getset = scope_getset,
};

/* ---- constructors ---- */

PyObject *tpx_activity(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	static const char *const names[] = {"name", "step", "meta"};
	PyObject *a[3];
	const char *s;
	int64_t step;
	if (tpx_parse("activity", args, n, kw, names, 1, 3, a) != 0 ||
	    tpx_text(a[0], "activity name", 0, 0, &s) != 0 ||
	    tpx_i64(a[1], "step", -1, INT64_MAX, -1, &step) != 0 ||
	    tpx_text(a[2], "meta", 1, 1, &s) != 0)
		return NULL;
	scope_object *o = scope_make(SK_ACTIVITY, a[0], a[2]);
	if (o)
		o->step = step;
	return (PyObject *)o;
}

PyObject *tpx_step(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	static const char *const names[] = {"graph", "step", "warmup"};
	PyObject *a[3];
	const char *s;
	int64_t step;
	int warm;
	if (tpx_parse("step", args, n, kw, names, 2, 3, a) != 0 ||
	    tpx_text(a[0], "graph", 0, 0, &s) != 0 ||
	    tpx_i64(a[1], "step", 0, INT64_MAX, 0, &step) != 0 ||
	    tpx_bool(a[2], "warmup", &warm) != 0)
		return NULL;
	scope_object *o = scope_make(SK_STEP, a[0], NULL);
	if (o) {
		o->step = step;
		o->warmup = warm;
	}
	return (PyObject *)o;
}

PyObject *tpx_range(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	static const char *const names[] = {"name", "category", "color"};
	PyObject *a[3];
	const char *s;
	uint32_t color;
	if (tpx_parse("range", args, n, kw, names, 1, 3, a) != 0 ||
	    tpx_text(a[0], "range name", 0, 0, &s) != 0 ||
	    tpx_text(a[1], "category", 1, 1, &s) != 0 || tpx_color(a[2], &color) != 0)
		return NULL;
	scope_object *o = scope_make(SK_RANGE, a[0], a[1]);
	if (o)
		o->color = color;
	return (PyObject *)o;
}

PyObject *tpx_runtime(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	static const char *const names[] = {"name"};
	PyObject *a[1];
	const char *s;
	if (tpx_parse("runtime", args, n, kw, names, 1, 1, a) != 0 ||
	    tpx_text(a[0], "runtime call name", 0, 0, &s) != 0)
		return NULL;
	return (PyObject *)scope_make(SK_RUNTIME, a[0], NULL);
}

PyObject *tpx_op_scope(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kw)
{
	(void)m;
	static const char *const names[] = {"op",     "inputs",   "outputs", "attrs",
	                                    "weight", "sparsity", "bytes",   "flops"};
	PyObject *a[8];
	if (tpx_parse("op_scope", args, n, kw, names, 1, 8, a) != 0)
		return NULL;
	if (!PyObject_TypeCheck(a[0], &tpx_op_type)) {
		PyErr_Format(PyExc_TypeError, "op must be a tpuprof.Op, not %.100s",
		             Py_TYPE(a[0])->tp_name);
		return NULL;
	}
	scope_object *o = scope_make(SK_OP, NULL, NULL);
	if (o == NULL)
		return NULL;
	o->op = Py_NewRef(a[0]);
	if (tpx_detail_set(&o->d, a[1], a[2], a[3], a[4], a[5], a[6], a[7]) != 0) {
		Py_DECREF(o);
		return NULL;
	}
	return (PyObject *)o;
}
