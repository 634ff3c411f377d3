/*
 * The RDB string, the commonest record of a snapshot, in C: resplite.formats.rdb_format's
 * write_string and the well-formed cases of Reader.string, without the interpreter.
 *
 * write_string(out, s, compress) appends exactly what the Python write_string appends
 * (rdbSaveRawString: the integer form, LZF when it saves 4 bytes or more, else the length
 * and the bytes). read_string(data, pos) returns (value, end) for a well-formed string at
 * pos, or None for anything else (cut short, corrupt, an unknown encoding): the Python
 * reader then reads it again to raise its error with the offset and the reason. Tests hold
 * both equal to the Python code.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../algorithms/canonical_int.h"
#include "../algorithms/lzf_codec.h"

#define ENC_INT8 0
#define ENC_INT16 1
#define ENC_INT32 2
#define ENC_LZF 3

/* Room for compressed output, kept between calls (grown as needed, never shrunk). */
static uint8_t *scratch;
static Py_ssize_t scratch_size;

static int put_len(uint8_t *p, uint64_t n)
{
    if (n < 64) {
        p[0] = (uint8_t)n;
        return 1;
    }
    if (n < 16384) {
        p[0] = (uint8_t)((n >> 8) | 0x40);
        p[1] = (uint8_t)n;
        return 2;
    }
    if (n <= 0xFFFFFFFFu) {
        p[0] = 0x80;
        for (int i = 0; i < 4; i++)
            p[1 + i] = (uint8_t)(n >> (24 - 8 * i));
        return 5;
    }
    p[0] = 0x81;
    for (int i = 0; i < 8; i++)
        p[1 + i] = (uint8_t)(n >> (56 - 8 * i));
    return 9;
}

/* The integer a string of at most 11 bytes is written as (listpack_size.integer_value's
 * rule), when it fits 32 bits. */
static int small_integer(const uint8_t *s, Py_ssize_t n, int32_t *value)
{
    int64_t v;
    if (n > 11 || !canonical_int64(s, n, &v) || v < INT32_MIN || v > INT32_MAX)
        return 0;
    *value = (int32_t)v;
    return 1;
}

static int append(PyObject *out, const uint8_t *head, Py_ssize_t head_len,
                  const uint8_t *body, Py_ssize_t body_len)
{
    Py_ssize_t at = PyByteArray_GET_SIZE(out);
    if (PyByteArray_Resize(out, at + head_len + body_len) < 0)
        return -1;
    char *p = PyByteArray_AS_STRING(out) + at;
    memcpy(p, head, head_len);
    if (body_len)
        memcpy(p + head_len, body, body_len);
    return 0;
}

static PyObject *py_write_string(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"out", "s", "compress", NULL};
    PyObject *out;
    Py_buffer data;
    int compress;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!y*p:write_string", names,
                                     &PyByteArray_Type, &out, &data, &compress))
        return NULL;
    const uint8_t *s = (const uint8_t *)data.buf;
    Py_ssize_t n = data.len;
    uint8_t head[32];
    int rc;
    int32_t value;
    if (n <= 11 && n && ((s[0] >= '0' && s[0] <= '9') || s[0] == '-')
            && small_integer(s, n, &value)) {
        if (value >= -128 && value <= 127) {
            head[0] = 0xC0 | ENC_INT8;
            head[1] = (uint8_t)value;
            rc = append(out, head, 2, NULL, 0);
        } else if (value >= -32768 && value <= 32767) {
            head[0] = 0xC0 | ENC_INT16;
            head[1] = (uint8_t)value;
            head[2] = (uint8_t)((uint32_t)value >> 8);
            rc = append(out, head, 3, NULL, 0);
        } else {
            head[0] = 0xC0 | ENC_INT32;
            for (int i = 0; i < 4; i++)
                head[1 + i] = (uint8_t)((uint32_t)value >> (8 * i));
            rc = append(out, head, 5, NULL, 0);
        }
        PyBuffer_Release(&data);
        if (rc < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    if (compress && n > 20 && n < (Py_ssize_t)UINT32_MAX - 8) {
        Py_ssize_t limit = n - 4;
        Py_ssize_t need = limit + 8;
        if (need > scratch_size) {
            uint8_t *grown = PyMem_Realloc(scratch, need);
            if (grown == NULL) {
                PyBuffer_Release(&data);
                return PyErr_NoMemory();
            }
            scratch = grown;
            scratch_size = need;
        }
        Py_ssize_t packed = lzf_compress(s, n, scratch, limit);
        if (packed > 0) {
            head[0] = 0xC0 | ENC_LZF;
            int h = 1 + put_len(head + 1, (uint64_t)packed);
            h += put_len(head + h, (uint64_t)n);
            rc = append(out, head, h, scratch, packed);
            PyBuffer_Release(&data);
            if (rc < 0)
                return NULL;
            Py_RETURN_NONE;
        }
    }
    rc = append(out, head, put_len(head, (uint64_t)n), s, n);
    PyBuffer_Release(&data);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* An RDB length at p (not an encoding); -1 when there is none to read. */
static int get_len(const uint8_t *d, Py_ssize_t size, Py_ssize_t *pos, uint64_t *n)
{
    Py_ssize_t p = *pos;
    if (p >= size)
        return -1;
    uint8_t first = d[p];
    switch (first >> 6) {
    case 0:
        *n = first & 0x3F;
        *pos = p + 1;
        return 0;
    case 1:
        if (p + 2 > size)
            return -1;
        *n = ((uint64_t)(first & 0x3F) << 8) | d[p + 1];
        *pos = p + 2;
        return 0;
    case 2: {
        int width = first == 0x80 ? 4 : first == 0x81 ? 8 : 0;
        if (!width || p + 1 + width > size)
            return -1;
        uint64_t v = 0;
        for (int i = 0; i < width; i++)
            v = (v << 8) | d[p + 1 + i];
        *n = v;
        *pos = p + 1 + width;
        return 0;
    }
    default:
        return -1;
    }
}

static PyObject *int_text(int64_t v, Py_ssize_t end)
{
    char text[24];
    int len = snprintf(text, sizeof text, "%lld", (long long)v);
    PyObject *value = PyBytes_FromStringAndSize(text, len);
    if (value == NULL)
        return NULL;
    PyObject *result = Py_BuildValue("(Nn)", value, end);
    return result;
}

static PyObject *read_at(const uint8_t *d, Py_ssize_t size, Py_ssize_t pos)
{
    if (pos < 0 || pos >= size)
        Py_RETURN_NONE;
    uint8_t first = d[pos];
    if ((first >> 6) != 3) {
        uint64_t n;
        Py_ssize_t p = pos;
        if (get_len(d, size, &p, &n) < 0 || n > (uint64_t)(size - p))
            Py_RETURN_NONE;
        PyObject *value = PyBytes_FromStringAndSize((const char *)d + p, (Py_ssize_t)n);
        if (value == NULL)
            return NULL;
        return Py_BuildValue("(Nn)", value, p + (Py_ssize_t)n);
    }
    Py_ssize_t p = pos + 1;
    switch (first & 0x3F) {
    case ENC_INT8:
        if (p + 1 > size)
            Py_RETURN_NONE;
        return int_text((int8_t)d[p], p + 1);
    case ENC_INT16:
        if (p + 2 > size)
            Py_RETURN_NONE;
        return int_text((int16_t)(d[p] | (d[p + 1] << 8)), p + 2);
    case ENC_INT32:
        if (p + 4 > size)
            Py_RETURN_NONE;
        return int_text((int32_t)((uint32_t)d[p] | ((uint32_t)d[p + 1] << 8)
                                  | ((uint32_t)d[p + 2] << 16) | ((uint32_t)d[p + 3] << 24)),
                        p + 4);
    case ENC_LZF: {
        uint64_t clen, ulen;
        if (get_len(d, size, &p, &clen) < 0 || get_len(d, size, &p, &ulen) < 0
                || clen > (uint64_t)(size - p))
            Py_RETURN_NONE;
        /* A 3-byte back reference gives at most 264 bytes: a longer claim is corrupt. */
        if (ulen == 0 || ulen > clen * 264)
            Py_RETURN_NONE;
        PyObject *value = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)ulen);
        if (value == NULL)
            return NULL;
        if (lzf_decompress(d + p, (Py_ssize_t)clen, (uint8_t *)PyBytes_AS_STRING(value),
                           (Py_ssize_t)ulen) < 0) {
            Py_DECREF(value);
            Py_RETURN_NONE;
        }
        return Py_BuildValue("(Nn)", value, p + (Py_ssize_t)clen);
    }
    default:
        Py_RETURN_NONE;
    }
}

static PyObject *py_read_string(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "y*n:read_string", &data, &pos))
        return NULL;
    PyObject *result = read_at((const uint8_t *)data.buf, data.len, pos);
    PyBuffer_Release(&data);
    return result;
}

/* scan_strings(data, pos, limit, count) -> (keys, values, expiries, offsets, end): the run
 * of string keys at pos, as parallel lists (the expiry of each key, or None for the whole
 * list when no key of the run has one; the offset of each record's type byte), and the
 * offset where it stopped. A run is string keys all with, or all without, an EXPIRETIME_MS
 * before them; it ends before anything else (another opcode or type, a string that does
 * not read, a key with the other expiry state), once pos passes limit, or after count
 * keys. The Python reader reads what it stopped before. */
static PyObject *py_scan_strings(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t pos, limit, count;
    if (!PyArg_ParseTuple(args, "y*nnn:scan_strings", &data, &pos, &limit, &count))
        return NULL;
    const uint8_t *d = (const uint8_t *)data.buf;
    Py_ssize_t size = data.len;
    PyObject *keys = PyList_New(0), *values = PyList_New(0), *expires = NULL;
    PyObject *offsets = PyList_New(0);
    int timed = -1;  /* whether the run's keys have an expiry; -1 before the first */
    if (keys == NULL || values == NULL || offsets == NULL)
        goto fail;
    while (pos >= 0 && pos < size && pos < limit && PyList_GET_SIZE(keys) < count) {
        Py_ssize_t p = pos;
        int64_t when = 0;
        int has = d[p] == 252;
        if (has) {  /* EXPIRETIME_MS, then the key it belongs to */
            if (p + 10 > size || d[p + 9] != 0)
                break;
            uint64_t ms = 0;
            for (int i = 7; i >= 0; i--)
                ms = (ms << 8) | d[p + 1 + i];
            when = (int64_t)ms;
            p += 9;
        } else if (d[p] != 0) {
            break;
        }
        if (timed >= 0 && has != timed)
            break;
        Py_ssize_t at = p;  /* the type byte: where a duplicated key is reported */
        PyObject *key = read_at(d, size, p + 1);
        if (key == NULL)
            goto fail;
        if (key == Py_None) {
            Py_DECREF(key);
            break;
        }
        PyObject *value = read_at(d, size, PyLong_AsSsize_t(PyTuple_GET_ITEM(key, 1)));
        if (value == NULL || value == Py_None) {
            Py_DECREF(key);
            if (value == NULL)
                goto fail;
            Py_DECREF(value);
            break;
        }
        if (timed < 0) {
            timed = has;
            if (timed && (expires = PyList_New(0)) == NULL) {
                Py_DECREF(key);
                Py_DECREF(value);
                goto fail;
            }
        }
        pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(value, 1));
        int rc = PyList_Append(keys, PyTuple_GET_ITEM(key, 0));
        if (rc == 0)
            rc = PyList_Append(values, PyTuple_GET_ITEM(value, 0));
        Py_DECREF(key);
        Py_DECREF(value);
        if (rc == 0 && timed) {
            PyObject *w = PyLong_FromLongLong(when);
            rc = w == NULL ? -1 : PyList_Append(expires, w);
            Py_XDECREF(w);
        }
        if (rc == 0) {
            PyObject *o = PyLong_FromSsize_t(at);
            rc = o == NULL ? -1 : PyList_Append(offsets, o);
            Py_XDECREF(o);
        }
        if (rc < 0)
            goto fail;
    }
    PyBuffer_Release(&data);
    if (expires == NULL)
        expires = Py_NewRef(Py_None);
    return Py_BuildValue("(NNNNn)", keys, values, expires, offsets, pos);
fail:
    Py_XDECREF(keys);
    Py_XDECREF(values);
    Py_XDECREF(expires);
    Py_XDECREF(offsets);
    PyBuffer_Release(&data);
    return NULL;
}

/* read_strings(data, pos, n) -> (list, end) | None: the n strings at pos and the offset
 * past them; None where one of them does not read (the Python reader then reads them one
 * by one, to say where and why). */
static PyObject *py_read_strings(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t pos, n;
    if (!PyArg_ParseTuple(args, "y*nn:read_strings", &data, &pos, &n))
        return NULL;
    const uint8_t *d = (const uint8_t *)data.buf;
    PyObject *out = NULL;
    /* Every string takes a byte at least: more than the bytes left cannot read. */
    if (n < 0 || pos < 0 || n > data.len - pos) {
        PyBuffer_Release(&data);
        Py_RETURN_NONE;
    }
    out = PyList_New(n);
    if (out == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *got = read_at(d, data.len, pos);
        if (got == NULL)
            goto fail;
        if (got == Py_None) {
            Py_DECREF(got);
            Py_DECREF(out);
            PyBuffer_Release(&data);
            Py_RETURN_NONE;
        }
        PyObject *value = PyTuple_GET_ITEM(got, 0);
        pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(got, 1));
        PyList_SET_ITEM(out, i, Py_NewRef(value));
        Py_DECREF(got);
    }
    PyBuffer_Release(&data);
    return Py_BuildValue("(Nn)", out, pos);
fail:
    Py_XDECREF(out);
    PyBuffer_Release(&data);
    return NULL;
}

/* read_scored(data, pos, n) -> (members, scores, end) | None: n sorted set members, each
 * a string then a binary double (RDB_TYPE_ZSET_2), and the offset past them; None where
 * one does not read or a score is NaN (the Python reader then says where and why). */
static PyObject *py_read_scored(PyObject *self, PyObject *args)
{
    Py_buffer data;
    Py_ssize_t pos, n;
    if (!PyArg_ParseTuple(args, "y*nn:read_scored", &data, &pos, &n))
        return NULL;
    const uint8_t *d = (const uint8_t *)data.buf;
    PyObject *members = NULL, *scores = NULL;
    if (n < 0 || pos < 0 || n > (data.len - pos) / 9)
        goto none;
    members = PyList_New(n);
    scores = PyList_New(n);
    if (members == NULL || scores == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *got = read_at(d, data.len, pos);
        if (got == NULL)
            goto fail;
        if (got == Py_None) {
            Py_DECREF(got);
            goto none;
        }
        PyList_SET_ITEM(members, i, Py_NewRef(PyTuple_GET_ITEM(got, 0)));
        pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(got, 1));
        Py_DECREF(got);
        if (pos + 8 > data.len)
            goto none;
        double score = PyFloat_Unpack8((const char *)d + pos, 1);
        if (score == -1.0 && PyErr_Occurred())
            goto fail;
        if (score != score)
            goto none;
        PyObject *f = PyFloat_FromDouble(score);
        if (f == NULL)
            goto fail;
        PyList_SET_ITEM(scores, i, f);
        pos += 8;
    }
    PyBuffer_Release(&data);
    return Py_BuildValue("(NNn)", members, scores, pos);
none:
    Py_XDECREF(members);
    Py_XDECREF(scores);
    PyBuffer_Release(&data);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(members);
    Py_XDECREF(scores);
    PyBuffer_Release(&data);
    return NULL;
}

static PyMethodDef methods[] = {
    {"write_string", (PyCFunction)(void (*)(void))py_write_string,
     METH_VARARGS | METH_KEYWORDS,
     "write_string(out, s, compress) -> None\n\n"
     "Append s to the bytearray out as rdbSaveRawString writes it."},
    {"read_string", py_read_string, METH_VARARGS,
     "read_string(data, pos) -> (bytes, int) | None\n\n"
     "The RDB string at pos and the offset past it; None where it is not well formed."},
    {"read_strings", py_read_strings, METH_VARARGS,
     "read_strings(data, pos, n) -> (list, int) | None\n\n"
     "The n strings at pos and the offset past them; None where one does not read."},
    {"read_scored", py_read_scored, METH_VARARGS,
     "read_scored(data, pos, n) -> (members, scores, int) | None\n\n"
     "n sorted set members with binary double scores; None where one does not read."},
    {"scan_strings", py_scan_strings, METH_VARARGS,
     "scan_strings(data, pos, limit, count) -> (keys, values, expiries, offsets, end)\n\n"
     "The run of string keys from pos on, and where it stopped."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rdb", "RDB strings in C (see resplite.formats.rdb_format).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__rdb(void) { return PyModule_Create(&module); }
