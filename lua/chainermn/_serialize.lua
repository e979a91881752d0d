-- chainermn/_serialize.lua: Lua values <-> byte strings for the *_obj
-- collectives (ChainerMN pickles; we write a small self-describing format).
--
-- Supported: nil, booleans, numbers (exact, as IEEE doubles), strings,
-- tables without cycles (keys and values of these kinds) and CPU tensors
-- (dtype, shape and the raw bytes).  Anything else is an error naming the
-- path inside the value.
local ffi = require 'ffi'
local T = require 'chainer.tensor'

local M = {}

local dbl = ffi.new('double[1]')
local function put_number(out, x) dbl[0] = x; out[#out + 1] = ffi.string(dbl, 8) end

local function encode(v, out, path, seen)
  local tv = type(v)
  if tv == 'nil' then out[#out + 1] = 'z'
  elseif tv == 'boolean' then out[#out + 1] = v and 't' or 'f'
  elseif tv == 'number' then out[#out + 1] = 'n'; put_number(out, v)
  elseif tv == 'string' then out[#out + 1] = 's'; put_number(out, #v); out[#out + 1] = v
  elseif T.is_tensor(v) then
    if v.ptr.dev >= 0 then v = v:to_cpu() end
    v = v:contiguous()
    local shape = v.shape
    out[#out + 1] = 'T'; out[#out + 1] = v.dtype .. '\0'; put_number(out, #shape)
    for i = 1, #shape do put_number(out, shape[i]) end
    out[#out + 1] = ffi.string(ffi.cast('char *', v.ptr.data) + v.ptr.offset * v.itemsize, v.nbytes)
  elseif tv == 'table' then
    if seen[v] then error(string.format('chainermn: cannot send %s: the table contains itself', path), 0) end
    seen[v] = true
    out[#out + 1] = '{'
    for k, x in pairs(v) do
      if type(k) ~= 'string' and type(k) ~= 'number' and type(k) ~= 'boolean' then
        error(string.format('chainermn: cannot send %s: a key of type %s', path, type(k)), 0)
      end
      encode(k, out, path, seen)
      encode(x, out, path .. '[' .. tostring(k) .. ']', seen)
    end
    out[#out + 1] = '}'
    seen[v] = nil
  else
    error(string.format('chainermn: cannot send %s: a %s (expected nil, boolean, number, string, table or tensor)',
      path, tv), 0)
  end
end

-- encode(v) -> string
function M.encode(v)
  local out = {}
  encode(v, out, 'the value', {})
  return table.concat(out)
end

-- decode(s) -> value
function M.decode(s)
  local pos = 1
  local function number()
    ffi.copy(dbl, s:sub(pos, pos + 7), 8); pos = pos + 8
    return dbl[0]
  end
  local function value()
    local tag = s:sub(pos, pos); pos = pos + 1
    if tag == 'z' then return nil
    elseif tag == 't' then return true
    elseif tag == 'f' then return false
    elseif tag == 'n' then return number()
    elseif tag == 's' then
      local n = number(); local str = s:sub(pos, pos + n - 1); pos = pos + n
      return str
    elseif tag == 'T' then
      local stop = s:find('\0', pos, true)
      local dtype = s:sub(pos, stop - 1); pos = stop + 1
      local shape = {}
      for i = 1, number() do shape[i] = number() end
      local t = T.empty(shape, dtype)
      local nbytes = t.nbytes
      ffi.copy(ffi.cast('char *', t.ptr.data) + t.ptr.offset * t.itemsize, s:sub(pos, pos + nbytes - 1), nbytes)
      pos = pos + nbytes
      return t
    elseif tag == '{' then
      local t = {}
      while s:sub(pos, pos) ~= '}' do
        local k = value()
        t[k] = value()
      end
      pos = pos + 1
      return t
    end
    error('chainermn: corrupt message (tag ' .. string.format('%q', tag) .. ' at byte ' .. (pos - 1) .. ')', 0)
  end
  return value()
end

return M
