-- A script's return value as reply bytes, the way Redis's luaReplyToRedisReply writes it:
-- tables are checked for err, ok, double, big_number, verbatim_string, map and set (raw
-- reads, in that order), anything else is an array up to the first nil; numbers are cut to
-- integers; booleans follow the script's protocol (redis.setresp) and the caller's.
-- Returns the bytes and a list of the nested error texts whose statistics are still due.
--
-- Nesting is bounded as Redis bounds it: its converter recurses in C and, before each value,
-- asks Lua for four more stack slots (lua_checkstack), which fails once the stack would pass
-- LUAI_MAXCSTACK (8000) slots. That value is then written as the error "reached lua stack
-- limit" and the conversion goes on with the next one. `height` is that stack's height with
-- the value on top, slot for slot as Redis's converter fills it: the error handler and the
-- result to begin with (2), one more for an array's element, three for a map's value or a
-- set's member (the inner table, the key, the value or the key's copy), four for a map's key.

return function(helpers, py, hook)
    local type, next, rawget = type, next, rawget
    local s_format, s_gsub, s_sub = string.format, string.gsub, string.sub
    local t_concat = table.concat
    local huge = math.huge

    local MAX_HEIGHT = 8000 - 4  -- LUAI_MAXCSTACK, less the four slots Redis asks for
    local STACK_LIMIT = "ERR reached lua stack limit"

    local function flat(s)
        return (s_gsub(s, "[\r\n]", " "))
    end

    -- Redis 7.2 on prints a double as d2string does (py.d2string); 7.0 with "%.17g".
    local d2string = py.d2string
    local function double_text(d)
        if d2string then
            -- Lua hands -0.0 over as the integer 0: its sign is read here.
            if d == 0 then return 1 / d < 0 and "-0" or "0" end
            return d2string(d)
        end
        if d == huge then return "inf" end
        if d == -huge then return "-inf" end
        return s_format("%.17g", d)
    end

    -- The pieces written so far: `out` is filled at out[n + 1], as `#out` costs a search of
    -- the table's border for every piece.
    local n = 0

    -- The C writer of an array's strings, numbers and booleans (vm.py's reply_encoder; nil
    -- where it is not built). No Lua instruction runs while it writes, so the count hook
    -- cannot fire there: `hook` is called after every WORK elements it wrote, as often as
    -- the count hook runs while Lua writes them, so that a kill still ends the writing.
    local encode_array = py.encode_array
    local WORK = 16384
    local work = 0

    local function encode(v, out, cresp, sresp, errors, height)
        if height > MAX_HEIGHT then
            n = n + 1
            out[n] = "-" .. STACK_LIMIT .. "\r\n"
            errors[#errors + 1] = STACK_LIMIT
            return
        end
        local t = type(v)
        if t == "string" then
            out[n + 1] = "$" .. #v .. "\r\n"
            out[n + 2] = v
            out[n + 3] = "\r\n"
            n = n + 3
        elseif t == "number" then
            n = n + 1
            out[n] = s_format(":%d\r\n", v)
        elseif t == "boolean" then
            if sresp == 2 then
                if v then
                    n = n + 1
                    out[n] = ":1\r\n"
                else
                    n = n + 1
                    out[n] = cresp == 3 and "_\r\n" or "$-1\r\n"
                end
            elseif cresp == 3 then
                n = n + 1
                out[n] = v and "#t\r\n" or "#f\r\n"
            else
                n = n + 1
                out[n] = v and ":1\r\n" or ":0\r\n"
            end
        elseif t == "table" then
            local e = rawget(v, "err")
            if type(e) == "string" then
                n = n + 1
                out[n] = "-" .. flat(e) .. "\r\n"
                -- An error already counted (a redis.pcall's) is noted as false: not counted
                -- again, but the reply still holds an error (the script's call failed).
                if not v.ignore_error_stats_update then errors[#errors + 1] = e
                else errors[#errors + 1] = false end
                return
            end
            local ok = rawget(v, "ok")
            if type(ok) == "string" then
                n = n + 1
                out[n] = "+" .. flat(ok) .. "\r\n"
                return
            end
            local d = rawget(v, "double")
            if type(d) == "number" then
                local text = double_text(d)
                if cresp == 3 then
                    n = n + 1
                    out[n] = "," .. text .. "\r\n"
                else
                    n = n + 1
                    out[n] = "$" .. #text .. "\r\n" .. text .. "\r\n"
                end
                return
            end
            local big = rawget(v, "big_number")
            if type(big) == "string" then
                big = flat(big)
                if cresp == 3 then
                    n = n + 1
                    out[n] = "(" .. big .. "\r\n"
                else
                    n = n + 1
                    out[n] = "$" .. #big .. "\r\n" .. big .. "\r\n"
                end
                return
            end
            local verb = rawget(v, "verbatim_string")
            if type(verb) == "table" then
                local format = rawget(verb, "format")
                local text = rawget(verb, "string")
                if type(format) == "string" and type(text) == "string" then
                    if cresp == 3 then
                        -- Three characters of format, padded with spaces if shorter.
                        local f = s_sub(format .. "   ", 1, 3)
                        local nul = f:find("\0", 1, true)
                        if nul then f = s_sub(f, 1, nul - 1) .. s_sub("   ", nul, 3) end
                        n = n + 1
                        out[n] = "=" .. (#text + 4) .. "\r\n" .. f .. ":" .. text .. "\r\n"
                    else
                        n = n + 1
                        out[n] = "$" .. #text .. "\r\n" .. text .. "\r\n"
                    end
                    return
                end
            end
            local map = rawget(v, "map")
            if type(map) == "table" then
                n = n + 1
                local at = n
                out[at] = ""
                local count = 0
                local k, val = next(map)
                while k ~= nil do
                    encode(k, out, cresp, sresp, errors, height + 4)
                    encode(val, out, cresp, sresp, errors, height + 3)
                    count = count + 1
                    k, val = next(map, k)
                end
                out[at] = cresp == 3 and ("%" .. count .. "\r\n")
                    or ("*" .. (2 * count) .. "\r\n")
                return
            end
            local set = rawget(v, "set")
            if type(set) == "table" then
                n = n + 1
                local at = n
                out[at] = ""
                local count = 0
                local k = next(set)
                while k ~= nil do
                    encode(k, out, cresp, sresp, errors, height + 3)
                    count = count + 1
                    k = next(set, k)
                end
                out[at] = cresp == 3 and ("~" .. count .. "\r\n") or ("*" .. count .. "\r\n")
                return
            end
            n = n + 1
            local at = n
            out[at] = ""
            -- Strings and integers, most of what a large array holds, are written here
            -- rather than by a call each.
            local inner = height + 1
            local count = 0
            if encode_array ~= nil and inner <= MAX_HEIGHT then
                while true do
                    local piece, done, stop = encode_array(v, count + 1, cresp, sresp)
                    if done > 0 then
                        n = n + 1
                        out[n] = piece
                        count = count + done
                        work = work + done
                        if work >= WORK then
                            work = work - WORK
                            hook()
                        end
                    end
                    if stop == 0 then break end
                    if stop == 1 then
                        -- Tables (or functions...) are written here, as many as come in a
                        -- row: the C writer is called again at the next plain value.
                        local item, ti
                        repeat
                            count = count + 1
                            encode(rawget(v, count), out, cresp, sresp, errors, inner)
                            item = rawget(v, count + 1)
                            ti = type(item)
                        until ti ~= "table" and ti ~= "function" and ti ~= "thread"
                            and ti ~= "userdata"
                        if item == nil then break end
                    end
                end
                out[at] = "*" .. count .. "\r\n"
                return
            end
            local item = rawget(v, 1)
            while item ~= nil do
                local ti = type(item)
                if ti == "string" and inner <= MAX_HEIGHT then
                    -- Three pieces: the value is not copied into a new Lua string, and a
                    -- header is one Lua already holds for most lengths.
                    out[n + 1] = "$" .. #item .. "\r\n"
                    out[n + 2] = item
                    out[n + 3] = "\r\n"
                    n = n + 3
                elseif ti == "number" and inner <= MAX_HEIGHT then
                    n = n + 1
                    out[n] = s_format(":%d\r\n", item)
                else
                    encode(item, out, cresp, sresp, errors, inner)
                end
                count = count + 1
                item = rawget(v, count + 1)
            end
            out[at] = "*" .. count .. "\r\n"
        else
            n = n + 1
            out[n] = cresp == 3 and "_\r\n" or "$-1\r\n"
        end
    end

    return function(v, cresp, sresp)
        local out, errors = {}, {}
        n = 0
        encode(v, out, cresp, sresp, errors, 2)
        n = 0
        return t_concat(out), errors[1] ~= nil and errors or nil
    end
end
