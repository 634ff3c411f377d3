-- cjson as Redis ships it (Lua CJSON 2.1.0): encode, decode, the configuration functions and
-- cjson.new, with the same outputs and error texts. Numbers are written with %.14g (the
-- configured precision); decoding follows the C tokenizer: the text ends at its first NUL
-- byte, numbers are read as strtod reads them (so hex, inf and nan are accepted by default),
-- and errors name the token found and its 1-based position.
--
-- From Redis 8.4 (py.cjson_array_mt): cjson.decode_array_with_array_mt, which makes decode give
-- each array a read-only metatable marked __is_cjson_array, and encode writes any table so
-- marked as an array, empty or not.

return function(helpers, py)
    local type, tostring, tonumber, select, pcall, error = type, tostring, tonumber, select, pcall, error
    local next, rawget, setmetatable = next, rawget, setmetatable
    local s_byte, s_sub, s_find, s_format, s_gsub, s_char, s_lower =
        string.byte, string.sub, string.find, string.format, string.gsub, string.char, string.lower
    local t_concat = table.concat
    local floor, huge = math.floor, math.huge
    local getmetatable, ipairs, newproxy, unpack = getmetatable, ipairs, newproxy, unpack
    local typename_of, debug_getinfo, c_int = helpers.typename_of, helpers.getinfo, helpers.c_int
    local array_mt_known = py.cjson_array_mt
    local raw_getmetatable, readonly = debug.getmetatable, helpers.readonly

    -- What C's lua_getmetatable + lua_getfield(mt, "__is_cjson_array") see.
    local function marked_array(t)
        local mt = raw_getmetatable(t)
        return mt ~= nil and mt.__is_cjson_array and true or false
    end

    -- cjson.null: Redis uses a NULL light userdata; any userdata that compares equal works.
    local null = newproxy(false)

    local ESCAPES = {
        ['"'] = '\\"', ["\\"] = "\\\\", ["/"] = "\\/", ["\b"] = "\\b", ["\f"] = "\\f",
        ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ["\127"] = "\\u007f",
    }
    for i = 0, 31 do
        local c = s_char(i)
        if ESCAPES[c] == nil then ESCAPES[c] = s_format("\\u%04x", i) end
    end

    -- A private error, turned into a Lua error at the library's entry point so that the
    -- position shown is the script's call.
    local Failure = {}
    local function fail(msg)
        error(setmetatable({msg = msg}, Failure), 0)
    end

    local function packed(...)
        return {n = select("#", ...), ...}
    end

    local function entry(fn, level)
        return function(...)
            -- As many results as the function gives (decode one, encode_sparse_array three):
            -- cjson.encode(cjson.decode(s)) must see one argument.
            local results = packed(pcall(fn, ...))
            if results[1] then return unpack(results, 2, results.n) end
            local e = results[2]
            if type(e) == "table" and getmetatable(e) == Failure then
                if e.narg then
                    local ar = debug_getinfo(1, "n")
                    error(s_format("bad argument #%d to '%s' (%s)", e.narg,
                        ar and ar.name or "?", e.msg), 2)
                end
                error(e.msg, 2)
            end
            error(e, 0)
        end
    end

    local function arg_fail(narg, msg)
        error(setmetatable({msg = msg, narg = narg}, Failure), 0)
    end

    local function new()
        -- On/off options are kept as 0/1 (and encode_invalid_numbers 2 for "null"), as the C
        -- configuration keeps them.
        local cfg = {
            sparse_convert = 0, sparse_ratio = 2, sparse_safe = 10,
            encode_max_depth = 1000, decode_max_depth = 1000,
            encode_invalid_numbers = 0, decode_invalid_numbers = 1,
            keep_buffer = 1, precision = 14, array_mt = 0,
        }

        -- -- encoding ------------------------------------------------------------------

        local function typename(v)
            if v == null then return "lightuserdata" end
            return type(v)
        end

        local function number_text(n, what)
            local mode = cfg.encode_invalid_numbers
            if n ~= n or n == huge or n == -huge then
                if mode == 0 then
                    fail("Cannot serialise " .. what .. ": must not be NaN or Inf")
                elseif mode == 2 then
                    return "null"
                elseif n ~= n then
                    return "nan"
                end
            end
            return s_format("%." .. cfg.precision .. "g", n)
        end

        local function string_text(s)
            return '"' .. s_gsub(s, '[%z\1-\31"\\/\127]', ESCAPES) .. '"'
        end

        local encode_value

        local function array_length(t)
            local max, items = 0, 0
            local k = next(t)
            while k ~= nil do
                if type(k) == "number" and k ~= 0 and floor(k) == k and k >= 1 then
                    if k > max then max = k end
                    items = items + 1
                else
                    return -1
                end
                k = next(t, k)
            end
            if cfg.sparse_ratio > 0 and max > items * cfg.sparse_ratio and max > cfg.sparse_safe then
                if cfg.sparse_convert == 0 then
                    fail("Cannot serialise table: excessively sparse array")
                end
                return -1
            end
            return max
        end

        encode_value = function(v, depth, out)
            local t = type(v)
            if t == "string" then
                out[#out + 1] = string_text(v)
            elseif t == "number" then
                out[#out + 1] = number_text(v, "number")
            elseif t == "boolean" then
                out[#out + 1] = v and "true" or "false"
            elseif t == "table" then
                depth = depth + 1
                if depth > cfg.encode_max_depth then
                    fail(s_format("Cannot serialise, excessive nesting (%d)", depth))
                end
                local len
                if array_mt_known and marked_array(v) then
                    len = #v
                    if len == 0 then
                        out[#out + 1] = "[]"
                        return
                    end
                else
                    len = array_length(v)
                end
                if len > 0 then
                    out[#out + 1] = "["
                    for i = 1, len do
                        if i > 1 then out[#out + 1] = "," end
                        encode_value(rawget(v, i), depth, out)
                    end
                    out[#out + 1] = "]"
                else
                    out[#out + 1] = "{"
                    local first = true
                    local k, val = next(v)
                    while k ~= nil do
                        if not first then out[#out + 1] = "," end
                        first = false
                        local kt = type(k)
                        if kt == "number" then
                            out[#out + 1] = '"' .. number_text(k, "number") .. '":'
                        elseif kt == "string" then
                            out[#out + 1] = string_text(k) .. ":"
                        else
                            fail("Cannot serialise " .. typename(k) ..
                                ": table key must be a number or string")
                        end
                        encode_value(val, depth, out)
                        k, val = next(v, k)
                    end
                    out[#out + 1] = "}"
                end
            elseif v == nil or v == null then
                out[#out + 1] = "null"
            else
                fail("Cannot serialise " .. typename(v) .. ": type not supported")
            end
        end

        local function encode(...)
            if select("#", ...) ~= 1 then arg_fail(1, "expected 1 argument") end
            local out = {}
            encode_value((...), 0, out)
            return t_concat(out)
        end

        -- -- decoding ------------------------------------------------------------------

        local WS = {[32] = true, [9] = true, [10] = true, [13] = true}
        local SINGLE = {
            [123] = "T_OBJ_BEGIN", [125] = "T_OBJ_END", [91] = "T_ARR_BEGIN",
            [93] = "T_ARR_END", [44] = "T_COMMA", [58] = "T_COLON",
        }
        local UNKNOWN = {
            [102] = true, [105] = true, [73] = true, [110] = true, [78] = true, [116] = true,
            [34] = true, [43] = true, [45] = true,
        }
        for c = 48, 57 do UNKNOWN[c] = true end
        local UNESCAPE = {
            [34] = '"', [92] = "\\", [47] = "/", [98] = "\b", [116] = "\t", [110] = "\n",
            [102] = "\f", [114] = "\r",
        }

        -- The length of the number strtod would read at s[i...], 0 when none.
        local function strtod_length(s, i)
            local j = i
            local c = s_byte(s, j)
            if c == 43 or c == 45 then j = j + 1 end
            local rest = s_lower(s_sub(s, j, j + 7))
            if s_sub(rest, 1, 8) == "infinity" then return j + 8 - i end
            if s_sub(rest, 1, 3) == "inf" then return j + 3 - i end
            if s_sub(rest, 1, 3) == "nan" then
                local _, e = s_find(s, "^%([%w_]*%)", j + 3)
                return (e or (j + 2)) + 1 - i
            end
            if s_find(s, "^0[xX]", j) then
                local k = j + 2
                local _, e = s_find(s, "^%x*", k)
                local digits = e - k + 1
                k = e + 1
                if s_byte(s, k) == 46 then
                    local _, e2 = s_find(s, "^%x*", k + 1)
                    digits = digits + (e2 - k)
                    if e2 - k > 0 or digits > 0 then k = e2 + 1 end
                end
                if digits == 0 then return j + 1 - i end  -- just the "0"
                local _, pe = s_find(s, "^[pP][+-]?%d+", k)
                if pe then k = pe + 1 end
                return k - i
            end
            local _, e = s_find(s, "^%d*", j)
            local digits = e - j + 1
            local k = e + 1
            if s_byte(s, k) == 46 then
                local _, e2 = s_find(s, "^%d*", k + 1)
                digits = digits + (e2 - k)
                k = e2 + 1
            end
            if digits == 0 then return 0 end
            local _, ee = s_find(s, "^[eE][+-]?%d+", k)
            if ee then k = ee + 1 end
            return k - i
        end

        local function is_invalid_number(s, i)
            local c = s_byte(s, i)
            if c == 43 then return true end
            local p = i
            if c == 45 then p = p + 1 end
            c = s_byte(s, p)
            if c == 48 then
                local c2 = s_byte(s, p + 1)
                if c2 and (c2 == 120 or c2 == 88 or (c2 >= 48 and c2 <= 57)) then return true end
                return false
            elseif c and c <= 57 then
                return false
            end
            local word = s_lower(s_sub(s, p, p + 2))
            return word == "inf" or word == "nan"
        end

        local function utf8(cp)
            if cp <= 0x7F then return s_char(cp) end
            if cp <= 0x7FF then
                return s_char(floor(cp / 64) + 0xC0, cp % 64 + 0x80)
            end
            if cp <= 0xFFFF then
                return s_char(floor(cp / 4096) + 0xE0, floor(cp / 64) % 64 + 0x80, cp % 64 + 0x80)
            end
            return s_char(floor(cp / 262144) + 0xF0, floor(cp / 4096) % 64 + 0x80,
                floor(cp / 64) % 64 + 0x80, cp % 64 + 0x80)
        end

        local function hex4(s, i)
            local h = s_sub(s, i, i + 3)
            if #h < 4 or s_find(h, "[^%x]") then return nil end
            return tonumber(h, 16)
        end

        local decode

        decode = function(s)
            local pos = 1
            local depth = 0
            -- The C parser reads a NUL-terminated string: the text ends at the first NUL.
            local nul = s_find(s, "\0", 1, true)
            local limit = nul and nul - 1 or #s

            -- Returns kind, value, index (1-based position of the token, or of the error).
            local function next_token()
                local c = s_byte(s, pos)
                while pos <= limit and WS[c] do
                    pos = pos + 1
                    c = s_byte(s, pos)
                end
                local at = pos
                if pos > limit then return "T_END", nil, at end
                local single = SINGLE[c]
                if single then
                    pos = pos + 1
                    return single, nil, at
                end
                if not UNKNOWN[c] then return "T_ERROR", "invalid token", at end
                if c == 34 then
                    local parts = {}
                    pos = pos + 1
                    while true do
                        local a, b = s_find(s, '^[^"\\%z]+', pos)
                        if a and b > limit then b = limit end
                        if a and b >= a then
                            parts[#parts + 1] = s_sub(s, a, b)
                            pos = b + 1
                        end
                        if pos > limit then return "T_ERROR", "unexpected end of string", pos end
                        c = s_byte(s, pos)
                        if c == 34 then
                            pos = pos + 1
                            return "T_STRING", t_concat(parts), at
                        end
                        if c == 0 then return "T_ERROR", "unexpected end of string", pos end
                        -- a backslash
                        local e = pos + 1 <= limit and s_byte(s, pos + 1) or 0
                        if e == 117 then
                            local cp = hex4(s, pos + 2)
                            local len = 6
                            if cp and cp >= 0xD800 and cp <= 0xDFFF then
                                if cp >= 0xDC00 then cp = nil
                                elseif s_sub(s, pos + 6, pos + 7) ~= "\\u" then cp = nil
                                else
                                    local low = hex4(s, pos + 8)
                                    if not low or low < 0xDC00 or low > 0xDFFF then cp = nil
                                    else
                                        cp = (cp - 0xD800) * 1024 + (low - 0xDC00) + 0x10000
                                        len = 12
                                    end
                                end
                            end
                            if not cp or (pos + len - 1) > limit then
                                return "T_ERROR", "invalid unicode escape code", pos
                            end
                            parts[#parts + 1] = utf8(cp)
                            pos = pos + len
                        else
                            local ch = UNESCAPE[e]
                            if not ch then return "T_ERROR", "invalid escape code", pos end
                            parts[#parts + 1] = ch
                            pos = pos + 2
                        end
                    end
                end
                if c == 45 or (c >= 48 and c <= 57) then
                    if cfg.decode_invalid_numbers == 0 and is_invalid_number(s, pos) then
                        return "T_ERROR", "invalid number", pos
                    end
                elseif s_sub(s, pos, pos + 3) == "true" then
                    pos = pos + 4
                    return "T_BOOLEAN", true, at
                elseif s_sub(s, pos, pos + 4) == "false" then
                    pos = pos + 5
                    return "T_BOOLEAN", false, at
                elseif s_sub(s, pos, pos + 3) == "null" then
                    pos = pos + 4
                    return "T_NULL", nil, at
                elseif not (cfg.decode_invalid_numbers == 1 and is_invalid_number(s, pos)) then
                    return "T_ERROR", "invalid token", pos
                end
                local len = strtod_length(s, pos)
                if pos + len - 1 > limit then len = strtod_length(s_sub(s, 1, limit), pos) end
                if len == 0 then return "T_ERROR", "invalid number", pos end
                local n = tonumber(s_sub(s, pos, pos + len - 1))
                pos = pos + len
                return "T_NUMBER", n, at
            end

            local function parse_error(expected, kind, value, index)
                local found = kind == "T_ERROR" and value or kind
                fail(s_format("Expected %s but found %s at character %d", expected, found, index))
            end

            local process

            local function descend()
                depth = depth + 1
                if depth > cfg.decode_max_depth then
                    fail(s_format("Found too many nested data structures (%d) at character %d",
                        depth, pos - 1))
                end
            end

            local function object()
                descend()
                local t = {}
                local kind, value, index = next_token()
                if kind == "T_OBJ_END" then
                    depth = depth - 1
                    return t
                end
                while true do
                    if kind ~= "T_STRING" then parse_error("object key string", kind, value, index) end
                    local key = value
                    kind, value, index = next_token()
                    if kind ~= "T_COLON" then parse_error("colon", kind, value, index) end
                    kind, value, index = next_token()
                    t[key] = process(kind, value, index)
                    kind, value, index = next_token()
                    if kind == "T_OBJ_END" then
                        depth = depth - 1
                        return t
                    end
                    if kind ~= "T_COMMA" then parse_error("comma or object end", kind, value, index) end
                    kind, value, index = next_token()
                end
            end

            local function array()
                descend()
                local t = {}
                if cfg.array_mt == 1 then
                    setmetatable(t, readonly({__is_cjson_array = true}))
                end
                local kind, value, index = next_token()
                if kind == "T_ARR_END" then
                    depth = depth - 1
                    return t
                end
                local i = 1
                while true do
                    t[i] = process(kind, value, index)
                    kind, value, index = next_token()
                    if kind == "T_ARR_END" then
                        depth = depth - 1
                        return t
                    end
                    if kind ~= "T_COMMA" then parse_error("comma or array end", kind, value, index) end
                    kind, value, index = next_token()
                    i = i + 1
                end
            end

            process = function(kind, value, index)
                if kind == "T_STRING" or kind == "T_NUMBER" or kind == "T_BOOLEAN" then
                    return value
                elseif kind == "T_OBJ_BEGIN" then
                    return object()
                elseif kind == "T_ARR_BEGIN" then
                    return array()
                elseif kind == "T_NULL" then
                    return null
                end
                parse_error("value", kind, value, index)
            end

            local kind, value, index = next_token()
            local result = process(kind, value, index)
            kind, value, index = next_token()
            if kind ~= "T_END" then parse_error("the end", kind, value, index) end
            return result
        end

        local function decode_entry(...)
            if select("#", ...) ~= 1 then arg_fail(1, "expected 1 argument") end
            local s = ...
            local t = type(s)
            if t == "number" then
                s = tostring(s)
            elseif t ~= "string" then
                arg_fail(1, "string expected, got " .. typename_of(1, 1, s))
            end
            if #s >= 2 and (s_byte(s, 1) == 0 or s_byte(s, 2) == 0) then
                fail("JSON parser does not support UTF-16 or UTF-32")
            end
            return decode(s)
        end

        -- -- configuration -------------------------------------------------------------

        local function integer_option(narg, v, key, min, max)
            if v ~= nil then
                local n = tonumber(v)
                if n == nil then arg_fail(narg, "number expected, got " .. type(v)) end
                n = c_int(n)
                if n < min or n > max then
                    -- cjson names argument 1 here whichever argument it was.
                    arg_fail(1, s_format("expected integer between %d and %d", min, max))
                end
                cfg[key] = n
            end
            return cfg[key]
        end

        local function enum_option(narg, v, key, options)
            -- options[1] is off/false, options[2] on/true, options[3] (if any) "null".
            if v ~= nil then
                if type(v) == "boolean" then
                    cfg[key] = v and 1 or 0
                else
                    if type(v) ~= "string" and type(v) ~= "number" then
                        arg_fail(narg, "string expected, got " .. type(v))
                    end
                    local found
                    for i, name in ipairs(options) do
                        if name == tostring(v) then found = i - 1 end
                    end
                    if found == nil then arg_fail(narg, "invalid option '" .. tostring(v) .. "'") end
                    cfg[key] = found
                end
            end
            local value = cfg[key]
            if value == 0 or value == 1 then return value == 1 end
            return options[value + 1]
        end

        local function too_many(max, ...)
            if select("#", ...) > max then arg_fail(max + 1, "found too many arguments") end
        end

        local ONOFF = {"off", "on"}
        local module = {}

        module.encode = encode
        module.decode = decode_entry
        module.encode_sparse_array = function(...)
            too_many(3, ...)
            local convert, ratio, safe = ...
            return enum_option(1, convert, "sparse_convert", ONOFF),
                integer_option(2, ratio, "sparse_ratio", 0, 2147483647),
                integer_option(3, safe, "sparse_safe", 0, 2147483647)
        end
        module.encode_max_depth = function(...)
            too_many(1, ...)
            return integer_option(1, (...), "encode_max_depth", 1, 2147483647)
        end
        module.decode_max_depth = function(...)
            too_many(1, ...)
            return integer_option(1, (...), "decode_max_depth", 1, 2147483647)
        end
        module.encode_number_precision = function(...)
            too_many(1, ...)
            return integer_option(1, (...), "precision", 1, 14)
        end
        module.encode_keep_buffer = function(...)
            too_many(1, ...)
            return enum_option(1, (...), "keep_buffer", ONOFF)
        end
        module.encode_invalid_numbers = function(...)
            too_many(1, ...)
            return enum_option(1, (...), "encode_invalid_numbers", {"off", "on", "null"})
        end
        module.decode_invalid_numbers = function(...)
            too_many(1, ...)
            return enum_option(1, (...), "decode_invalid_numbers", ONOFF)
        end
        if array_mt_known then
            module.decode_array_with_array_mt = function(...)
                too_many(1, ...)
                return enum_option(1, (...), "array_mt", ONOFF)
            end
        end

        for name, fn in next, module do module[name] = entry(fn) end
        module.new = function() return new() end
        module.null = null
        module._NAME = "cjson"
        module._VERSION = "2.1.0"
        return module
    end

    return new()
end
