/*
 * args.c — argument parsing and checking for the tpuprof extension. The recording functions
 * are called per event, so they take the vectorcall convention and parse their few
 * arguments here without building tuples or dicts; the messages are Python's own
 * ("f() missing required argument 'name'") or say which argument is wrong and why.
 */
#include "ext.h"

#include <string.h>

static int kw_index(PyObject *key, const char *const *names, int nmax)
{
	for (int i = 0; i < nmax; i++)
		if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0)
			return i;
	return -1;
}

int tpx_parse(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              const char *const *names, int nreq, int nmax, PyObject **out)
{
	if (nargs > nmax) {
		PyErr_Format(PyExc_TypeError, "%s() takes at most %d argument%s (%zd given)", fn,
		             nmax, nmax == 1 ? "" : "s", nargs);
		return -1;
	}
	for (int i = 0; i < nmax; i++)
		out[i] = i < nargs ? args[i] : NULL;
	Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
	for (Py_ssize_t k = 0; k < nkw; k++) {
		PyObject *key = PyTuple_GET_ITEM(kwnames, k);
		int i = kw_index(key, names, nmax);
		if (i < 0) {
			PyErr_Format(PyExc_TypeError,
			             "%s() got an unexpected keyword argument '%U'", fn, key);
			return -1;
		}
		if (out[i] != NULL) {
			PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
			             fn, names[i]);
			return -1;
		}
		out[i] = args[nargs + k];
	}
	for (int i = 0; i < nreq; i++)
		if (out[i] == NULL) {
			PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn,
			             names[i]);
			return -1;
		}
	return 0;
}

int tpx_text(PyObject *o, const char *what, int none_ok, int empty_ok, const char **out)
{
	*out = NULL;
	if (o == NULL || (none_ok && o == Py_None))
		return 0;
	if (!PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be str%s, not %.100s", what,
		             none_ok ? " or None" : "", Py_TYPE(o)->tp_name);
		return -1;
	}
	Py_ssize_t n;
	const char *s = PyUnicode_AsUTF8AndSize(o, &n);
	if (s == NULL)
		return -1;
	if (n == 0 && !empty_ok) {
		PyErr_Format(PyExc_ValueError, "%s must not be empty", what);
		return -1;
	}
	if (strlen(s) != (size_t)n) {
		PyErr_Format(PyExc_ValueError, "%s contains a NUL character", what);
		return -1;
	}
	*out = s;
	return 0;
}

int tpx_i64(PyObject *o, const char *what, int64_t lo, int64_t hi, int64_t def, int64_t *out)
{
	*out = def;
	if (o == NULL)
		return 0;
	long long v;
	if (PyLong_CheckExact(o)) {
		v = PyLong_AsLongLong(o);
	} else {
		if (PyFloat_Check(o) || !PyIndex_Check(o)) {
			PyErr_Format(PyExc_TypeError, "%s must be int, not %.100s", what,
			             Py_TYPE(o)->tp_name);
			return -1;
		}
		PyObject *i = PyNumber_Index(o);
		if (i == NULL)
			return -1;
		v = PyLong_AsLongLong(i);
		Py_DECREF(i);
	}
	if (v == -1 && PyErr_Occurred()) {
		if (!PyErr_ExceptionMatches(PyExc_OverflowError))
			return -1;
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "%s is out of range [%lld, %lld]", what,
		             (long long)lo, (long long)hi);
		return -1;
	}
	if (v < lo || v > hi) {
		PyErr_Format(PyExc_ValueError, "%s must be in [%lld, %lld], got %lld", what,
		             (long long)lo, (long long)hi, v);
		return -1;
	}
	*out = (int64_t)v;
	return 0;
}

int tpx_bool(PyObject *o, const char *what, int *out)
{
	*out = 0;
	if (o == NULL)
		return 0;
	if (!PyBool_Check(o) && !PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be bool, not %.100s", what,
		             Py_TYPE(o)->tp_name);
		return -1;
	}
	int t = PyObject_IsTrue(o);
	if (t < 0)
		return -1;
	*out = t;
	return 0;
}

int tpx_color(PyObject *o, uint32_t *out)
{
	*out = 0;
	if (o == NULL || o == Py_None)
		return 0;
	int64_t rgb[3];
	if (PyTuple_Check(o)) {
		if (PyTuple_GET_SIZE(o) != 3) {
			PyErr_SetString(PyExc_ValueError,
			                "color must be an (r, g, b) tuple of three ints");
			return -1;
		}
		for (int i = 0; i < 3; i++)
			if (tpx_i64(PyTuple_GET_ITEM(o, i), "color component", 0, 255, 0,
			            &rgb[i]) != 0)
				return -1;
	} else {
		int64_t v;
		if (tpx_i64(o, "color", 0, 0xffffff, 0, &v) != 0)
			return -1;
		rgb[0] = v >> 16;
		rgb[1] = (v >> 8) & 0xff;
		rgb[2] = v & 0xff;
	}
	*out = TPUPROF_RGB(rgb[0], rgb[1], rgb[2]);
	return 0;
}
