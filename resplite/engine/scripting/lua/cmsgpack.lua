-- cmsgpack as Redis ships it (lua-cmsgpack 0.4.0): pack, unpack, unpack_one, unpack_limit.
-- Numbers that are whole and fit 64 bits are packed as the smallest integer type, others as
-- a float when the float holds them exactly, else a double (both done by Python helpers);
-- a table whose keys are exactly 1..n is an array, any other a map; tables nested 16 deep
-- are packed as nil. Unpacking keeps lua-cmsgpack's quirks: 0x90..0x9f are arrays, 64-bit
-- unsigned values past 2^63 come back negative.

return function(helpers, py)
    local type, select, pcall, error, next = type, select, pcall, error, next
    local getmetatable, setmetatable, tostring, tonumber, unpack =
        getmetatable, setmetatable, tostring, tonumber, unpack
    local s_byte, s_char, s_sub, s_format = string.byte, string.char, string.sub, string.format
    local t_concat = table.concat
    local floor = math.floor
    local debug_getinfo = helpers.getinfo
    local mp_number, mp_decode_number = py.mp_number, py.mp_decode_number

    local MAX_NESTING = 16

    local function pack_n(...)
        return {n = select("#", ...), ...}
    end

    local Failure = {}
    local function fail(msg, narg)
        error(setmetatable({msg = msg, narg = narg}, Failure), 0)
    end

    local function entry(fn)
        return function(...)
            local results = pack_n(pcall(fn, ...))
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

    -- -- packing -------------------------------------------------------------------------

    local function header(len, short, short_max, b8, b16, b32)
        if len <= short_max then return s_char(short + len) end
        if b8 and len <= 0xff then return s_char(b8, len) end
        if len <= 0xffff then return s_char(b16, floor(len / 256), len % 256) end
        return s_char(b32, floor(len / 16777216) % 256, floor(len / 65536) % 256,
            floor(len / 256) % 256, len % 256)
    end

    local encode

    local function is_array(t)
        local count, max = 0, 0
        local k = next(t)
        while k ~= nil do
            -- (int)k == k with k > 0: whole and within a C int.
            if type(k) ~= "number" or k <= 0 or k > 2147483647 or floor(k) ~= k then
                return false
            end
            if k > max then max = k end
            count = count + 1
            k = next(t, k)
        end
        return max == count
    end

    encode = function(v, level, out)
        local t = type(v)
        if t == "table" and level == MAX_NESTING then t = "nil" end
        if t == "string" then
            out[#out + 1] = header(#v, 0xa0, 31, 0xd9, 0xda, 0xdb)
            out[#out + 1] = v
        elseif t == "boolean" then
            out[#out + 1] = v and "\195" or "\194"
        elseif t == "number" then
            if v >= 0 and v < 128 and floor(v) == v then
                out[#out + 1] = s_char(v)
            else
                out[#out + 1] = mp_number(v)
            end
        elseif t == "table" then
            if is_array(v) then
                local len = #v
                out[#out + 1] = header(len, 0x90, 15, nil, 0xdc, 0xdd)
                for j = 1, len do encode(v[j], level + 1, out) end
            else
                local len = 0
                local k = next(v)
                while k ~= nil do
                    len = len + 1
                    k = next(v, k)
                end
                out[#out + 1] = header(len, 0x80, 15, nil, 0xde, 0xdf)
                local key, val = next(v)
                while key ~= nil do
                    encode(key, level + 1, out)
                    encode(val, level + 1, out)
                    key, val = next(v, key)
                end
            end
        else
            out[#out + 1] = "\192"
        end
    end

    local function pack(...)
        local nargs = select("#", ...)
        if nargs == 0 then fail("MessagePack pack needs input.", 0) end
        local out = {}
        for i = 1, nargs do
            encode((select(i, ...)), 0, out)
        end
        return t_concat(out)
    end

    -- -- unpacking -----------------------------------------------------------------------

    local EOF, BADFMT = 1, 2

    -- Decodes one value at s[pos]; answers value, next position, or nil, pos, error kind.
    local decode

    local function need(s, pos, n)
        return pos + n - 1 <= #s
    end

    local function decode_array(s, pos, len)
        local t = {}
        for i = 1, len do
            local v, np, err = decode(s, pos)
            if err then return nil, np, err end
            t[i] = v
            pos = np
        end
        return t, pos
    end

    local function decode_map(s, pos, len)
        local t = {}
        for _ = 1, len do
            local k, np, err = decode(s, pos)
            if err then return nil, np, err end
            local v
            v, np, err = decode(s, np)
            if err then return nil, np, err end
            -- lua_settable's own complaints, raised without a position as the C code does.
            if k == nil then error("table index is nil", 0) end
            if k ~= k then error("table index is NaN", 0) end
            t[k] = v
            pos = np
        end
        return t, pos
    end

    local function be(s, pos, n)
        local value = 0
        for i = pos, pos + n - 1 do value = value * 256 + s_byte(s, i) end
        return value
    end

    local NUMBER_SIZES = {
        [0xcc] = 1, [0xd0] = 1, [0xcd] = 2, [0xd1] = 2, [0xce] = 4, [0xd2] = 4,
        [0xcf] = 8, [0xd3] = 8, [0xca] = 4, [0xcb] = 8,
    }

    decode = function(s, pos)
        if not need(s, pos, 1) then return nil, pos, EOF end
        local c = s_byte(s, pos)
        local size = NUMBER_SIZES[c]
        if size then
            if not need(s, pos, 1 + size) then return nil, pos, EOF end
            if c == 0xcc then return s_byte(s, pos + 1), pos + 2 end
            if c == 0xcd then return be(s, pos + 1, 2), pos + 3 end
            if c == 0xce then return be(s, pos + 1, 4), pos + 5 end
            return mp_decode_number(c, s_sub(s, pos + 1, pos + size)), pos + 1 + size
        end
        if c == 0xc0 then return nil, pos + 1 end
        if c == 0xc3 then return true, pos + 1 end
        if c == 0xc2 then return false, pos + 1 end
        if c == 0xd9 or c == 0xda or c == 0xdb then
            local n = c == 0xd9 and 1 or (c == 0xda and 2 or 4)
            if not need(s, pos, 1 + n) then return nil, pos, EOF end
            local len = be(s, pos + 1, n)
            local start = pos + 1 + n
            if not need(s, start, len) then return nil, pos, EOF end
            return s_sub(s, start, start + len - 1), start + len
        end
        if c == 0xdc or c == 0xdd then
            local n = c == 0xdc and 2 or 4
            if not need(s, pos, 1 + n) then return nil, pos, EOF end
            return decode_array(s, pos + 1 + n, be(s, pos + 1, n))
        end
        if c == 0xde or c == 0xdf then
            local n = c == 0xde and 2 or 4
            if not need(s, pos, 1 + n) then return nil, pos, EOF end
            return decode_map(s, pos + 1 + n, be(s, pos + 1, n))
        end
        if c < 0x80 then return c, pos + 1 end
        if c >= 0xe0 then return c - 256, pos + 1 end
        if c >= 0xa0 and c < 0xc0 then
            local len = c - 0xa0
            if not need(s, pos, 1 + len) then return nil, pos, EOF end
            return s_sub(s, pos + 1, pos + len), pos + 1 + len
        end
        if c >= 0x90 and c < 0xa0 then return decode_array(s, pos + 1, c - 0x90) end
        if c >= 0x80 and c < 0x90 then return decode_map(s, pos + 1, c - 0x80) end
        return nil, pos, BADFMT
    end

    local function check_string(n, s)
        local t = type(s)
        if t == "number" then return tostring(s) end
        if t ~= "string" then
            fail("string expected, got " .. helpers.typename_of(n, 1, s), 1)
        end
        return s
    end

    local function integer_arg(narg, n, v, default)
        if narg > n or v == nil then return default end
        local num = tonumber(v)
        if num == nil then fail("number expected, got " .. type(v), narg) end
        return num >= 0 and floor(num) or -floor(-num)
    end

    local function unpack_full(s, limit, offset)
        local len = #s
        if offset < 0 or limit < 0 then
            fail(s_format("Invalid request to unpack with offset of %d and limit of %d.",
                offset, len))
        elseif offset > len then
            fail(s_format("Start offset %d greater than input length %d.", offset, len))
        end
        local decode_all = limit == 0 and offset == 0
        if decode_all then limit = 2147483647 end
        local results = {}
        local count = 0
        local pos = offset + 1
        while pos <= len and count < limit do
            local v, np, err = decode(s, pos)
            if err == EOF then fail("Missing bytes in input.") end
            if err == BADFMT then fail("Bad data format in input.") end
            count = count + 1
            results[count] = v
            pos = np
        end
        if decode_all then return unpack(results, 1, count) end
        local next_offset = pos > len and -1 or pos - 1
        return next_offset, unpack(results, 1, count)
    end

    local function unpack_all(...)
        return unpack_full(check_string(select("#", ...), (...)), 0, 0)
    end

    local function unpack_one(...)
        local n = select("#", ...)
        local s, offset = ...
        s = check_string(n, s)
        return unpack_full(s, 1, integer_arg(2, n, offset, 0))
    end

    local function unpack_limit(...)
        local n = select("#", ...)
        local s, limit, offset = ...
        s = check_string(n, s)
        if n < 2 then fail("number expected, got no value", 2) end
        limit = integer_arg(2, n, limit, nil)
        if limit == nil then fail("number expected, got nil", 2) end
        return unpack_full(s, limit, integer_arg(3, n, offset, 0))
    end

    local module = {}
    module.pack = entry(pack)
    module.unpack = entry(unpack_all)
    module.unpack_one = entry(unpack_one)
    module.unpack_limit = entry(unpack_limit)
    module._NAME = "cmsgpack"
    module._VERSION = "lua-cmsgpack 0.4.0"
    module._COPYRIGHT = "Copyright (C) 2012, Salvatore Sanfilippo"
    module._DESCRIPTION = "MessagePack C implementation for Lua"
    return module
end
