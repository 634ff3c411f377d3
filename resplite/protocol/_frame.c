/*
 * The request reader's fast path in C (resplite.protocol.reader): one request framed
 * straight from the buffer, without hiredis and without the scan for large aggregate
 * headers that hiredis needs (it allocates an array's list as soon as it reads the count;
 * this code allocates nothing before the whole request is known to be there).
 *
 * frame(buf, pos, max_args, max_bulk) takes the request starting at ``pos`` of ``buf``
 * (bytes or bytearray) when it is complete and written canonically, as clients write
 * requests: "*<count>\r\n" then, count times, "$<len>\r\n<len bytes>\r\n", numbers without
 * sign or leading zero, 1 <= count <= max_args, len <= max_bulk. It answers
 * (argv, end): the arguments as a new list of bytes and the offset after the request.
 * Anything else answers None and changes nothing: an incomplete request, a count of 0 or
 * a negative one, a line end other than "\r\n", a limit passed, any other byte where a
 * header belongs. The reader's Python parser then reads that request with Redis's exact
 * rules (errors, skipped requests, limits, partial input), so this code decides nothing
 * that Redis's framing could decide differently: a request it takes is one Redis frames
 * the same way, and tests hold the two readers equal.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Counts above this are left to the Python parser, which frames a request with many
 * arguments a part at a time (the reader's element quota) so one read of it never holds
 * the event loop for long. */
#define FRAME_MAX_ARGS 1024
/* Digits of a bulk length taken here: up to 999,999,999,999,999,999 (no overflow). */
#define MAX_DIGITS 18

/* The canonical number at s (no sign, no leading zero but "0" itself) ending with "\r\n"
 * before end; its value, with *next set after the "\r\n". -1 when the line is not that
 * or is not all here. */
static int64_t line_number(const uint8_t *s, const uint8_t *end, const uint8_t **next)
{
    const uint8_t *p = s;
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (p - s == MAX_DIGITS)
            return -1;
        v = v * 10 + (*p - '0');
        p++;
    }
    Py_ssize_t digits = p - s;
    if (digits == 0 || (digits > 1 && s[0] == '0'))
        return -1;
    if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
        return -1;
    *next = p + 2;
    return v;
}

static PyObject *frame(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "frame(buf, pos, max_args, max_bulk)");
        return NULL;
    }
    PyObject *buf = args[0];
    const uint8_t *data;
    Py_ssize_t size;
    if (PyBytes_Check(buf)) {
        data = (const uint8_t *)PyBytes_AS_STRING(buf);
        size = PyBytes_GET_SIZE(buf);
    } else if (PyByteArray_Check(buf)) {
        data = (const uint8_t *)PyByteArray_AS_STRING(buf);
        size = PyByteArray_GET_SIZE(buf);
    } else {
        PyErr_SetString(PyExc_TypeError, "frame() takes bytes or a bytearray");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t max_args = PyLong_AsSsize_t(args[2]);
    Py_ssize_t max_bulk = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred())
        return NULL;
    if (pos < 0 || pos >= size || data[pos] != '*')
        Py_RETURN_NONE;
    const uint8_t *end = data + size;
    const uint8_t *p;
    int64_t count = line_number(data + pos + 1, end, &p);
    if (count < 1 || count > max_args || count > FRAME_MAX_ARGS)
        Py_RETURN_NONE;
    /* First the whole request's layout, so that nothing is made for one not all here. */
    const uint8_t *starts[FRAME_MAX_ARGS];
    Py_ssize_t lengths[FRAME_MAX_ARGS];
    for (int64_t i = 0; i < count; i++) {
        if (p >= end || *p != '$')
            Py_RETURN_NONE;
        int64_t len = line_number(p + 1, end, &p);
        if (len < 0 || len > max_bulk || end - p < len + 2)
            Py_RETURN_NONE;
        if (p[len] != '\r' || p[len + 1] != '\n')
            Py_RETURN_NONE;
        starts[i] = p;
        lengths[i] = (Py_ssize_t)len;
        p += len + 2;
    }
    PyObject *argv = PyList_New((Py_ssize_t)count);
    if (argv == NULL)
        return NULL;
    for (int64_t i = 0; i < count; i++) {
        PyObject *arg = PyBytes_FromStringAndSize((const char *)starts[i], lengths[i]);
        if (arg == NULL) {
            Py_DECREF(argv);
            return NULL;
        }
        PyList_SET_ITEM(argv, i, arg);
    }
    PyObject *offset = PyLong_FromSsize_t(p - data);
    if (offset == NULL) {
        Py_DECREF(argv);
        return NULL;
    }
    PyObject *result = PyTuple_New(2);
    if (result == NULL) {
        Py_DECREF(argv);
        Py_DECREF(offset);
        return NULL;
    }
    PyTuple_SET_ITEM(result, 0, argv);
    PyTuple_SET_ITEM(result, 1, offset);
    return result;
}

static PyMethodDef methods[] = {
    {"frame", (PyCFunction)(void (*)(void))frame, METH_FASTCALL,
     "frame(buf, pos, max_args, max_bulk) -> (argv, end) or None: the canonical request "
     "at pos, when it is all in buf and within the limits."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_frame",
    "The request reader's fast path in C (see resplite.protocol.reader).", -1, methods,
};

PyMODINIT_FUNC PyInit__frame(void)
{
    return PyModule_Create(&module);
}
