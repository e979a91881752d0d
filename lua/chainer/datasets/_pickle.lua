-- datasets/_pickle.lua: Python pickles <-> Lua values, for PickleDataset
-- (internal).  Reading is the runtime's parser (runtime/io/pickle.c), which
-- accepts only data; this module turns its values into Lua ones and writes
-- Lua values as pickles Python reads with plain pickle.load.
--
--   Python             Lua (read)                    Lua (write)
--   None               M.None (a sentinel)           M.None
--   bool               boolean                       boolean
--   int                number; int64_t cdata beyond  a whole number (|x| <= 2^53),
--                      +-2^53 (exact)                int64_t / uint64_t cdata
--   float              number                        other numbers; M.float(x)
--   str                string                        a string that is valid UTF-8
--   bytes, bytearray   string                        other strings; M.bytes(s)
--   tuple, list        Lua list                      a Lua list (as a tuple); M.list(t)
--   dict               table                         a table with other keys
--   numpy array        tensor (dtype and shape kept; uint16/uint32 widen as in .npy)
--   numpy scalar       number (bool for numpy.bool_) (write a 0-d tensor for an array)
local T = require 'chainer.tensor'
local ffi, C, check = T.ffi, T.C, T.check

local M = {}

M.None = setmetatable({}, { __tostring = function() return 'None' end, __metatable = 'None' })

-- Marks that choose the Python type where a Lua value fits several.
local BYTES, FLOAT, LIST = {}, {}, {}
local function mark(kind, value) return setmetatable({ value = value }, kind) end
function M.bytes(s)
  if type(s) ~= 'string' then error('pickle bytes(s): s must be a string (got ' .. type(s) .. ')', 2) end
  return mark(BYTES, s)
end
function M.float(x)
  if type(x) ~= 'number' then error('pickle float(x): x must be a number (got ' .. type(x) .. ')', 2) end
  return mark(FLOAT, x)
end
function M.list(t)
  if type(t) ~= 'table' or getmetatable(t) ~= nil then
    error('pickle list(t): t must be a plain Lua list (got ' .. type(t) .. ')', 2)
  end
  return mark(LIST, t)
end

---------------------------------------------------------------------------
-- reading
---------------------------------------------------------------------------
-- Python refuses to pickle deeper than its recursion limit (about 1000);
-- deeper nesting in a file is damage, and would overflow Lua's C stack.
local MAX_DEPTH = 1000
local K_NONE, K_BOOL, K_INT, K_FLOAT, K_STR, K_BYTES, K_TUPLE, K_LIST, K_DICT, K_TENSOR =
  C.CH_PICKLE_NONE, C.CH_PICKLE_BOOL, C.CH_PICKLE_INT, C.CH_PICKLE_FLOAT, C.CH_PICKLE_STR, C.CH_PICKLE_BYTES,
  C.CH_PICKLE_TUPLE, C.CH_PICKLE_LIST, C.CH_PICKLE_DICT, C.CH_PICKLE_TENSOR
local BIG = 9007199254740992LL   -- 2^53: larger ints stay int64_t cdata
local len_box = ffi.new('size_t[1]')
local KIND_NAMES = { [K_TUPLE] = 'a tuple', [K_LIST] = 'a list', [K_DICT] = 'a dict', [K_TENSOR] = 'a NumPy array',
  [K_NONE] = 'None' }

local convert

local function int_value(p, v)
  local i = C.ch_pickle_int(p, v)
  if i >= -BIG and i <= BIG then return tonumber(i) end
  return i
end

local function dict_key(p, k, what)
  local kind = C.ch_pickle_kind(p, k)
  if kind == K_STR or kind == K_BYTES then
    return ffi.string(C.ch_pickle_string(p, k, len_box), len_box[0])
  elseif kind == K_INT then
    local i = int_value(p, k)
    if type(i) ~= 'number' then error(what .. ': a dict key beyond +-2^53 has no exact Lua table key', 0) end
    return i
  elseif kind == K_FLOAT then
    local f = C.ch_pickle_float(p, k)
    if f ~= f then error(what .. ': a dict key is NaN, which a Lua table cannot hold', 0) end
    return f
  elseif kind == K_BOOL then
    return C.ch_pickle_int(p, k) ~= 0
  end
  error(string.format('%s: a dict key is %s; Lua tables take string, number and boolean keys', what,
    KIND_NAMES[kind] or 'of an unknown kind'), 0)
end

function convert(p, v, seen, depth, what)
  local kind = C.ch_pickle_kind(p, v)
  if kind == K_NONE then return M.None
  elseif kind == K_BOOL then return C.ch_pickle_int(p, v) ~= 0
  elseif kind == K_INT then return int_value(p, v)
  elseif kind == K_FLOAT then return C.ch_pickle_float(p, v)
  elseif kind == K_STR or kind == K_BYTES then return ffi.string(C.ch_pickle_string(p, v, len_box), len_box[0])
  end
  local done = seen[v]   -- shared references (and cycles) stay shared
  if done ~= nil then return done end
  if kind == K_TENSOR then
    local t = T.wrap_borrowed(C.ch_pickle_tensor(p, v))
    seen[v] = t
    return t
  end
  if depth >= MAX_DEPTH then
    error(string.format('%s: containers nested more than %d deep', what, MAX_DEPTH), 0)
  end
  local out = {}
  seen[v] = out
  local n = tonumber(C.ch_pickle_length(p, v))
  if kind == K_DICT then
    for i = 0, n - 1 do
      local key = dict_key(p, C.ch_pickle_item(p, v, 2 * i), what)
      out[key] = convert(p, C.ch_pickle_item(p, v, 2 * i + 1), seen, depth + 1, what)
    end
  else
    for i = 0, n - 1 do out[i + 1] = convert(p, C.ch_pickle_item(p, v, i), seen, depth + 1, what) end
  end
  return out
end

-- The Lua value of a parsed pickle (a ch_pickle*; the caller frees it).
function M.decode(p, what)
  return convert(p, C.ch_pickle_root(p), {}, 0, what)
end

-- The value of one pickle held in a Lua string (the rest must be empty).
function M.loads(s, what)
  what = what or 'pickle'
  local box, used = ffi.new('ch_pickle*[1]'), ffi.new('size_t[1]')
  check(C.ch_pickle_parse(s, #s, 0, what, box, used))
  local p = box[0]
  if used[0] ~= #s then
    C.ch_pickle_free(p)
    error(string.format('%s: %d bytes follow the pickle', what, #s - tonumber(used[0])), 0)
  end
  local ok, v = pcall(M.decode, p, what)
  C.ch_pickle_free(p)
  if not ok then error(v, 0) end
  return v
end

---------------------------------------------------------------------------
-- writing
---------------------------------------------------------------------------
local num_bytes = ffi.new('union { double d; int64_t i; uint64_t u; uint8_t b[8]; }')

local function le(v, n)   -- v: a non-negative number below 2^(8n)
  local s = {}
  for k = 1, n do s[k] = string.char(v % 256); v = math.floor(v / 256) end
  return table.concat(s)
end

-- Python's LONG1: the shortest little-endian two's complement.
local function long1(i, unsigned)
  if unsigned then num_bytes.u = i else num_bytes.i = i end
  local b = {}
  for k = 0, 7 do b[k + 1] = num_bytes.b[k] end
  if unsigned and b[8] >= 128 then b[9] = 0 end
  while #b > 1 and ((b[#b] == 0 and b[#b - 1] < 128) or (b[#b] == 255 and b[#b - 1] >= 128)) do b[#b] = nil end
  local s = {}
  for k = 1, #b do s[k] = string.char(b[k]) end
  return '\138' .. string.char(#b) .. table.concat(s)
end

local function put_int(out, i)   -- i: a whole number or int64_t/uint64_t cdata
  if type(i) == 'number' then
    if i >= 0 and i < 256 then out[#out + 1] = 'K' .. string.char(i) return end
    if i >= 0 and i < 65536 then out[#out + 1] = 'M' .. le(i, 2) return end
    if i >= -2147483648 and i < 2147483648 then out[#out + 1] = 'J' .. le(i % 4294967296, 4) return end
    out[#out + 1] = long1(i)
    return
  end
  out[#out + 1] = long1(i, ffi.istype('uint64_t', i))
end

local function put_float(out, x)
  num_bytes.d = x
  local s = {}
  for k = 0, 7 do s[8 - k] = string.char(num_bytes.b[k]) end   -- big-endian
  out[#out + 1] = 'G' .. table.concat(s)
end

local function put_str(out, s, proto)
  if #s < 256 and proto >= 4 then out[#out + 1] = '\140' .. string.char(#s) .. s return end
  if #s >= 4294967296 then error('pickle: a string of 4 GiB or more', 0) end
  out[#out + 1] = 'X' .. le(#s, 4) .. s
end

local function put_bytes(out, s, proto)
  if proto == 2 then   -- Python 3's protocol 2 spelling: bytes() or codecs.encode(latin-1 text)
    if s == '' then out[#out + 1] = 'c__builtin__\nbytes\n)R' return end
    out[#out + 1] = 'c_codecs\nencode\n'
    local text = s:gsub('[\128-\255]', function(c)
      local b = c:byte()
      return string.char(192 + math.floor(b / 64), 128 + b % 64)
    end)
    put_str(out, text, proto)
    put_str(out, 'latin1', proto)
    out[#out + 1] = '\134R'
    return
  end
  if #s < 256 then out[#out + 1] = 'C' .. string.char(#s) .. s return end
  if #s >= 4294967296 then error('pickle: bytes of 4 GiB or more', 0) end
  out[#out + 1] = 'B' .. le(#s, 4) .. s
end

-- Is s valid UTF-8 (what Python's str can hold)?
local function is_utf8(s)
  local i, n = 1, #s
  while i <= n do
    local c = s:byte(i)
    local k
    if c < 0x80 then k = 0
    elseif c >= 0xC2 and c <= 0xDF then k = 1
    elseif c >= 0xE0 and c <= 0xEF then k = 2
    elseif c >= 0xF0 and c <= 0xF4 then k = 3
    else return false end
    if i + k > n then return false end
    for j = 1, k do
      local d = s:byte(i + j)
      if d < 0x80 or d > 0xBF then return false end
    end
    if k == 2 then
      local d = s:byte(i + 1)
      if (c == 0xE0 and d < 0xA0) or (c == 0xED and d > 0x9F) then return false end   -- overlong, surrogates
    elseif k == 3 then
      local d = s:byte(i + 1)
      if (c == 0xF0 and d < 0x90) or (c == 0xF4 and d > 0x8F) then return false end
    end
    i = i + k + 1
  end
  return true
end

local NUMPY_TYPE = { bool = 'b1', int8 = 'i1', uint8 = 'u1', int16 = 'i2', int32 = 'i4', int64 = 'i8',
  float16 = 'f2', float32 = 'f4', float64 = 'f8' }

local function put_shape(out, shape)
  if #shape == 0 then out[#out + 1] = ')' return end
  out[#out + 1] = '('
  for _, d in ipairs(shape) do put_int(out, d) end
  out[#out + 1] = 't'
end

-- numpy.dtype(type, False, True) with its byte order set by BUILD, as NumPy writes it.
local function put_dtype(out, dtype, proto)
  local code = NUMPY_TYPE[dtype]
  out[#out + 1] = 'cnumpy\ndtype\n'
  put_str(out, code, proto)
  out[#out + 1] = '\137\136\135R(K\3'
  put_str(out, code:sub(2) == '1' and '|' or '<', proto)
  out[#out + 1] = 'NNNJ\255\255\255\255J\255\255\255\255K\0tb'
end

-- A tensor as NumPy pickles an ndarray: protocol 5's _frombuffer with an
-- in-band buffer, else _reconstruct + __setstate__.
local function put_tensor(out, t, proto)
  if t.ptr.dev ~= -1 then t = t:to_cpu() end
  local c = t:contiguous()
  local data = ffi.string(C.ch_tensor_ptr(c.ptr), c.nbytes)
  if proto >= 5 then
    out[#out + 1] = 'cnumpy.core.numeric\n_frombuffer\n(\150' .. le(#data, 8) .. data
    put_dtype(out, t.dtype, proto)
    put_shape(out, t.shape)
    put_str(out, 'C', proto)
    out[#out + 1] = 'tR'
    return
  end
  out[#out + 1] = 'cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\0\133'
  put_bytes(out, 'b', proto)
  out[#out + 1] = '\135R(K\1'
  put_shape(out, t.shape)
  put_dtype(out, t.dtype, proto)
  out[#out + 1] = '\137'
  put_bytes(out, data, proto)
  out[#out + 1] = 'tb'
end

local KEY_ORDER = { boolean = 1, number = 2, string = 3 }
local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return KEY_ORDER[ta] < KEY_ORDER[tb] end
  if ta == 'boolean' then return (not a) and b end
  return a < b
end

local put

local function put_table(out, x, proto, depth, path)
  if path[x] then error('pickle: a table contains itself (pickle datasets hold trees of values)', 0) end
  if depth >= MAX_DEPTH then error(string.format('pickle: tables nested more than %d deep', MAX_DEPTH), 0) end
  path[x] = true
  local n, count = #x, 0
  for _ in pairs(x) do count = count + 1 end
  if count == n then   -- a list: Python tuple
    if n == 0 then out[#out + 1] = ')' else
      out[#out + 1] = '('
      for i = 1, n do put(out, x[i], proto, depth + 1, path) end
      out[#out + 1] = 't'
    end
  else                 -- a dict, keys in a fixed order
    local keys = {}
    for k in pairs(x) do
      if not KEY_ORDER[type(k)] then
        error(string.format('pickle: a table key of type %s (dict keys must be strings, numbers or booleans)',
          type(k)), 0)
      end
      keys[#keys + 1] = k
    end
    table.sort(keys, key_less)
    out[#out + 1] = '}('
    for _, k in ipairs(keys) do
      put(out, k, proto, depth + 1, path)
      put(out, x[k], proto, depth + 1, path)
    end
    out[#out + 1] = 'u'
  end
  path[x] = nil
end

function put(out, x, proto, depth, path)
  local tx = type(x)
  if x == M.None then out[#out + 1] = 'N'
  elseif tx == 'boolean' then out[#out + 1] = x and '\136' or '\137'
  elseif tx == 'number' then
    local whole = x == math.floor(x) and x >= -2 ^ 53 and x <= 2 ^ 53 and not (x == 0 and 1 / x < 0)   -- -0.0 stays a float
    if whole then put_int(out, x) else put_float(out, x) end
  elseif tx == 'string' then
    if is_utf8(x) then put_str(out, x, proto) else put_bytes(out, x, proto) end
  elseif T.is_tensor(x) then put_tensor(out, x, proto)
  elseif tx == 'cdata' and (ffi.istype('int64_t', x) or ffi.istype('uint64_t', x)) then put_int(out, x)
  elseif tx == 'table' then
    local mt = getmetatable(x)
    if mt == BYTES then put_bytes(out, x.value, proto)
    elseif mt == FLOAT then put_float(out, x.value)
    elseif mt == LIST then
      if path[x.value] then error('pickle: a table contains itself (pickle datasets hold trees of values)', 0) end
      path[x.value] = true
      out[#out + 1] = ']'
      if #x.value > 0 then
        out[#out + 1] = '('
        for i = 1, #x.value do put(out, x.value[i], proto, depth + 1, path) end
        out[#out + 1] = 'e'
      end
      path[x.value] = nil
    elseif mt ~= nil then
      error(string.format('pickle: cannot write %s (a table with a metatable: Variables, Links and other objects '
        .. 'are not data; write their tensors)', x._is_variable and 'a Variable' or 'an object'), 0)
    else
      put_table(out, x, proto, depth, path)
    end
  else
    error(string.format('pickle: cannot write a %s (writable: numbers, booleans, strings, tables, tensors, None)',
      tx), 0)
  end
end

-- The pickle of x at `proto` (2..5) as a Lua string.
function M.dumps(x, proto)
  local out = { '\128' .. string.char(proto) }
  put(out, x, proto, 0, {})
  out[#out + 1] = '.'
  return table.concat(out)
end

return M
