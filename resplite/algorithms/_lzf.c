/*
 * LZF compression as Redis writes it, in C: resplite.algorithms.lzf.compress without the
 * interpreter. The algorithm and every bound below follow that module's pure-Python
 * compress(), which is the reference (a test holds the two equal on random input).
 *
 * Redis's compressor keeps its hash table of earlier positions on the stack without
 * clearing it; the output it gives from a fresh table is what resplite reproduces, so the
 * table here must read as empty at the start of every call. Clearing 64K slots per call
 * would cost more than compressing a short string, so each slot carries the number of the
 * call that wrote it and a slot from an earlier call reads as empty. The table is shared
 * by all calls: the interpreter lock is held throughout (no call runs concurrently).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define HASH_BITS 16
#define HASH_MASK ((1u << HASH_BITS) - 1)
#define MAX_LIT (1 << 5)
#define MAX_OFF (1 << 13)
#define MAX_REF ((1 << 8) + (1 << 3))

/* Slot: the call number in the high 32 bits, the input position in the low 32. */
static uint64_t table[1u << HASH_BITS];
static uint32_t generation;

static inline uint32_t slot_of(uint32_t h) { return ((h >> 8) - h * 5) & HASH_MASK; }

static inline uint32_t lookup_and_set(uint32_t slot, uint32_t pos)
{
    uint64_t old = table[slot];
    table[slot] = ((uint64_t)generation << 32) | pos;
    return (uint32_t)(old >> 32) == generation ? (uint32_t)old : 0;
}

static inline void set(uint32_t slot, uint32_t pos)
{
    table[slot] = ((uint64_t)generation << 32) | pos;
}

/* Compress in[0..n) into out (room for out_len + 8 bytes); the compressed length, or 0
 * when it does not fit in out_len bytes. */
static Py_ssize_t compress(const uint8_t *in, Py_ssize_t n, uint8_t *out, Py_ssize_t out_len)
{
    if (++generation == 0) {  /* every 2^32 calls: start the numbering again */
        memset(table, 0, sizeof table);
        generation = 1;
    }
    Py_ssize_t op = 1;  /* out[0] will hold the first literal run's length */
    Py_ssize_t lit = 0;
    Py_ssize_t ip = 0;
    Py_ssize_t end2 = n - 2;
    uint32_t h = n > 1 ? ((uint32_t)in[0] << 8) | in[1] : 0;
    while (ip < end2) {
        h = (h << 8) | in[ip + 2];
        Py_ssize_t ref = lookup_and_set(slot_of(h), (uint32_t)ip);
        Py_ssize_t off = ip - ref - 1;
        if (ref > 0 && off >= 0 && off < MAX_OFF && in[ref + 2] == in[ip + 2]
                && in[ref] == in[ip] && in[ref + 1] == in[ip + 1]) {
            Py_ssize_t maxlen = n - ip - 2;
            if (maxlen > MAX_REF)
                maxlen = MAX_REF;
            if (op + 4 >= out_len && op - (lit == 0) + 4 >= out_len)
                return 0;
            out[op - lit - 1] = (uint8_t)(lit - 1);  /* close the literal run */
            if (!lit)
                op--;  /* undo an empty run */
            /* The match length as Redis's unrolled loop finds it: 16 unchecked steps
             * when at least 17 bytes may match, then bounded ones. */
            Py_ssize_t len = 3;
            if (maxlen > 16) {
                while (len <= 18 && in[ref + len] == in[ip + len])
                    len++;
                if (len == 19)
                    while (len < maxlen && in[ref + len] == in[ip + len])
                        len++;
            } else {
                while (len < maxlen && in[ref + len] == in[ip + len])
                    len++;
            }
            len -= 2;
            ip++;
            if (len < 7) {
                out[op++] = (uint8_t)((off >> 8) + (len << 5));
            } else {
                out[op] = (uint8_t)((off >> 8) + (7 << 5));
                out[op + 1] = (uint8_t)(len - 7);
                op += 2;
            }
            out[op] = (uint8_t)off;
            op += 2;  /* the offset byte, then room for the next run's length */
            lit = 0;
            ip += len + 1;
            if (ip >= end2)
                break;
            ip -= 2;
            h = ((uint32_t)in[ip] << 8) | in[ip + 1];
            h = (h << 8) | in[ip + 2];
            set(slot_of(h), (uint32_t)ip);
            ip++;
            h = (h << 8) | in[ip + 2];
            set(slot_of(h), (uint32_t)ip);
            ip++;
        } else {
            if (op >= out_len)
                return 0;
            lit++;
            out[op++] = in[ip++];
            if (lit == MAX_LIT) {
                out[op - lit - 1] = (uint8_t)(lit - 1);
                lit = 0;
                op++;
            }
        }
    }
    if (op + 3 > out_len)
        return 0;
    while (ip < n) {
        lit++;
        out[op++] = in[ip++];
        if (lit == MAX_LIT) {
            out[op - lit - 1] = (uint8_t)(lit - 1);
            lit = 0;
            op++;
        }
    }
    out[op - lit - 1] = (uint8_t)(lit - 1);
    if (!lit)
        op--;
    if (op > out_len)
        return 0;
    return op;
}

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
    /* The output never passes the input plus one length byte per 32 literals (a match
     * writes at most as many bytes as it covers), so past this bound no check on out_len
     * can fail: a larger out_len is the same as this one, and needs no more room. */
    Py_ssize_t room = data.len + data.len / 8 + 64;
    if (out_len > room)
        out_len = room;
    PyObject *result = PyBytes_FromStringAndSize(NULL, out_len + 8);
    if (result == NULL) {
        PyBuffer_Release(&data);
        return NULL;
    }
    Py_ssize_t got = compress((const uint8_t *)data.buf, data.len,
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
