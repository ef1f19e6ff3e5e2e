/*
 * detail.c — operators for the tpuprof extension: the tpuprof.Op descriptor (a Python object
 * that embeds a struct tpuprof_op, so its address identifies the operator to libtpuprof and
 * its strings are interned once per thread) and per-execution details. Tensors come from
 * anything with `shape` and `dtype` (numpy arrays, torch tensors, tpuprof.Tensor); they are
 * checked and reduced to plain tuples when the caller hands them over, so recording the end
 * of an operator cannot fail half-way.
 */
#include "ext.h"

#include <stdlib.h>
#include <string.h>

PyObject *tpx_dtype_info;
PyObject *tpx_dtype_cache;

/* ---- tpuprof.Op ---- */

static void op_dealloc(tpx_op_object *self)
{
	Py_XDECREF(self->type);
	Py_XDECREF(self->name);
	Py_XDECREF(self->post_op);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *op_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"type", "name", "post_op", NULL};
	PyObject *type = NULL, *name = Py_None, *post = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:Op", kwlist, &type, &name, &post))
		return NULL;
	const char *t, *n, *p;
	if (tpx_text(type, "operator type", 0, 0, &t) != 0 ||
	    tpx_text(name, "operator name", 1, 0, &n) != 0 ||
	    tpx_text(post, "post_op", 1, 1, &p) != 0)
		return NULL;
	tpx_op_object *self = (tpx_op_object *)tp->tp_alloc(tp, 0);
	if (self == NULL)
		return NULL;
	Py_INCREF(type);
	self->type = type;
	self->op.type = t;
	if (n) {
		Py_INCREF(name);
		self->name = name;
	} else {
		/* An operator without a name is named after its type. */
		Py_INCREF(type);
		self->name = type;
		n = t;
	}
	self->op.name = n;
	if (p) {
		Py_INCREF(post);
		self->post_op = post;
	}
	self->op.post_op = p;
	return (PyObject *)self;
}

static PyObject *op_repr(tpx_op_object *self)
{
	return PyUnicode_FromFormat("tpuprof.Op(%R, name=%R)", self->type, self->name);
}

static PyObject *op_get_type(tpx_op_object *self, void *c)
{
	(void)c;
	return Py_NewRef(self->type);
}

static PyObject *op_get_name(tpx_op_object *self, void *c)
{
	(void)c;
	return Py_NewRef(self->name);
}

static PyObject *op_get_post(tpx_op_object *self, void *c)
{
	(void)c;
	return Py_NewRef(self->post_op ? self->post_op : Py_None);
}

static PyGetSetDef op_getset[] = {
    {"type", (getter)op_get_type, NULL, "operator type (\"MatMul\", \"aten::addmm\")", NULL},
    {"name", (getter)op_get_name, NULL, "operator instance name (the type if none given)", NULL},
    {"post_op", (getter)op_get_post, NULL, "fused post operation, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject tpx_op_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tpuprof.Op",
    .tp_basicsize = sizeof(tpx_op_object),
    .tp_dealloc = (destructor)op_dealloc,
    .tp_repr = (reprfunc)op_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Op(type, name=None, post_op=None)\n--\n\n"
              "An operator descriptor: keep one per operator (or per type) and pass it to\n"
              "op_begin / op_end; its address identifies the operator, so its strings are\n"
              "interned once per thread.",
    .tp_getset = op_getset,
    .tp_new = op_new,
};

/* ---- tensors ---- */

/* (name, itemsize) for a dtype object or name, through the package's dtype_info, cached. */
static PyObject *dtype_lookup(PyObject *dtype)
{
	PyObject *hit = PyDict_GetItemWithError(tpx_dtype_cache, dtype);
	if (hit)
		return Py_NewRef(hit);
	if (PyErr_Occurred())
		PyErr_Clear(); /* an unhashable dtype: look it up every time */
	if (tpx_dtype_info == NULL) {
		PyErr_SetString(PyExc_RuntimeError, "tpuprof._tpuprof used without the package");
		return NULL;
	}
	PyObject *r = PyObject_CallOneArg(tpx_dtype_info, dtype);
	if (r == NULL)
		return NULL;
	if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
		Py_DECREF(r);
		PyErr_SetString(PyExc_TypeError, "dtype_info must return (name, itemsize)");
		return NULL;
	}
	if (PyDict_SetItem(tpx_dtype_cache, dtype, r) != 0)
		PyErr_Clear();
	return r;
}

static PyObject *shape_tuple(PyObject *shape, const char *what, uint64_t *numel)
{
	PyObject *seq = PySequence_Fast(shape, "");
	if (seq == NULL) {
		PyErr_Format(PyExc_TypeError, "%s: shape must be a sequence of ints, not %.100s",
		             what, Py_TYPE(shape)->tp_name);
		return NULL;
	}
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	PyObject *out = PyTuple_New(n);
	*numel = 1;
	for (Py_ssize_t i = 0; out && i < n; i++) {
		int64_t d;
		if (tpx_i64(PySequence_Fast_GET_ITEM(seq, i), "shape dimension", 0, INT64_MAX, 0,
		            &d) != 0) {
			Py_CLEAR(out);
			break;
		}
		*numel *= (uint64_t)d;
		PyTuple_SET_ITEM(out, i, PyLong_FromLongLong(d));
	}
	Py_DECREF(seq);
	return out;
}

/* Byte size: an int `nbytes` attribute when the object has one (numpy, tpuprof.Tensor with
 * nbytes), else elements x itemsize (0 when the itemsize is unknown). */
static int tensor_nbytes(PyObject *t, uint64_t numel, PyObject *info, uint64_t *out)
{
	/* Types seen without `nbytes` (torch tensors before 2.1): not asked again, since a
	 * failed attribute lookup raises and clears an exception every time. */
	static PyObject *without;
	if (without == NULL && (without = PySet_New(NULL)) == NULL)
		return -1;
	PyObject *nb = NULL;
	int known = PySet_Contains(without, (PyObject *)Py_TYPE(t));
	if (known < 0)
		return -1;
	if (!known && tpx_getattr_opt(t, "nbytes", &nb) < 0)
		return -1;
	if (!known && nb == NULL && PySet_Add(without, (PyObject *)Py_TYPE(t)) != 0)
		return -1;
	if (nb && nb != Py_None) {
		int64_t v;
		int rc = tpx_i64(nb, "tensor nbytes", 0, INT64_MAX, 0, &v);
		Py_DECREF(nb);
		*out = (uint64_t)v;
		return rc;
	}
	Py_XDECREF(nb);
	long long itemsize = PyLong_AsLongLong(PyTuple_GET_ITEM(info, 1));
	if (itemsize < 0 && PyErr_Occurred())
		return -1;
	*out = itemsize > 0 ? numel * (uint64_t)itemsize : 0;
	return 0;
}

/* One tensor-like -> (name, dtype, shape, nbytes). */
static PyObject *tensor_tuple(PyObject *t, PyObject *name, const char *what)
{
	PyObject *shape = NULL, *dtype = NULL, *info = NULL, *out = NULL, *shp = NULL;
	if (tpx_getattr_opt(t, "shape", &shape) < 0)
		return NULL;
	if (shape == NULL || PyUnicode_Check(t) || PyBytes_Check(t)) {
		PyErr_Format(PyExc_TypeError,
		             "%s: expected a tensor (an object with shape and dtype: numpy array, "
		             "torch tensor, tpuprof.Tensor), not %.100s",
		             what, Py_TYPE(t)->tp_name);
		goto out;
	}
	if (tpx_getattr_opt(t, "dtype", &dtype) < 0)
		goto out;
	if (dtype == NULL)
		dtype = Py_NewRef(Py_None);
	info = dtype_lookup(dtype);
	if (info == NULL)
		goto out;
	uint64_t numel, nbytes;
	shp = shape_tuple(shape, what, &numel);
	if (shp == NULL || tensor_nbytes(t, numel, info, &nbytes) != 0)
		goto out;
	if (name)
		Py_INCREF(name);
	else if (tpx_getattr_opt(t, "name", &name) < 0)
		goto out;
	if (name && name != Py_None && !PyUnicode_Check(name)) {
		/* Only str names are recorded (torch tensors carry other kinds of `name`). */
		Py_SETREF(name, Py_NewRef(Py_None));
	}
	const char *s;
	if (name && tpx_text(name, "tensor name", 1, 1, &s) != 0) {
		Py_DECREF(name);
		goto out;
	}
	out = Py_BuildValue("(NOOK)", name ? name : Py_NewRef(Py_None), PyTuple_GET_ITEM(info, 0),
	                    shp, (unsigned long long)nbytes);
out:
	Py_XDECREF(shape);
	Py_XDECREF(dtype);
	Py_XDECREF(info);
	Py_XDECREF(shp);
	return out;
}

PyObject *tpx_tensors(PyObject *o, const char *what)
{
	if (o == NULL || o == Py_None)
		return NULL;
	if (PyDict_Check(o)) {
		PyObject *out = PyTuple_New(PyDict_GET_SIZE(o));
		PyObject *k, *v;
		Py_ssize_t pos = 0, i = 0;
		while (out && PyDict_Next(o, &pos, &k, &v)) {
			if (!PyUnicode_Check(k)) {
				PyErr_Format(PyExc_TypeError,
				             "%s: tensor names must be str, not %.100s", what,
				             Py_TYPE(k)->tp_name);
				Py_CLEAR(out);
				break;
			}
			PyObject *t = tensor_tuple(v, k, what);
			if (t == NULL) {
				Py_CLEAR(out);
				break;
			}
			PyTuple_SET_ITEM(out, i++, t);
		}
		return out;
	}
	int has_shape = PyObject_HasAttrString(o, "shape");
	if (has_shape) {
		PyObject *t = tensor_tuple(o, NULL, what);
		PyObject *one = t ? PyTuple_Pack(1, t) : NULL;
		Py_XDECREF(t);
		return one;
	}
	PyObject *seq = PySequence_Fast(o, "");
	if (seq == NULL) {
		PyErr_Format(PyExc_TypeError,
		             "%s must be a tensor, a sequence of tensors or a dict name -> tensor, "
		             "not %.100s",
		             what, Py_TYPE(o)->tp_name);
		return NULL;
	}
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	PyObject *out = PyTuple_New(n);
	for (Py_ssize_t i = 0; out && i < n; i++) {
		PyObject *t = tensor_tuple(PySequence_Fast_GET_ITEM(seq, i), NULL, what);
		if (t == NULL)
			Py_CLEAR(out);
		else
			PyTuple_SET_ITEM(out, i, t);
	}
	Py_DECREF(seq);
	return out;
}

/* ---- attributes ---- */

static PyObject *attr_value(PyObject *v)
{
	if (v == Py_True)
		return PyUnicode_FromString("true");
	if (v == Py_False)
		return PyUnicode_FromString("false");
	if (PyUnicode_Check(v))
		return Py_NewRef(v);
	return PyObject_Str(v);
}

PyObject *tpx_attrs(PyObject *o)
{
	if (o == NULL || o == Py_None)
		return NULL;
	if (!PyDict_Check(o)) {
		PyErr_Format(PyExc_TypeError, "attrs must be a dict of str -> value, not %.100s",
		             Py_TYPE(o)->tp_name);
		return NULL;
	}
	PyObject *out = PyTuple_New(PyDict_GET_SIZE(o));
	PyObject *k, *v;
	Py_ssize_t pos = 0, i = 0;
	while (out && PyDict_Next(o, &pos, &k, &v)) {
		const char *s;
		PyObject *val = NULL;
		if (tpx_text(k, "attribute name", 0, 0, &s) != 0 || (val = attr_value(v)) == NULL ||
		    tpx_text(val, "attribute value", 0, 1, &s) != 0) {
			Py_XDECREF(val);
			Py_CLEAR(out);
			break;
		}
		PyObject *kv = PyTuple_Pack(2, k, val);
		Py_DECREF(val);
		if (kv == NULL) {
			Py_CLEAR(out);
			break;
		}
		PyTuple_SET_ITEM(out, i++, kv);
	}
	return out;
}

/* ---- details ---- */

void tpx_detail_clear(struct tpx_detail *d)
{
	Py_CLEAR(d->inputs);
	Py_CLEAR(d->outputs);
	Py_CLEAR(d->attrs);
	Py_CLEAR(d->weight);
	d->sparsity = -1.0;
	d->bytes = d->flops = 0;
	d->bytes_given = 0;
}

uint64_t tpx_tensor_bytes(PyObject *tensors)
{
	uint64_t s = 0;
	for (Py_ssize_t i = 0; tensors && i < PyTuple_GET_SIZE(tensors); i++)
		s += PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(tensors, i), 3));
	return s;
}

int tpx_detail_set(struct tpx_detail *d, PyObject *inputs, PyObject *outputs, PyObject *attrs,
                   PyObject *weight, PyObject *sparsity, PyObject *bytes, PyObject *flops)
{
	struct tpx_detail n = {NULL, NULL, NULL, NULL, -1.0, 0, 0, 0};
	int64_t b, f;
	if (bytes == Py_None)
		bytes = NULL;
	if (flops == Py_None)
		flops = NULL;
	if (tpx_i64(bytes, "bytes", 0, INT64_MAX, 0, &b) != 0 ||
	    tpx_i64(flops, "flops", 0, INT64_MAX, 0, &f) != 0)
		return -1;
	if (sparsity && sparsity != Py_None) {
		n.sparsity = PyFloat_AsDouble(sparsity);
		if (n.sparsity == -1.0 && PyErr_Occurred())
			return -1;
		if (!(n.sparsity >= 0.0 && n.sparsity <= 1.0)) {
			PyErr_Format(PyExc_ValueError, "sparsity must be in [0, 1], got %R",
			             sparsity);
			return -1;
		}
	}
	if (((n.inputs = tpx_tensors(inputs, "inputs")) == NULL && PyErr_Occurred()) ||
	    ((n.outputs = tpx_tensors(outputs, "outputs")) == NULL && PyErr_Occurred()) ||
	    ((n.attrs = tpx_attrs(attrs)) == NULL && PyErr_Occurred()))
		goto fail;
	if (weight && weight != Py_None) {
		PyObject *w = tpx_tensors(weight, "weight");
		if (w == NULL)
			goto fail;
		if (PyTuple_GET_SIZE(w) != 1) {
			Py_DECREF(w);
			PyErr_SetString(PyExc_ValueError, "weight must be one tensor");
			goto fail;
		}
		n.weight = Py_NewRef(PyTuple_GET_ITEM(PyTuple_GET_ITEM(w, 0), 2));
		Py_DECREF(w);
	}
	n.bytes_given = bytes != NULL;
	n.bytes =
	    n.bytes_given ? (uint64_t)b : tpx_tensor_bytes(n.inputs) + tpx_tensor_bytes(n.outputs);
	n.flops = (uint64_t)f;
	tpx_detail_clear(d);
	*d = n;
	return 0;
fail:
	tpx_detail_clear(&n);
	return -1;
}

static Py_ssize_t dims_of(PyObject *tensors)
{
	Py_ssize_t s = 0;
	for (Py_ssize_t i = 0; tensors && i < PyTuple_GET_SIZE(tensors); i++)
		s += PyTuple_GET_SIZE(PyTuple_GET_ITEM(PyTuple_GET_ITEM(tensors, i), 2));
	return s;
}

static int64_t *fill_dims(PyObject *shape, int64_t *dims)
{
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++)
		dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
	return dims + PyTuple_GET_SIZE(shape);
}

static int64_t *fill_tensors(PyObject *tensors, struct tpuprof_tensor *out, int64_t *dims)
{
	for (Py_ssize_t i = 0; tensors && i < PyTuple_GET_SIZE(tensors); i++) {
		PyObject *t = PyTuple_GET_ITEM(tensors, i);
		PyObject *name = PyTuple_GET_ITEM(t, 0), *dtype = PyTuple_GET_ITEM(t, 1);
		PyObject *shape = PyTuple_GET_ITEM(t, 2);
		out[i].name = name == Py_None ? NULL : PyUnicode_AsUTF8(name);
		out[i].dtype = dtype == Py_None ? NULL : PyUnicode_AsUTF8(dtype);
		out[i].shape = dims;
		out[i].ndim = (int)PyTuple_GET_SIZE(shape);
		dims = fill_dims(shape, dims);
	}
	return dims;
}

int tpx_op_end(const struct tpuprof_op *op, const struct tpx_detail *d)
{
	if (d == NULL || tpuprof_mode() != TPUPROF_MODE_DETAILED) {
		tpuprof_op_end(op, NULL);
		return 0;
	}
	Py_ssize_t nin = d->inputs ? PyTuple_GET_SIZE(d->inputs) : 0;
	Py_ssize_t nout = d->outputs ? PyTuple_GET_SIZE(d->outputs) : 0;
	Py_ssize_t nattr = d->attrs ? PyTuple_GET_SIZE(d->attrs) : 0;
	Py_ssize_t ndims = dims_of(d->inputs) + dims_of(d->outputs) +
	                   (d->weight ? PyTuple_GET_SIZE(d->weight) : 0);
	struct tpuprof_tensor *tens = PyMem_Calloc((size_t)(nin + nout) + 1, sizeof *tens);
	struct tpuprof_attr *attrs = PyMem_Calloc((size_t)nattr + 1, sizeof *attrs);
	int64_t *dims = PyMem_Calloc((size_t)ndims + 1, sizeof *dims);
	if (tens == NULL || attrs == NULL || dims == NULL) {
		PyMem_Free(tens);
		PyMem_Free(attrs);
		PyMem_Free(dims);
		tpuprof_op_end(op, NULL);
		PyErr_NoMemory();
		return -1;
	}
	struct tpuprof_op_detail det;
	tpuprof_op_detail_init(&det);
	int64_t *p = fill_tensors(d->inputs, tens, dims);
	p = fill_tensors(d->outputs, tens + nin, p);
	det.inputs = tens;
	det.num_inputs = (int)nin;
	det.outputs = tens + nin;
	det.num_outputs = (int)nout;
	for (Py_ssize_t i = 0; i < nattr; i++) {
		PyObject *kv = PyTuple_GET_ITEM(d->attrs, i);
		attrs[i].key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kv, 0));
		attrs[i].value = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kv, 1));
	}
	det.attrs = attrs;
	det.num_attrs = (int)nattr;
	if (d->weight) {
		det.weight_shape = p;
		det.weight_ndim = (int)PyTuple_GET_SIZE(d->weight);
		fill_dims(d->weight, p);
		det.weight_sparsity = d->sparsity;
	}
	det.bytes = d->bytes;
	det.flops = d->flops;
	tpuprof_op_end(op, &det);
	PyMem_Free(tens);
	PyMem_Free(attrs);
	PyMem_Free(dims);
	return 0;
}
