/* The integer a string is, when it is one written canonically: Redis's string2ll rule as
 * the Python code has it (resplite.algorithms.numbers.parse_int, listpack_size's
 * integer_value): optional '-', no leading zero, no "-0", within a signed 64-bit integer.
 * Shared by the C extensions that must decide it as the Python code does.
 * Include after Python.h (Py_ssize_t) and stdint.h. */
#ifndef RESPLITE_CANONICAL_INT_H
#define RESPLITE_CANONICAL_INT_H

static int canonical_int64(const uint8_t *s, Py_ssize_t n, int64_t *value)
{
    if (n == 0 || n > 20)
        return 0;
    if (n == 1) {
        if (s[0] < '0' || s[0] > '9')
            return 0;
        *value = s[0] - '0';
        return 1;
    }
    int negative = s[0] == '-';
    const uint8_t *p = s + negative;
    Py_ssize_t len = n - negative;
    if (len > 19 || p[0] < '1' || p[0] > '9')
        return 0;
    uint64_t v = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        v = v * 10 + (uint64_t)(p[i] - '0');  /* 19 digits fit 64 bits unsigned */
    }
    if (negative) {
        if (v > (uint64_t)INT64_MAX + 1)
            return 0;
        *value = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX)
            return 0;
        *value = (int64_t)v;
    }
    return 1;
}

#endif
