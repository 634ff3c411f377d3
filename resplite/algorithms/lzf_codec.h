/*
 * LZF as Redis writes and reads it, for the C extensions (included by each: all static).
 *
 * lzf_compress is resplite.algorithms.lzf.compress_py without the interpreter: the algorithm
 * and every bound follow that pure-Python reference (a test holds the two equal on random
 * input). Redis's compressor keeps its hash table of earlier positions on the stack without
 * clearing it; the output it gives from a fresh table is what resplite reproduces, so the
 * table must read as empty at the start of every call. Clearing 64K slots per call would
 * cost more than compressing a short string, so each slot carries the number of the call
 * that wrote it and a slot from an earlier call reads as empty. The table is shared by the
 * calls of one extension: the interpreter lock is held throughout (no call runs
 * concurrently).
 *
 * lzf_decompress is resplite.algorithms.lzf.decompress_py's checks in C: -1 for any stream
 * that does not decode to exactly out_len bytes.
 */

#ifndef RESPLITE_LZF_CODEC_H
#define RESPLITE_LZF_CODEC_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#define HASH_BITS 16
#define HASH_MASK ((1u << HASH_BITS) - 1)
#define MAX_LIT (1 << 5)
#define MAX_OFF (1 << 13)
#define MAX_REF ((1 << 8) + (1 << 3))

/* Slot: the call number in the high 32 bits, the input position in the low 32. */
static uint64_t lzf_table[1u << HASH_BITS];
static uint32_t lzf_generation;

static inline uint32_t slot_of(uint32_t h) { return ((h >> 8) - h * 5) & HASH_MASK; }

static inline uint32_t lookup_and_set(uint32_t slot, uint32_t pos)
{
    uint64_t old = lzf_table[slot];
    lzf_table[slot] = ((uint64_t)lzf_generation << 32) | pos;
    return (uint32_t)(old >> 32) == lzf_generation ? (uint32_t)old : 0;
}

static inline void lzf_set(uint32_t slot, uint32_t pos)
{
    lzf_table[slot] = ((uint64_t)lzf_generation << 32) | pos;
}

/* Compress in[0..n) into out (room for out_len + 8 bytes); the compressed length, or 0
 * when it does not fit in out_len bytes. */
static Py_ssize_t lzf_compress(const uint8_t *in, Py_ssize_t n, uint8_t *out, Py_ssize_t out_len)
{
    if (++lzf_generation == 0) {  /* every 2^32 calls: start the numbering again */
        memset(lzf_table, 0, sizeof lzf_table);
        lzf_generation = 1;
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
            lzf_set(slot_of(h), (uint32_t)ip);
            ip++;
            h = (h << 8) | in[ip + 2];
            lzf_set(slot_of(h), (uint32_t)ip);
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

/* The out_len bytes in[0..n) decodes to, into out; out_len, or -1 when the stream does not
 * decode to exactly that many (a corrupt or truncated stream). */
static inline Py_ssize_t lzf_decompress(const uint8_t *in, Py_ssize_t n, uint8_t *out,
                                 Py_ssize_t out_len)
{
    Py_ssize_t ip = 0, op = 0;
    while (ip < n) {
        unsigned ctrl = in[ip++];
        if (ctrl < 32) {
            Py_ssize_t run = ctrl + 1;
            if (op + run > out_len || ip + run > n)
                return -1;
            memcpy(out + op, in + ip, run);
            op += run;
            ip += run;
            continue;
        }
        Py_ssize_t len = ctrl >> 5;
        Py_ssize_t back = ((Py_ssize_t)(ctrl & 0x1f) << 8) + 1;
        if (ip >= n)
            return -1;
        if (len == 7) {
            len += in[ip++];
            if (ip >= n)
                return -1;
        }
        back += in[ip++];
        len += 2;
        if (op + len > out_len || back > op)
            return -1;
        const uint8_t *from = out + op - back;
        if (back >= len) {
            memcpy(out + op, from, len);
            op += len;
        } else {  /* an overlapping copy repeats the last back bytes */
            for (Py_ssize_t i = 0; i < len; i++)
                out[op + i] = from[i];
            op += len;
        }
    }
    return op == out_len ? op : -1;
}

/* A bound on the output of lzf_compress for n input bytes: past it no check on out_len can
 * fail (one length byte per 32 literals, and a match writes at most the bytes it covers), so
 * a larger out_len behaves as this one and needs no more room. */
static inline Py_ssize_t lzf_room(Py_ssize_t n) { return n + n / 8 + 64; }

#endif
