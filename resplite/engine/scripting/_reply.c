/*
 * A script's array reply in C: the run of plain elements (strings, numbers, booleans) of a
 * Lua array written as RESP, for lua/reply.lua's array branch (see vm.py, reply_encoder).
 *
 * This file is a Python extension only so that the build makes it and Python can find it:
 * the function Lua calls, resplite_encode_array, is a lua_CFunction that Lua's own
 * package.loadlib loads from this shared object. It reaches Lua's C API through pointers
 * that bind() takes from the lupa module that holds the Lua state (lupa links Lua in and
 * exports its API): this object links against no Lua of its own, so the state is only ever
 * touched by the Lua code that made it.
 *
 * Invariant: the bytes written are those reply.lua's Lua code writes for the same elements
 * (tests/unit/test_script_reply_encoder.py holds them equal): a string is a bulk string, a
 * number an integer cut toward zero as C's cast of the double (NaN and values past the
 * 64-bit range as x86's cast gives them: the least 64-bit integer), a boolean as the
 * script's and the caller's protocols say.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct lua_State lua_State;

#define LUA_TNIL 0
#define LUA_TBOOLEAN 1
#define LUA_TNUMBER 3
#define LUA_TSTRING 4

/* Lua 5.1's API, as lupa.lua51 exports it. */
static void (*p_rawgeti)(lua_State *, int, int);
static int (*p_type)(lua_State *, int);
static const char *(*p_tolstring)(lua_State *, int, size_t *);
static double (*p_tonumber)(lua_State *, int);
static int (*p_toboolean)(lua_State *, int);
static ptrdiff_t (*p_tointeger)(lua_State *, int);
static void (*p_settop)(lua_State *, int);
static void (*p_pushlstring)(lua_State *, const char *, size_t);
static void (*p_pushinteger)(lua_State *, ptrdiff_t);
static int bound;

/* What one call writes at most before it returns (so that the caller's kill check runs
 * between calls): elements, and bytes. */
#define MAX_ITEMS 16384
#define MAX_BYTES (1 << 20)

/* The output of the call in progress. Lua calls one function at a time and this one never
 * calls back into Lua, so a buffer kept between calls is safe; it is kept (up to twice
 * MAX_BYTES) so that a large reply does not allocate per call. If pushing the result fails
 * (Lua's memory limit), Lua unwinds past this function and nothing leaks. */
static char *buf;
static size_t buf_size;

static int reserve(size_t used, size_t more)
{
    if (used + more <= buf_size)
        return 1;
    size_t size = buf_size ? buf_size : 65536;
    while (size < used + more)
        size *= 2;
    char *grown = realloc(buf, size);
    if (grown == NULL)
        return 0;
    buf = grown;
    buf_size = size;
    return 1;
}

/* Decimal digits of v at out; their count. */
static size_t write_int(char *out, long long v)
{
    char digits[24];
    size_t n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t len = 0;
    if (v < 0)
        out[len++] = '-';
    while (n)
        out[len++] = digits[--n];
    return len;
}

/* (long long)d as x86-64's cvttsd2si gives it, without C's undefined behaviour. */
static long long c_cast(double d)
{
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0)
        return (long long)d;
    return INT64_MIN;
}

/* encode_array(t, first, cresp, sresp) -> piece, count, stop
 *
 * Writes t[first], t[first + 1]... (raw reads) while they are strings, numbers or booleans,
 * and at most MAX_ITEMS of them or about MAX_BYTES. `stop` says why it stopped: 0 at a nil
 * (the array's end), 1 at an element of another type (at t[first + count], for the Lua
 * code to write), 2 at the limit. */
int resplite_encode_array(lua_State *L)
{
    int first = (int)p_tointeger(L, 2);
    int cresp = (int)p_tointeger(L, 3);
    int sresp = (int)p_tointeger(L, 4);
    size_t used = 0;
    int count = 0;
    int stop = 2;
    while (count < MAX_ITEMS && used < MAX_BYTES) {
        p_rawgeti(L, 1, first + count);
        int t = p_type(L, -1);
        if (t == LUA_TSTRING) {
            size_t len;
            const char *s = p_tolstring(L, -1, &len);
            if (!reserve(used, len + 32))
                break;
            char *out = buf + used;
            *out++ = '$';
            out += write_int(out, (long long)len);
            *out++ = '\r';
            *out++ = '\n';
            memcpy(out, s, len);
            out += len;
            *out++ = '\r';
            *out++ = '\n';
            used = (size_t)(out - buf);
        } else if (t == LUA_TNUMBER) {
            if (!reserve(used, 32))
                break;
            char *out = buf + used;
            *out++ = ':';
            out += write_int(out, c_cast(p_tonumber(L, -1)));
            *out++ = '\r';
            *out++ = '\n';
            used = (size_t)(out - buf);
        } else if (t == LUA_TBOOLEAN) {
            const char *text;
            if (p_toboolean(L, -1))
                text = (sresp == 2 || cresp != 3) ? ":1\r\n" : "#t\r\n";
            else if (sresp == 2)
                text = cresp == 3 ? "_\r\n" : "$-1\r\n";
            else
                text = cresp == 3 ? "#f\r\n" : ":0\r\n";
            size_t len = strlen(text);
            if (!reserve(used, len))
                break;
            memcpy(buf + used, text, len);
            used += len;
        } else {
            stop = t == LUA_TNIL ? 0 : 1;
            p_settop(L, -2);
            break;
        }
        p_settop(L, -2);
        count++;
    }
    p_pushlstring(L, buf ? buf : "", used);
    p_pushinteger(L, count);
    p_pushinteger(L, stop);
    if (buf_size > 2 * MAX_BYTES) {
        free(buf);
        buf = NULL;
        buf_size = 0;
    }
    return 3;
}

static PyObject *py_bind(PyObject *self, PyObject *args)
{
    const char *path;
    if (!PyArg_ParseTuple(args, "s:bind", &path))
        return NULL;
    if (bound)
        Py_RETURN_TRUE;
    /* The module is loaded already: RTLD_NOLOAD only finds it (and takes a reference that
     * is kept, as the module stays loaded). */
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL)
        Py_RETURN_FALSE;
    /* lua_objlen is Lua 5.1's own (5.2 renamed it): a check that the API is 5.1's. */
    if (dlsym(lib, "lua_objlen") == NULL)
        Py_RETURN_FALSE;
    *(void **)&p_rawgeti = dlsym(lib, "lua_rawgeti");
    *(void **)&p_type = dlsym(lib, "lua_type");
    *(void **)&p_tolstring = dlsym(lib, "lua_tolstring");
    *(void **)&p_tonumber = dlsym(lib, "lua_tonumber");
    *(void **)&p_toboolean = dlsym(lib, "lua_toboolean");
    *(void **)&p_tointeger = dlsym(lib, "lua_tointeger");
    *(void **)&p_settop = dlsym(lib, "lua_settop");
    *(void **)&p_pushlstring = dlsym(lib, "lua_pushlstring");
    *(void **)&p_pushinteger = dlsym(lib, "lua_pushinteger");
    if (!p_rawgeti || !p_type || !p_tolstring || !p_tonumber || !p_toboolean || !p_tointeger
        || !p_settop || !p_pushlstring || !p_pushinteger)
        Py_RETURN_FALSE;
    bound = 1;
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"bind", py_bind, METH_VARARGS,
     "bind(path) -> bool\n\n"
     "Take Lua 5.1's API from the loaded module at path (lupa.lua51's file); False when it "
     "is not there, and then resplite_encode_array must not be loaded."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_reply",
    "A script's array reply in C (see resplite.engine.scripting.vm).", -1, methods,
};

PyMODINIT_FUNC PyInit__reply(void) { return PyModule_Create(&module); }
