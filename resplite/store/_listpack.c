/*
 * Listpacks in C, for snapshots: resplite.store.listpack.decode_py and
 * resplite.store.stream_node.StreamNode.listpack_py without the interpreter.
 *
 * decode(buf, as_bytes=False) returns the elements of a well-formed listpack, or None for
 * any other (the Python decoder then reads it again to raise its error with the offset).
 * stream_node(...) returns the listpack Redis holds for a stream node from the node's
 * arrays (see stream_node.py's layout). Tests hold both equal to the Python code.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../algorithms/canonical_int.h"

#define NUMELE_UNKNOWN 65535
#define SAME_FIELDS 2

/* -- decoding ------------------------------------------------------------------------- */

static int backlen_size(uint64_t size)
{
    if (size <= 127)
        return 1;
    if (size < 16383)
        return 2;
    if (size < 2097151)
        return 3;
    if (size < 268435455)
        return 4;
    return 5;
}

/* The back-length of an element of `size` bytes, written at p; its length. */
static int put_backlen(uint8_t *p, uint64_t size)
{
    int n = backlen_size(size);
    /* Most significant group first; every byte but the first carries the 0x80 mark. */
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (uint8_t)(size & 127) | (i ? 128 : 0);
        size >>= 7;
    }
    return n;
}

static PyObject *int_element(int64_t v, int as_bytes)
{
    if (as_bytes) {
        char text[24];
        int len = snprintf(text, sizeof text, "%lld", (long long)v);
        return PyBytes_FromStringAndSize(text, len);
    }
    return PyLong_FromLongLong(v);
}

/* One element of a listpack. */
typedef struct {
    int is_int;
    int64_t value;      /* is_int */
    const uint8_t *s;   /* else: the string */
    Py_ssize_t n;
} Element;

/* The element at *pp (before end, the terminator's offset), checked as decode_py checks it,
 * back-length included; *pp moves past it. -1 for anything else. */
static int lp_next(const uint8_t *d, Py_ssize_t size, Py_ssize_t end, Py_ssize_t *pp,
                   Element *e)
{
    Py_ssize_t p = *pp, start = p;
    uint8_t b = d[p];
    e->is_int = 1;
    if (b < 0x80) {
        e->value = b;
        p += 1;
    } else if (b < 0xC0) {
        Py_ssize_t n = b & 0x3F;
        p += 1;
        if (n > end - p)
            return -1;
        e->is_int = 0;
        e->s = d + p;
        e->n = n;
        p += n;
    } else if (b < 0xE0) {
        if (p + 2 > end)
            return -1;
        int u = ((b & 0x1F) << 8) | d[p + 1];
        e->value = u >= 0x1000 ? u - 0x2000 : u;
        p += 2;
    } else if (b < 0xF0) {
        if (p + 2 > end)
            return -1;
        Py_ssize_t n = ((b & 0x0F) << 8) | d[p + 1];
        p += 2;
        if (n > end - p)
            return -1;
        e->is_int = 0;
        e->s = d + p;
        e->n = n;
        p += n;
    } else if (b == 0xF0) {
        if (p + 5 > end)
            return -1;
        uint64_t n = (uint64_t)d[p + 1] | ((uint64_t)d[p + 2] << 8)
                     | ((uint64_t)d[p + 3] << 16) | ((uint64_t)d[p + 4] << 24);
        p += 5;
        if (n > (uint64_t)(end - p))
            return -1;
        e->is_int = 0;
        e->s = d + p;
        e->n = (Py_ssize_t)n;
        p += (Py_ssize_t)n;
    } else if (b >= 0xF1 && b <= 0xF4) {
        int width = b == 0xF4 ? 8 : b - 0xEF;
        if (p + 1 + width > end)
            return -1;
        uint64_t u = 0;
        for (int i = width - 1; i >= 0; i--)
            u = (u << 8) | d[p + 1 + i];
        if (width < 8 && (u >> (8 * width - 1)) & 1)
            u |= ~(uint64_t)0 << (8 * width);  /* sign-extend */
        e->value = (int64_t)u;
        p += 1 + width;
    } else {
        return -1;  /* the terminator too early, or an unknown encoding */
    }
    uint8_t back[5];
    int blen = put_backlen(back, (uint64_t)(p - start));
    if (p + blen > size || memcmp(d + p, back, blen) != 0)
        return -1;
    *pp = p + blen;
    return 0;
}

/* The header of a listpack: 0 and its declared count when its size is right, else -1. */
static int lp_header(const uint8_t *d, Py_ssize_t size, unsigned *declared)
{
    if (size < 7)
        return -1;
    uint32_t total = (uint32_t)d[0] | ((uint32_t)d[1] << 8) | ((uint32_t)d[2] << 16)
                     | ((uint32_t)d[3] << 24);
    if ((Py_ssize_t)total != size)
        return -1;
    *declared = d[4] | (d[5] << 8);
    return 0;
}

static PyObject *py_decode(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"buf", "as_bytes", NULL};
    Py_buffer view;
    int as_bytes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|p:decode", names, &view, &as_bytes))
        return NULL;
    const uint8_t *d = (const uint8_t *)view.buf;
    Py_ssize_t size = view.len;
    PyObject *out = NULL;
    unsigned declared;
    if (lp_header(d, size, &declared) < 0)
        goto bad;
    out = PyList_New(0);
    if (out == NULL)
        goto fail;
    Py_ssize_t p = 6, end = size - 1;
    while (p < end) {
        Element e;
        if (lp_next(d, size, end, &p, &e) < 0)
            goto bad;
        PyObject *value = e.is_int ? int_element(e.value, as_bytes)
                                   : PyBytes_FromStringAndSize((const char *)e.s, e.n);
        if (value == NULL)
            goto fail;
        int rc = PyList_Append(out, value);
        Py_DECREF(value);
        if (rc < 0)
            goto fail;
    }
    if (p != end || d[end] != 0xFF)
        goto bad;
    if (declared != NUMELE_UNKNOWN && (Py_ssize_t)declared != PyList_GET_SIZE(out))
        goto bad;
    PyBuffer_Release(&view);
    return out;
bad:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}

/* -- encoding ------------------------------------------------------------------------- */

typedef struct {
    uint8_t *buf;
    Py_ssize_t len, cap;
} Out;

static int reserve(Out *o, Py_ssize_t more)
{
    if (o->len + more <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + more)
        cap *= 2;
    uint8_t *grown = PyMem_Realloc(o->buf, cap);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = grown;
    o->cap = cap;
    return 0;
}

/* listpack.encode_int */
static int put_int(Out *o, int64_t v)
{
    if (reserve(o, 10) < 0)
        return -1;
    uint8_t *p = o->buf + o->len;
    int width;
    if (v >= 0 && v <= 127) {
        p[0] = (uint8_t)v;
        p[1] = 1;
        o->len += 2;
        return 0;
    }
    if (v >= -4096 && v <= 4095) {
        uint32_t u = (uint32_t)v & 0x1FFF;
        p[0] = (uint8_t)((u >> 8) | 0xC0);
        p[1] = (uint8_t)u;
        p[2] = 2;
        o->len += 3;
        return 0;
    }
    if (v >= -32768 && v <= 32767)
        width = 2;
    else if (v >= -8388608 && v <= 8388607)
        width = 3;
    else if (v >= INT32_MIN && v <= INT32_MAX)
        width = 4;
    else
        width = 8;
    p[0] = width == 8 ? 0xF4 : (uint8_t)(0xEF + width);
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < width; i++)
        p[1 + i] = (uint8_t)(u >> (8 * i));
    p[1 + width] = (uint8_t)(width + 1);
    o->len += width + 2;
    return 0;
}

/* A listpack of the encoded elements in ``o``: the 6-byte header (total size, element
 * count or NUMELE_UNKNOWN past 65534), the elements, the end byte. NULL on failure. */
static PyObject *framed(const Out *o, uint64_t elements)
{
    PyObject *result = PyBytes_FromStringAndSize(NULL, 6 + o->len + 1);
    if (result == NULL)
        return NULL;
    uint8_t *r = (uint8_t *)PyBytes_AS_STRING(result);
    uint64_t total = 6 + (uint64_t)o->len + 1;
    for (int i = 0; i < 4; i++)
        r[i] = (uint8_t)(total >> (8 * i));
    unsigned shown = elements < NUMELE_UNKNOWN ? (unsigned)elements : NUMELE_UNKNOWN;
    r[4] = (uint8_t)shown;
    r[5] = (uint8_t)(shown >> 8);
    if (o->len)
        memcpy(r + 6, o->buf, o->len);
    r[6 + o->len] = 0xFF;
    return result;
}

/* listpack.encode_str */
static int put_str(Out *o, const uint8_t *s, Py_ssize_t n)
{
    int64_t v;
    if (n <= 20 && n && ((s[0] >= '0' && s[0] <= '9') || s[0] == '-') && canonical_int64(s, n, &v))
        return put_int(o, v);
    if (reserve(o, n + 10) < 0)
        return -1;
    uint8_t *p = o->buf + o->len;
    int head;
    if (n < 64) {
        p[0] = (uint8_t)(0x80 | n);
        head = 1;
    } else if (n < 4096) {
        p[0] = (uint8_t)((n >> 8) | 0xE0);
        p[1] = (uint8_t)n;
        head = 2;
    } else {
        p[0] = 0xF0;
        for (int i = 0; i < 4; i++)
            p[1 + i] = (uint8_t)((uint64_t)n >> (8 * i));
        head = 5;
    }
    memcpy(p + head, s, n);
    int back = put_backlen(p + head + n, (uint64_t)(head + n));
    o->len += head + n + back;
    return 0;
}

static int read_varint(const uint8_t *d, Py_ssize_t size, Py_ssize_t *pos, uint64_t *n)
{
    uint64_t value = 0;
    int shift = 0;
    Py_ssize_t p = *pos;
    for (;;) {
        if (p >= size || shift > 63)
            return -1;
        uint8_t b = d[p++];
        value |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80)
            break;
        shift += 7;
    }
    *n = value;
    *pos = p;
    return 0;
}

static int item_at(const Py_buffer *a, Py_ssize_t i, uint64_t *v)
{
    if (a->itemsize == 4)
        *v = ((const uint32_t *)a->buf)[i];
    else if (a->itemsize == 8)
        *v = ((const uint64_t *)a->buf)[i];
    else
        return -1;
    return 0;
}

static PyObject *py_stream_node(PyObject *self, PyObject *args)
{
    unsigned long long count, deleted, master_seq;
    PyObject *fields;
    Py_buffer flags = {0}, ms = {0}, seq = {0}, data = {0};
    if (!PyArg_ParseTuple(args, "KKO!y*y*y*Ky*:stream_node", &count, &deleted,
                          &PyTuple_Type, &fields, &flags, &ms, &seq, &master_seq, &data))
        return NULL;
    Out o = {NULL, 0, 0};
    PyObject *result = NULL;
    Py_ssize_t entries = flags.len;
    Py_ssize_t nfields = PyTuple_GET_SIZE(fields);
    const uint8_t *d = (const uint8_t *)data.buf;
    Py_ssize_t p = 0;
    uint64_t elements = 4 + (uint64_t)nfields;
    if (ms.len / ms.itemsize < entries || seq.len / seq.itemsize < entries) {
        PyErr_SetString(PyExc_ValueError, "stream node arrays shorter than its flags");
        goto done;
    }
    if (put_int(&o, (int64_t)count) < 0 || put_int(&o, (int64_t)deleted) < 0
            || put_int(&o, nfields) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < nfields; i++) {
        PyObject *name = PyTuple_GET_ITEM(fields, i);
        if (!PyBytes_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "stream node field names must be bytes");
            goto done;
        }
        if (put_str(&o, (const uint8_t *)PyBytes_AS_STRING(name), PyBytes_GET_SIZE(name)) < 0)
            goto done;
    }
    if (put_int(&o, 0) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < entries; i++) {
        uint8_t flag = ((const uint8_t *)flags.buf)[i];
        uint64_t dms, s;
        if (item_at(&ms, i, &dms) < 0 || item_at(&seq, i, &s) < 0) {
            PyErr_SetString(PyExc_ValueError, "stream node arrays of an unknown width");
            goto done;
        }
        if (put_int(&o, flag) < 0 || put_int(&o, (int64_t)dms) < 0
                || put_int(&o, (int64_t)(s - master_seq)) < 0)
            goto done;
        uint64_t k;
        if (flag & SAME_FIELDS) {
            k = (uint64_t)nfields;
            elements += (uint64_t)nfields + 4;
        } else {
            if (read_varint(d, data.len, &p, &k) < 0 || k > (uint64_t)data.len)
                goto corrupt;
            if (put_int(&o, (int64_t)k) < 0)
                goto done;
            elements += 2 * k + 5;
            k *= 2;
        }
        for (uint64_t j = 0; j < k; j++) {
            uint64_t n;
            if (read_varint(d, data.len, &p, &n) < 0 || n > (uint64_t)(data.len - p))
                goto corrupt;
            if (put_str(&o, d + p, (Py_ssize_t)n) < 0)
                goto done;
            p += (Py_ssize_t)n;
        }
        if (put_int(&o, (int64_t)((flag & SAME_FIELDS) ? (uint64_t)nfields + 3 : k + 4)) < 0)
            goto done;
    }
    result = framed(&o, elements);
    goto done;
corrupt:
    PyErr_SetString(PyExc_ValueError, "stream node data does not match its entries");
done:
    PyMem_Free(o.buf);
    PyBuffer_Release(&flags);
    PyBuffer_Release(&ms);
    PyBuffer_Release(&seq);
    PyBuffer_Release(&data);
    return result;
}

/* encode(items): listpack.encode_py's listpack of items (int as integers, bytes-like as
 * strings, stored as integers when they read as one); None for an item it does not take
 * (an integer past 64 bits, another type), which the Python encoder then handles. */
static PyObject *py_encode(PyObject *self, PyObject *items)
{
    PyObject *it = PyObject_GetIter(items);
    if (it == NULL)
        return NULL;
    Out o = {NULL, 0, 0};
    PyObject *item, *result = NULL;
    Py_ssize_t count = 0;
    while ((item = PyIter_Next(it)) != NULL) {
        int rc;
        if (PyLong_CheckExact(item)) {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
            if (overflow || (v == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                Py_DECREF(item);
                goto none;
            }
            rc = put_int(&o, v);
        } else if (PyBytes_Check(item)) {
            rc = put_str(&o, (const uint8_t *)PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item));
        } else if (PyByteArray_Check(item)) {
            rc = put_str(&o, (const uint8_t *)PyByteArray_AS_STRING(item),
                         PyByteArray_GET_SIZE(item));
        } else {
            Py_DECREF(item);
            goto none;
        }
        Py_DECREF(item);
        if (rc < 0)
            goto done;
        count++;
    }
    if (PyErr_Occurred())
        goto done;
    result = framed(&o, (uint64_t)count);
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    Py_DECREF(it);
    PyMem_Free(o.buf);
    return result;
}

/* -- a stream node from its listpack ------------------------------------------------ */

static int put_bytes(Out *o, const void *src, Py_ssize_t n)
{
    if (reserve(o, n) < 0)
        return -1;
    memcpy(o->buf + o->len, src, n);
    o->len += n;
    return 0;
}

/* The text of an element: its string, or its integer in decimal (into text[24]). */
static void element_text(const Element *e, char *text, const uint8_t **s, Py_ssize_t *n)
{
    if (e->is_int) {
        *n = snprintf(text, 24, "%lld", (long long)e->value);
        *s = (const uint8_t *)text;
    } else {
        *s = e->s;
        *n = e->n;
    }
}

/* An array of uint64 values as array('I') or array('Q') bytes (narrow when all fit). */
static PyObject *array_bytes(const Out *o, int wide)
{
    Py_ssize_t items = o->len / 8;
    if (wide)
        return PyBytes_FromStringAndSize((const char *)o->buf, o->len);
    PyObject *out = PyBytes_FromStringAndSize(NULL, items * 4);
    if (out == NULL)
        return NULL;
    uint32_t *to = (uint32_t *)PyBytes_AS_STRING(out);
    const uint64_t *from = (const uint64_t *)o->buf;
    for (Py_ssize_t i = 0; i < items; i++)
        to[i] = (uint32_t)from[i];
    return out;
}

/* same_fields_node(blob, master_seq): StreamNode.from_same_fields's node, in pieces, read
 * straight from the listpack: (fields, ms, ms_wide, seq, seq_wide, offs, flags, data,
 * count, deleted), the arrays as the bytes of array('I') (or 'Q' where wide); None where
 * from_same_fields would answer None or the listpack does not decode. */
static PyObject *py_same_fields_node(PyObject *self, PyObject *args)
{
    Py_buffer view;
    unsigned long long master_seq;
    if (!PyArg_ParseTuple(args, "y*K:same_fields_node", &view, &master_seq))
        return NULL;
    const uint8_t *d = (const uint8_t *)view.buf;
    Py_ssize_t size = view.len, p = 6, end = size - 1;
    Out ms = {NULL, 0, 0}, seq = {NULL, 0, 0}, offs = {NULL, 0, 0}, flags = {NULL, 0, 0};
    Out data = {NULL, 0, 0};
    PyObject *fields = NULL, *result = NULL;
    unsigned declared;
    Element e;
    char text[24];
    const uint8_t *ts;
    Py_ssize_t tn;
    int64_t count, deleted, nfields;
    if (lp_header(d, size, &declared) < 0 || d[end] != 0xFF)
        goto none;
#define NEXT() do { if (p >= end || lp_next(d, size, end, &p, &e) < 0) goto none; } while (0)
    NEXT();
    if (!e.is_int) goto none;
    count = e.value;
    NEXT();
    if (!e.is_int) goto none;
    deleted = e.value;
    NEXT();
    if (!e.is_int || e.value < 1 || e.value > 65535) goto none;
    nfields = e.value;
    fields = PyTuple_New(nfields);
    if (fields == NULL)
        goto fail;
    for (int64_t k = 0; k < nfields; k++) {
        NEXT();
        element_text(&e, text, &ts, &tn);
        PyObject *name = PyBytes_FromStringAndSize((const char *)ts, tn);
        if (name == NULL)
            goto fail;
        PyTuple_SET_ITEM(fields, k, name);
    }
    NEXT();
    if (!e.is_int || e.value != 0) goto none;
    uint64_t elements = 4 + (uint64_t)nfields, entries = 0, dead = 0;
    int64_t last_ms = -1;
    uint64_t last_seq = 0, max_seq = 0;
    uint32_t at = 0;
    while (p < end) {
        NEXT();
        if (!e.is_int || (e.value != SAME_FIELDS && e.value != (SAME_FIELDS | 1))) goto none;
        uint8_t flag = (uint8_t)e.value;
        NEXT();
        if (!e.is_int) goto none;
        int64_t dms = e.value;
        NEXT();
        if (!e.is_int) goto none;
        uint64_t sq = (uint64_t)master_seq + (uint64_t)e.value;
        if (entries == 0 ? dms < 0 : (dms < last_ms || (dms == last_ms && sq <= last_seq)))
            goto none;
        last_ms = dms;
        last_seq = sq;
        if (sq > max_seq)
            max_seq = sq;
        uint64_t ums = (uint64_t)dms;
        if (put_bytes(&ms, &ums, 8) < 0 || put_bytes(&seq, &sq, 8) < 0
                || put_bytes(&offs, &at, 4) < 0 || put_bytes(&flags, &flag, 1) < 0)
            goto fail;
        for (int64_t k = 0; k < nfields; k++) {
            NEXT();
            element_text(&e, text, &ts, &tn);
            if (tn >= 0x80) goto none;
            uint8_t len = (uint8_t)tn;
            if (put_bytes(&data, &len, 1) < 0 || put_bytes(&data, ts, tn) < 0)
                goto fail;
            at += 1 + (uint32_t)tn;
        }
        NEXT();
        if (!e.is_int || e.value != nfields + 3) goto none;
        entries++;
        dead += flag & 1;
        elements += (uint64_t)nfields + 4;
    }
#undef NEXT
    if (p != end || entries == 0)
        goto none;
    if (declared != NUMELE_UNKNOWN && declared != elements)
        goto none;
    if ((int64_t)dead != deleted || (int64_t)(entries - dead) != count)
        goto none;
    result = Py_BuildValue("(ONiNiNNNLL)", fields, array_bytes(&ms, last_ms > 0xFFFFFFFFLL),
                           last_ms > 0xFFFFFFFFLL, array_bytes(&seq, max_seq > 0xFFFFFFFFULL),
                           max_seq > 0xFFFFFFFFULL,
                           PyBytes_FromStringAndSize((const char *)offs.buf, offs.len),
                           PyBytes_FromStringAndSize((const char *)flags.buf, flags.len),
                           PyBytes_FromStringAndSize((const char *)data.buf, data.len),
                           (long long)count, (long long)dead);
    goto done;
none:
    result = Py_NewRef(Py_None);
    goto done;
fail:
    result = NULL;
done:
    Py_XDECREF(fields);
    PyMem_Free(ms.buf);
    PyMem_Free(seq.buf);
    PyMem_Free(offs.buf);
    PyMem_Free(flags.buf);
    PyMem_Free(data.buf);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"decode", (PyCFunction)(void (*)(void))py_decode, METH_VARARGS | METH_KEYWORDS,
     "decode(buf, as_bytes=False) -> list | None\n\n"
     "The elements of a well-formed listpack; None for any other."},
    {"encode", py_encode, METH_O,
     "encode(items) -> bytes | None\n\n"
     "The listpack of items; None for an item only the Python encoder takes."},
    {"same_fields_node", py_same_fields_node, METH_VARARGS,
     "same_fields_node(blob, master_seq) -> tuple | None\n\n"
     "StreamNode.from_same_fields's node in pieces, read from the listpack."},
    {"stream_node", py_stream_node, METH_VARARGS,
     "stream_node(count, deleted, fields, flags, ms, seq, master_seq, data) -> bytes\n\n"
     "The listpack Redis holds for a stream node with these arrays."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_listpack", "Listpacks in C (see resplite.store.listpack).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__listpack(void) { return PyModule_Create(&module); }
