-- The environment scripts run in: Redis 7's globals, `redis` API and libraries, built once per
-- Lua state by resplite.engine.scripting.vm. Loaded under the chunk name "=resplite", which
-- is how the error handler (and the kill hook) tell these frames from the script's.
--
-- Scripts never see this state's own global table: every chunk they compile (the script,
-- loadstring, load) gets `env`, an empty read-only proxy of `B`, which holds exactly the
-- names Redis's scripts see. `debug`, `setfenv`, `getfenv`, `newproxy`, `print`, `dofile`,
-- `loadfile`, `require`, `module`, `package`, `io`, `os` (but for os.clock from Redis 7.4 on)
-- and lupa's `python` are not among them, and the Python helpers arrive in `py` and are only ever held as upvalues here.
--
-- Redis's own Lua has read-only tables; stock Lua 5.1 does not, so every protected table is
-- an empty proxy whose metatable reads through to the real contents and refuses writes. The
-- base functions that could see past a proxy (rawget, rawset, next, pairs, setmetatable,
-- getmetatable, table.insert, table.foreach) are replaced by versions that look through it
-- or refuse, with Lua's own argument errors.

local mode, py, libs = ...

local INTERNAL = "=resplite"
local type, tostring, tonumber, select, unpack = type, tostring, tonumber, select, unpack
local error, pcall, xpcall, next, pairs, ipairs = error, pcall, xpcall, next, pairs, ipairs
local rawget, rawset, rawequal = rawget, rawset, rawequal
local setmetatable, getmetatable = setmetatable, getmetatable
local loadstring, setfenv, newproxy = loadstring, setfenv, newproxy
local collectgarbage, gcinfo, assert = collectgarbage, gcinfo, assert
local string, table, math, coroutine = string, table, math, coroutine
local sethook, getinfo, d_getmetatable = debug.sethook, debug.getinfo, debug.getmetatable
local s_byte, s_sub, s_format, s_gsub, s_find = string.byte, string.sub, string.format, string.gsub, string.find
local t_foreach = table.foreach
local floor, ceil = math.floor, math.ceil

local READONLY = "Attempt to modify a readonly table"

local function c_int(n)
    -- (int) of a lua_Number: truncation, the low 32 bits kept (NaN and huge values as C does).
    if n ~= n or n >= 9.2233720368547758e18 or n < -9.2233720368547758e18 then
        return -2147483648
    end
    n = n >= 0 and floor(n) or ceil(n)
    n = n % 4294967296
    if n >= 2147483648 then n = n - 4294967296 end
    return n
end

-- -- read-only proxies -------------------------------------------------------------------

local backing_of = setmetatable({}, {__mode = "k"})  -- proxy -> the table it shows
local shown_meta = setmetatable({}, {__mode = "k"})  -- proxy -> what getmetatable answers

local function refuse_write()
    -- Level 2: the assignment's own line, as Redis's VM reports it.
    error(READONLY, 2)
end

local function readonly(backing, meta_answer)
    local proxy = {}
    backing_of[proxy] = backing
    shown_meta[proxy] = meta_answer
    setmetatable(proxy, {__index = backing, __newindex = refuse_write, __metatable = false})
    return proxy
end

local function missing_global(t, name)
    error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
end

local function is_readonly(t)
    return backing_of[t] ~= nil
end

-- -- base functions that must see through (or refuse) a proxy -----------------------------

-- luaL_argerror's words for the function `depth` frames above, naming it as its caller
-- spelled it ('?' when a C function such as pcall called it).
local function argerror(depth, narg, msg)
    local ar = getinfo(depth + 1, "n")
    local name = ar and ar.name or "?"
    error(s_format("bad argument #%d to '%s' (%s)", narg, name, msg), depth + 2)
end

local function check_table(n, i, v)
    if type(v) ~= "table" then
        argerror(2, i, "table expected, got " .. (i > n and "no value" or type(v)))
    end
end

local function check_any(n, i)
    if i > n then argerror(2, i, "value expected") end
end

local function ro_rawget(...)
    local n, t, k = select("#", ...), ...
    check_table(n, 1, t)
    check_any(n, 2)
    local b = backing_of[t]
    if b ~= nil then return rawget(b, k) end
    return rawget(t, k)
end

local function ro_rawset(...)
    local n, t, k, v = select("#", ...), ...
    check_table(n, 1, t)
    check_any(n, 2)
    check_any(n, 3)
    if backing_of[t] ~= nil then error(READONLY, 0) end
    return rawset(t, k, v)
end

local function ro_next(...)
    local n, t, k = select("#", ...), ...
    check_table(n, 1, t)
    local b = backing_of[t]
    if b ~= nil then return next(b, k) end
    return next(t, k)
end

local function ro_pairs(...)
    local n, t = select("#", ...), ...
    check_table(n, 1, t)
    if backing_of[t] ~= nil then return ro_next, t, nil end
    return next, t, nil
end

local function ro_setmetatable(...)
    local n, t, mt = select("#", ...), ...
    check_table(n, 1, t)
    if mt ~= nil and type(mt) ~= "table" then argerror(1, 2, "nil or table expected") end
    if backing_of[t] ~= nil then error(READONLY, 0) end
    local current = d_getmetatable(t)
    if current ~= nil and rawget(current, "__metatable") ~= nil then
        error("cannot change a protected metatable", 2)
    end
    return setmetatable(t, mt)
end

local string_meta_shown  -- what getmetatable("") answers: read-only, as in Redis

local function ro_getmetatable(...)
    local n, t = select("#", ...), ...
    check_any(n, 1)
    if backing_of[t] ~= nil then return shown_meta[t] end
    if type(t) == "string" then return string_meta_shown end
    return getmetatable(t)
end

-- table.insert as Lua 5.1 does it (raw reads and writes), refusing read-only tables.
local function ro_insert(...)
    local n, t, a2, a3 = select("#", ...), ...
    check_table(n, 1, t)
    local e = #t + 1
    local pos, value
    if n == 2 then
        pos, value = e, a2
    elseif n == 3 then
        local p = tonumber(a2)
        if p == nil then
            argerror(1, 2, "number expected, got " .. type(a2))
        end
        pos = c_int(p)
        if pos > e then e = pos end
        if backing_of[t] ~= nil then error(READONLY, 0) end
        for i = e, pos + 1, -1 do rawset(t, i, rawget(t, i - 1)) end
        value = a3
    else
        error("wrong number of arguments to 'insert'", 2)
    end
    if backing_of[t] ~= nil then error(READONLY, 0) end
    rawset(t, pos, value)
end

local function ro_foreach(...)
    local n, t, f = select("#", ...), ...
    check_table(n, 1, t)
    if type(f) ~= "function" then
        argerror(1, 2, "function expected, got " .. (n < 2 and "no value" or type(f)))
    end
    return t_foreach(backing_of[t] or t, f)
end

-- unpack as Redis's Lua has it. Stock Lua 5.1 counts a range such as (-2, 2147483647) in a
-- C int, which overflows (and takes the whole process down); Redis's copy counts it without
-- overflow and refuses a range that does not fit on the stack (LUAI_MAXCSTACK, 8000 slots
-- with the arguments), as it does here before the stock function ever sees one.
local function safe_unpack(...)
    local n, t, i, e = select("#", ...), ...
    check_table(n, 1, t)
    if i == nil then
        i = 1
    else
        local v = tonumber(i)
        if v == nil then argerror(1, 2, "number expected, got " .. type(i)) end
        i = c_int(v)
    end
    if e == nil then
        e = #t
    else
        local v = tonumber(e)
        if v == nil then argerror(1, 3, "number expected, got " .. type(e)) end
        e = c_int(v)
    end
    if i > e then return end
    if e - i >= 2147483647 or e - i + 1 + n > 8000 then
        error("too many results to unpack", 2)
    end
    return unpack(...)  -- the arguments as given: the stock function counts them as slots
end

-- Lua 5.1 would load precompiled chunks; Redis's Lua never does. A leading space makes the
-- parser see the escape byte and fail with Redis's own message.
local function text_only(s)
    if type(s) == "string" and s_byte(s, 1) == 27 then return " " .. s end
    return s
end

-- loadstring names a chunk after its text unless told otherwise; the text, not the padded one.
local function chunk_name(s, chunkname)
    if chunkname == nil and type(s) == "string" then return s end
    return chunkname
end

local env  -- what scripts see as their globals (set below)
local s_dump, py_untail = string.dump, py.without_tail_calls

-- User code, compiled: text only, its tail calls made plain calls (natives.without_tail_calls
-- says why), seeing the scripts' globals and never this state's own.
local function compile(code, chunkname)
    local f, err = loadstring(text_only(code), chunk_name(code, chunkname))
    if f == nil then return nil, err end
    f = loadstring(py_untail(s_dump(f)))
    setfenv(f, env)
    return f
end

local function safe_loadstring(...)
    local n, s, chunkname = select("#", ...), ...
    if type(s) ~= "string" and type(s) ~= "number" then
        argerror(1, 1, "string expected, got " .. (n < 1 and "no value" or type(s)))
    end
    if chunkname ~= nil and type(chunkname) ~= "string" and type(chunkname) ~= "number" then
        argerror(1, 2, "string expected, got " .. type(chunkname))
    end
    return compile(tostring(s), chunkname and tostring(chunkname))
end

local function safe_load(...)
    local n, reader, chunkname = select("#", ...), ...
    if type(reader) ~= "function" then
        argerror(1, 1, "function expected, got " .. (n < 1 and "no value" or type(reader)))
    end
    local parts = {}
    while true do
        local piece = reader()
        if piece == nil or piece == "" then break end
        if type(piece) ~= "string" then return nil, "reader function must return a string" end
        parts[#parts + 1] = piece
    end
    return compile(table.concat(parts), chunkname or "=(load)")
end

-- Redis's pcall: an error table with a string `err` comes back as that string.
local function pcall_result(ok, ...)
    if ok then return true, ... end
    local e = ...
    if type(e) == "table" then
        local m = e.err
        if type(m) == "string" or type(m) == "number" then return false, m end
        return false, e, m
    end
    return false, e
end

local function redis_pcall(...)
    return pcall_result(pcall(...))
end

-- -- the error handler ------------------------------------------------------------------

-- Finds the user's frame that raised (skipping C functions and this file's helpers, as
-- Redis skips the C function that raised) and records its source and line.
local function error_handler(err)
    local level = 2
    local info = getinfo(level, "Sl")
    while info and (info.what == "C" or info.source == INTERNAL) do
        level = level + 1
        info = getinfo(level, "Sl")
    end
    if type(err) ~= "table" then
        err = {err = "ERR " .. tostring(err)}
    end
    if info then
        err["source"] = info.source
        err["line"] = info.currentline
    end
    return err
end

-- -- argument helpers shared by the libraries --------------------------------------------

local function typename_of(n, i, v)
    if i > n then return "no value" end
    return type(v)
end

local function pack_n(...)
    return {n = select("#", ...), ...}
end

-- Wraps a Python implementation that answers (true, results...) or (false, message[, narg]).
local function native(fn)
    return function(...)
        local r = pack_n(fn(...))
        if r[1] == false then
            local msg, narg = r[2], r[3]
            if narg then
                local ar = getinfo(1, "n")
                msg = s_format("bad argument #%d to '%s' (%s)", narg, ar and ar.name or "?", msg)
            end
            error(msg, 2)
        end
        return unpack(r, 2, r.n)
    end
end

-- -- the redis table ----------------------------------------------------------------------

local script_resp = 2
local py_command, py_setresp, py_log, py_sha1, py_acl = py.command, py.setresp, py.log, py.sha1hex, py.acl_check
local py_command_packed = py.command_packed
local py_set_repl = py.set_repl

local OK_KIND, ERR_KIND, PLAIN_ERR_KIND = 1, 2, 3

-- A call from Lua into Python carries fewer arguments than Redis lets a script pass to
-- redis.call (lupa's stops short of the 8000 C-stack slots): past this many, they go packed.
local PACK_PAST = 4000

local function call(...)
    local v, kind
    if select("#", ...) > PACK_PAST then
        v, kind = py_command_packed(select("#", ...), {...})
    else
        v, kind = py_command(...)
    end
    if kind == nil then return v end
    if kind == OK_KIND then return {ok = v} end
    if kind == ERR_KIND then error({err = v, ignore_error_stats_update = true}) end
    error({err = v})
end

local function pcall_command(...)
    local v, kind
    if select("#", ...) > PACK_PAST then
        v, kind = py_command_packed(select("#", ...), {...})
    else
        v, kind = py_command(...)
    end
    if kind == nil then return v end
    if kind == OK_KIND then return {ok = v} end
    if kind == ERR_KIND then return {err = v, ignore_error_stats_update = true} end
    return {err = v}
end

-- luaPushErrorBuff: "-CODE message" or "message" (code ERR), trailing CR/LF trimmed.
local function error_table(text)
    local code, msg
    if s_sub(text, 1, 1) == "-" then
        local space = s_find(text, " ", 1, true)
        if space then
            code, msg = s_sub(text, 2, space - 1), s_sub(text, space + 1)
        else
            code, msg = "ERR", s_sub(text, 2)
        end
    else
        code, msg = "ERR", text
    end
    msg = s_gsub(s_gsub(msg, "^[\r\n]+", ""), "[\r\n]+$", "")
    -- Redis pushes the text as a C string: it ends at the first NUL byte.
    local final = code .. " " .. msg
    local nul = s_find(final, "\0", 1, true)
    if nul then final = s_sub(final, 1, nul - 1) end
    return {err = final}
end

local function error_reply(...)
    local s = ...
    if select("#", ...) ~= 1 or type(s) ~= "string" then
        return error_table("wrong number or type of arguments")
    end
    if s_sub(s, 1, 1) ~= "-" then s = "-" .. s end
    return error_table(s)
end

local function status_reply(...)
    local s = ...
    if select("#", ...) ~= 1 or type(s) ~= "string" then
        return error_table("wrong number or type of arguments")
    end
    return {ok = s}
end

local function sha1hex(...)
    if select("#", ...) ~= 1 then error(error_table("wrong number of arguments")) end
    local s = ...
    if type(s) ~= "string" and type(s) ~= "number" then s = "" end
    return py_sha1(tostring(s))
end

local function raise(text)
    error(error_table(text))
end


local function log(...)
    local argc = select("#", ...)
    if argc < 2 then raise("redis.log() requires two arguments or more.") end
    local level = ...
    if tonumber(level) == nil then raise("First argument must be a number (log level).") end
    level = c_int(tonumber(level))
    if level < 0 or level > 3 then raise("Invalid log level.") end
    -- As Redis glues them: a space before every argument but the first that is printed,
    -- even when the arguments before it were not (tables, booleans...).
    local parts = {}
    for i = 2, argc do
        local v = select(i, ...)
        if type(v) == "string" or type(v) == "number" then
            if i ~= 2 then parts[#parts + 1] = " " end
            parts[#parts + 1] = tostring(v)
        end
    end
    py_log(level, table.concat(parts))
end

local function setresp(...)
    if select("#", ...) ~= 1 then raise("redis.setresp() requires one argument.") end
    local resp = c_int(tonumber((...)) or 0)
    if resp ~= 2 and resp ~= 3 then raise("RESP version must be 2 or 3.") end
    script_resp = resp
    py_setresp(resp)
end

local function set_repl(...)
    if select("#", ...) ~= 1 then raise("redis.set_repl() requires one argument.") end
    local flags = c_int(tonumber((...)) or 0)
    if flags < 0 or flags > 3 then
        raise("Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
    end
    py_set_repl(flags)
end

local function acl_check_cmd(...)
    local answer, kind = py_acl(...)
    if kind ~= nil then raise(answer) end
    return answer
end

local redis_api = {}
redis_api.call = call
redis_api.pcall = pcall_command
redis_api.log = log
redis_api.LOG_DEBUG = 0
redis_api.LOG_VERBOSE = 1
redis_api.LOG_NOTICE = 2
redis_api.LOG_WARNING = 3
redis_api.REDIS_VERSION_NUM = py.version_num
redis_api.REDIS_VERSION = py.version
redis_api.setresp = setresp
redis_api.sha1hex = sha1hex
redis_api.error_reply = error_reply
redis_api.status_reply = status_reply
redis_api.set_repl = set_repl
redis_api.REPL_NONE = 0
redis_api.REPL_AOF = 1
redis_api.REPL_SLAVE = 2
redis_api.REPL_REPLICA = 2
redis_api.REPL_ALL = 3
redis_api.acl_check_cmd = acl_check_cmd
if mode == "eval" then
    redis_api.breakpoint = function() return false end
    redis_api.debug = function() end
    redis_api.replicate_commands = function() return true end
end

-- -- math.random with Redis's generator (the same sequence on every platform) ----------------

local py_rand, py_srand = py.rand, py.srand

local function checkint(fn_level, i, n, v)
    local num = tonumber(v)
    if num == nil then
        argerror(fn_level + 1, i, "number expected, got " .. typename_of(n, i, v))
    end
    return c_int(num)
end

local function random(...)
    local r = py_rand()
    local n = select("#", ...)
    if n == 0 then return r end
    if n == 1 then
        local u = checkint(1, 1, n, (...))
        if u < 1 then argerror(1, 1, "interval is empty") end
        return floor(r * u) + 1
    end
    if n == 2 then
        local l, u = ...
        l = checkint(1, 1, n, l)
        u = checkint(1, 2, n, u)
        if l > u then argerror(1, 2, "interval is empty") end
        return floor(r * (u - l + 1)) + l
    end
    error("wrong number of arguments", 2)
end

local function randomseed(...)
    py_srand(checkint(1, 1, select("#", ...), (...)))
end

-- -- the libraries ------------------------------------------------------------------------

local helpers = {
    readonly = readonly, argerror = argerror, typename_of = typename_of, native = native,
    c_int = c_int, INTERNAL = INTERNAL, getinfo = getinfo,
}

local math_b = {}
for k, v in next, math do math_b[k] = v end
math_b.random = random
math_b.randomseed = randomseed

local table_b = {}
for k, v in next, table do table_b[k] = v end
table_b.insert = ro_insert
table_b.foreach = ro_foreach

local string_b = {}
for k, v in next, string do string_b[k] = v end

local coroutine_b = {}
for k, v in next, coroutine do coroutine_b[k] = v end

local cjson = libs.cjson(helpers, py)
local cmsgpack = libs.cmsgpack(helpers, py)
local struct = {pack = native(py.struct_pack), unpack = native(py.struct_unpack),
                size = native(py.struct_size)}
local bit = {}
for _, name in ipairs({"tobit", "bnot", "band", "bor", "bxor", "lshift", "rshift", "arshift",
                       "rol", "ror", "bswap", "tohex"}) do
    bit[name] = native(py["bit_" .. name])
end

local string_p = readonly(string_b)

-- Methods on strings ("x"):upper() look through the same read-only table.
getmetatable("").__index = string_p
string_meta_shown = readonly({__index = string_p})

-- -- the globals --------------------------------------------------------------------------

local B = {}  -- what _G shows
local G = readonly(B)
setmetatable(B, {__index = missing_global})
local G_meta_shown = readonly({__index = missing_global})
shown_meta[G] = G_meta_shown

-- In the order Redis's libraries register them (it shapes what pairs(_G) walks through).
B._G = G
B.assert = assert
B.collectgarbage = collectgarbage
B.error = error
B.gcinfo = gcinfo
B.getmetatable = ro_getmetatable
B.load = safe_load
B.loadstring = safe_loadstring
B.next = ro_next
B.pcall = redis_pcall
B.rawequal = rawequal
B.rawget = ro_rawget
B.rawset = ro_rawset
B.select = select
B.setmetatable = ro_setmetatable
B.tonumber = tonumber
B.tostring = tostring
B.type = type
B.unpack = safe_unpack
B.xpcall = xpcall
B._VERSION = _VERSION
B.ipairs = ipairs
B.pairs = ro_pairs
B.coroutine = readonly(coroutine_b)
B.table = readonly(table_b)
B.string = string_p
B.math = readonly(math_b)
if py.os_clock then
    -- Redis 7.4 on: the os library, with clock alone (the processor time used, seconds).
    local os_clock = py.os_clock
    B.os = readonly({clock = function() return os_clock() end})
end
B.cjson = readonly(cjson)
B.struct = readonly(struct)
B.cmsgpack = readonly(cmsgpack)
B.bit = readonly(bit)
B.redis = readonly(redis_api)
if mode == "eval" then
    B.__redis__err__handler = error_handler
end

local FLAG_NAMES = {
    ["no-writes"] = "no-writes", ["allow-oom"] = "allow-oom", ["allow-stale"] = "allow-stale",
    ["no-cluster"] = "no-cluster", ["allow-cross-slot-keys"] = "allow-cross-slot-keys",
}
local py_register = py.register_function

-- redis.register_function's arguments, checked in Redis's order and words. Answers
-- (name, callback, description, flags) or (nil, error text).
local function register_args(...)
    local argc = select("#", ...)
    if argc < 1 or argc > 2 then
        return nil, "wrong number of arguments to redis.register_function"
    end
    if argc == 2 then
        local name, callback = ...
        if type(name) ~= "string" and type(name) ~= "number" then
            return nil, "first argument to redis.register_function must be a string"
        end
        if type(callback) ~= "function" then
            return nil, "second argument to redis.register_function must be a function"
        end
        return tostring(name), callback, nil, {}
    end
    local t = ...
    if type(t) ~= "table" then
        return nil, "calling redis.register_function with a single argument is only " ..
            "applicable to Lua table (representing named arguments)."
    end
    local name, desc, callback, flags = nil, nil, nil, {}
    for k, v in next, t do
        if type(k) ~= "string" and type(k) ~= "number" then
            return nil, "named argument key given to redis.register_function is not a string"
        end
        local key = string.lower(tostring(k))
        if key == "function_name" then
            if type(v) ~= "string" and type(v) ~= "number" then
                return nil, "function_name argument given to redis.register_function " ..
                    "must be a string"
            end
            name = tostring(v)
        elseif key == "description" then
            if type(v) ~= "string" and type(v) ~= "number" then
                return nil, "description argument given to redis.register_function " ..
                    "must be a string"
            end
            desc = tostring(v)
        elseif key == "callback" then
            if type(v) ~= "function" then
                return nil, "callback argument given to redis.register_function " ..
                    "must be a function"
            end
            callback = v
        elseif key == "flags" then
            if type(v) ~= "table" then
                return nil, "flags argument to redis.register_function must be a table " ..
                    "representing function flags"
            end
            local j = 1
            while true do
                local flag = v[j]
                if flag == nil then break end
                local canonical = (type(flag) == "string" or type(flag) == "number")
                    and FLAG_NAMES[string.lower(tostring(flag))]
                if not canonical then return nil, "unknown flag given" end
                flags[#flags + 1] = canonical
                j = j + 1
            end
        else
            return nil, "unknown argument given to redis.register_function"
        end
    end
    if name == nil then return nil, "redis.register_function must get a function name argument" end
    if callback == nil then return nil, "redis.register_function must get a callback argument" end
    return name, callback, desc, flags
end

local function register_function(...)
    local name, callback, desc, flags = register_args(...)
    if name == nil then error(error_table(callback)) end
    local problem = py_register(name, callback, desc, unpack(flags))
    if problem ~= nil then error(error_table(problem)) end
end

local library_api  -- FUNCTION LOAD's view of the globals (function mode only)
local env_meta

if mode == "eval" then
    env = G
else
    -- During FUNCTION LOAD the code sees only redis.register_function, redis.log and the
    -- version; functions see the full globals when they run. Both go through one empty
    -- read-only table whose reads are pointed at one or the other (as Redis swaps the
    -- __index of the functions' global table).
    local lib_redis = {}
    lib_redis.register_function = register_function
    lib_redis.log = log
    lib_redis.LOG_DEBUG = 0
    lib_redis.LOG_VERBOSE = 1
    lib_redis.LOG_NOTICE = 2
    lib_redis.LOG_WARNING = 3
    lib_redis.REDIS_VERSION_NUM = py.version_num
    lib_redis.REDIS_VERSION = py.version
    setmetatable(lib_redis, {__index = missing_global})
    local lib_globals = {redis = readonly(lib_redis)}
    setmetatable(lib_globals, {__index = missing_global})
    library_api = lib_globals
    env = {}
    env_meta = {__index = B, __newindex = refuse_write, __metatable = false}
    setmetatable(env, env_meta)
    backing_of[env] = B
    shown_meta[env] = G_meta_shown
end

-- -- running scripts ----------------------------------------------------------------------

-- Lua 5.1 keeps a hook per thread (debug.sethook's function is found by the thread that
-- runs), and a coroutine starts without one: every coroutine a script makes is given the
-- hook as it is made, as Redis's coroutines inherit its C hook. Scripts cannot remove it:
-- `debug` and these upvalues are out of their reach.

local HOOK_COUNT = 100000
local py_hook = py.hook
local gethook = debug.gethook
local hook_every_line = false  -- a kill is in force: the hook raises on every line
-- The script's value is being written as its reply (finish): a kill ends that at once, as
-- the script has nothing left to run, and its reply is then the kill's error.
local encoding = false
local co_create, co_wrap = coroutine.create, coroutine.wrap

local hook

hook = function()
    local verdict = py_hook()
    if verdict and encoding then
        error({err = verdict})
    elseif verdict then
        -- Every line from now on raises again, so a pcall in the script cannot hold it.
        -- (Another thread raises at its own next count, as in Redis.)
        sethook(hook, "l")
        hook_every_line = true
        -- Only the script's own code is interrupted; this file's functions (the runner, the
        -- libraries) finish what they do and the next line of the script raises.
        local info = getinfo(2, "S")
        if info and info.source == INTERNAL then return end
        error({err = verdict})
    elseif not hook_every_line then
        -- A coroutine an earlier run's kill left hooked on every line counts again.
        local _, mask = gethook()
        if mask ~= "" then sethook(hook, "", HOOK_COUNT) end
    end
end

-- The count hook stays installed: Python answers at once when nothing is running.
sethook(hook, "", HOOK_COUNT)

local function rearm()
    if hook_every_line then
        sethook(hook, "", HOOK_COUNT)
        hook_every_line = false
    end
end

-- The hook on the running thread: counting, or on every line while a kill is in force.
local function arm()
    if hook_every_line then sethook(hook, "l") else sethook(hook, "", HOOK_COUNT) end
end

-- coroutine.wrap's body: the hook first, then the script's function. A tail call, so the
-- script's function is the coroutine's first frame, as it is in Redis.
local function hooked(f)
    return function(...)
        arm()
        return f(...)
    end
end

-- A new thread for `f`, refused with luaB_cocreate's words unless `f` is a Lua function (the
-- error of a protected call is cheaper to get than debug.getinfo's answer).
local function new_thread(f)
    local ok, co = pcall(co_create, f)
    if ok then return co end
    local refused = type(co) == "string" and s_find(co, "Lua function expected", 1, true)
    if type(f) ~= "function" or refused then argerror(2, 1, "Lua function expected") end
    return co_create(f)  -- out of memory: again, unprotected, so that it fails as such
end

coroutine_b.create = function(f)
    local co = new_thread(f)
    if hook_every_line then sethook(co, hook, "l") else sethook(co, hook, "", HOOK_COUNT) end
    return co
end

coroutine_b.wrap = function(f)
    new_thread(f)  -- the check only
    return co_wrap(hooked(f))
end

local encode_reply = libs.reply(helpers, py, hook)

local FAIL, FAIL_RAW = 1, 2
local ERROR, STATUS, ENCODED, BOOLEAN = 3, 4, 5, 6

local function finish(caller_resp, ok, r)
    rearm()
    if ok then
        local t = type(r)
        if t == "table" then
            local e = rawget(r, "err")
            if type(e) == "string" then
                return ERROR, e, r.ignore_error_stats_update and true or false
            end
            local s = rawget(r, "ok")
            if type(s) == "string" then return STATUS, s end
            -- A large table takes a while to write: the count hook goes on meanwhile (other
            -- clients are served once the script is busy) and a kill stops the writing.
            encoding = true
            local done, data, errors = pcall(encode_reply, r, caller_resp, script_resp)
            encoding = false
            if done then return ENCODED, data, errors end
            if type(data) == "table" then return FAIL, data.err, nil, nil, false end
            return FAIL_RAW, data  -- not enough memory
        end
        if t == "boolean" then return BOOLEAN, r, script_resp end
        if t == "string" or t == "number" then return r end
        return nil  -- functions, coroutines, userdata: a null reply
    end
    if type(r) == "table" then
        local msg = r.err
        if type(msg) ~= "string" and type(msg) ~= "number" then msg = nil end
        local source, line = r.source, r.line
        if type(source) ~= "string" and type(source) ~= "number" then source = nil end
        if type(line) ~= "string" and type(line) ~= "number" then line = nil end
        return FAIL, msg, source, line, r.ignore_error_stats_update == true
    end
    return FAIL_RAW, r
end

-- KEYS and ARGV (or a function's keys and args) from the command's arguments.
local function split_args(nkeys, ...)
    local n = select("#", ...)
    if nkeys == n then return {...}, {} end
    if nkeys == 0 then return {}, {...} end
    local all = {...}
    local keys, argv = {}, {}
    for i = 1, nkeys do keys[i] = all[i] end
    for i = nkeys + 1, n do argv[i - nkeys] = all[i] end
    return keys, argv
end

local entry = {}

if mode == "eval" then
    entry.compile = function(code)
        return compile(code, "@user_script")
    end

    entry.run = function(f, caller_resp, nkeys, ...)
        script_resp = 2
        if nkeys == select("#", ...) then
            B.KEYS, B.ARGV = {...}, {}
        else
            B.KEYS, B.ARGV = split_args(nkeys, ...)
        end
        local ok, r = xpcall(f, error_handler)
        if ok and not hook_every_line then
            local t = type(r)
            if t == "string" or t == "number" then return r end
        end
        return finish(caller_resp, ok, r)
    end
else
    entry.load = function(code)
        env_meta.__index = library_api
        local f, err = compile(code, "@user_function")
        if f == nil then
            env_meta.__index = B
            return false, err
        end
        local ok, e = pcall(f)
        rearm()
        env_meta.__index = B
        if ok then return true end
        if type(e) == "table" then
            local msg = e.err
            if type(msg) == "string" or type(msg) == "number" then return false, nil, msg end
            return false, nil, nil
        end
        return false, nil, "ERR " .. tostring(e)
    end

    entry.run = function(f, caller_resp, nkeys, ...)
        script_resp = 2
        local keys, argv = split_args(nkeys, ...)
        local ok, r = xpcall(function() return f(keys, argv) end, error_handler)
        if ok and not hook_every_line then
            local t = type(r)
            if t == "string" or t == "number" then return r end
        end
        return finish(caller_resp, ok, r)
    end

    entry.raise = function(text)
        error(error_table(text))
    end
end

entry.gc = function()
    collectgarbage("collect")
end

entry.memory = function()
    return collectgarbage("count")
end

return entry
