/*
 * resplite.algorithms.lzf.compress in C (see lzf_codec.h): the compressor for RDB strings
 * outside the RDB string codec (resplite.formats._rdb has its own copy of the table).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "lzf_codec.h"

static PyObject *py_compress(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t out_len;
    if (!PyArg_ParseTuple(args, "y*n:compress", &data, &out_len))
        return NULL;
    if (data.len == 0 || out_len <= 0) {
        PyBuffer_Release(&data);
        Py_RETURN_NONE;
    }
    if (data.len > (Py_ssize_t)UINT32_MAX - 8) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_OverflowError, "input too long for LZF compression");
        return NULL;
    }
    Py_ssize_t room = lzf_room(data.len);
    if (out_len > room)
        out_len = room;
    PyObject *result = PyBytes_FromStringAndSize(NULL, out_len + 8);
    if (result == NULL) {
        PyBuffer_Release(&data);
        return NULL;
    }
    Py_ssize_t got = lzf_compress((const uint8_t *)data.buf, data.len,
                              (uint8_t *)PyBytes_AS_STRING(result), out_len);
    PyBuffer_Release(&data);
    if (got == 0) {
        Py_DECREF(result);
        Py_RETURN_NONE;
    }
    if (_PyBytes_Resize(&result, got) < 0)
        return NULL;
    return result;
}

static PyMethodDef methods[] = {
    {"compress", py_compress, METH_VARARGS,
     "compress(data, out_len) -> bytes | None\n\n"
     "data LZF-compressed as Redis writes it, or None when it does not fit in out_len "
     "bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_lzf",
    "LZF compression for RDB strings (see resplite.algorithms.lzf).", -1, methods,
};

PyMODINIT_FUNC PyInit__lzf(void) { return PyModule_Create(&module); }
