-- iterators/value_codec.lua: dataset examples <-> bytes, for handing
-- examples from MultiprocessIterator's worker processes to the parent
-- (internal).
--
-- Supported values: nil, booleans, numbers, int64/uint64 cdata, strings,
-- plain tables (no metatable, no cycles; keys of those kinds) and CPU
-- tensors (dtype, shape, raw bytes: a tensor costs one memcpy each way).
-- Anything else (functions, class instances, GPU tensors) is refused with a
-- message naming where inside the example it sits.
--
-- An Encoder writes into a caller's memory block (a shared-memory slot) and
-- moves to a growing private buffer when the block is too small, so the
-- caller can tell whether the bytes landed in the block or must be sent
-- some other way.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local C = T.C

local M = {}

local NIL, FALSE, TRUE, NUMBER, STRING, TABLE, TENSOR, INT64, UINT64 = 0, 1, 2, 3, 4, 5, 6, 7, 8

local u8p = ffi.typeof('uint8_t *')
local f64p, i64p, u64p = ffi.typeof('double *'), ffi.typeof('int64_t *'), ffi.typeof('uint64_t *')
local u32p = ffi.typeof('uint32_t *')
local buffer_type = ffi.typeof('uint8_t[?]')

local Encoder = {}
Encoder.__index = Encoder

-- Encoder(block, capacity): writes into block[0 .. capacity-1] while the
-- bytes fit (block may be nil).
function M.Encoder(block, capacity)
  return setmetatable({ block = block, capacity = capacity or 0, ptr = block, cap = capacity or 0, len = 0,
    spare = nil }, Encoder)
end

-- Starts a new message (in the block again).
function Encoder:restart()
  self.ptr, self.cap, self.len = self.block, self.capacity, 0
end

-- True when the message so far lies in the caller's block.
function Encoder:in_block() return self.ptr == self.block end

function Encoder:reserve(n)
  local need = self.len + n
  if need <= self.cap then return end
  local cap = math.max(need, 2 * self.cap, 4096)
  local spare = self.spare
  if spare == nil or self.spare_cap < cap then
    spare = buffer_type(cap)
    self.spare, self.spare_cap = spare, cap
  end
  if self.len > 0 and self.ptr ~= spare then ffi.copy(spare, self.ptr, self.len) end
  self.ptr, self.cap = spare, self.spare_cap
end

local function put_byte(e, b)
  e:reserve(1)
  e.ptr[e.len] = b
  e.len = e.len + 1
end

local function put_u32(e, v)
  e:reserve(4)
  ffi.cast(u32p, e.ptr + e.len)[0] = v
  e.len = e.len + 4
end

local function put_f64(e, v)
  e:reserve(8)
  ffi.cast(f64p, e.ptr + e.len)[0] = v
  e.len = e.len + 8
end

local function put_bytes(e, src, n)
  e:reserve(n)
  ffi.copy(e.ptr + e.len, src, n)
  e.len = e.len + n
end

local function describe(v)
  if type(v) == 'table' then
    local mt = getmetatable(v)
    local name = type(mt) == 'table' and rawget(mt, '__name')
    return name and ('a ' .. tostring(name)) or 'a table with a metatable'
  end
  return 'a ' .. type(v)
end

local function refuse(path, what)
  error(string.format('%s is %s (an example may hold nil, booleans, numbers, strings, plain tables and CPU tensors)',
    path, what), 0)
end

local function encode(e, v, path, seen)
  local tv = type(v)
  if tv == 'nil' then put_byte(e, NIL)
  elseif tv == 'boolean' then put_byte(e, v and TRUE or FALSE)
  elseif tv == 'number' then put_byte(e, NUMBER); put_f64(e, v)
  elseif tv == 'string' then
    put_byte(e, STRING); put_u32(e, #v); put_bytes(e, v, #v)
  elseif T.is_tensor(v) then
    local p = v.ptr
    if p.dev ~= -1 then refuse(path, 'a tensor on a GPU') end
    if not v.is_contiguous then v = v:contiguous(); p = v.ptr end
    local nd = p.nd
    put_byte(e, TENSOR); put_byte(e, p.dt); put_byte(e, nd)
    e:reserve(8 * nd)
    for k = 0, nd - 1 do ffi.cast(i64p, e.ptr + e.len)[0] = p.dim[k]; e.len = e.len + 8 end
    local itemsize = tonumber(C.ch_dtype_size(p.dt))
    put_bytes(e, ffi.cast(u8p, p.data) + p.offset * itemsize, tonumber(p.numel) * itemsize)
  elseif tv == 'table' then
    if getmetatable(v) ~= nil then refuse(path, describe(v)) end
    if seen[v] then refuse(path, 'a table that contains itself') end
    seen[v] = true
    put_byte(e, TABLE)
    local count_at = e.len
    put_u32(e, 0)
    local count = 0
    for k, x in pairs(v) do
      local tk = type(k)
      if tk ~= 'number' and tk ~= 'string' and tk ~= 'boolean' then
        refuse(path .. ' (a key)', 'a ' .. tk)
      end
      encode(e, k, path, seen)
      encode(e, x, path .. '[' .. (tk == 'string' and string.format('%q', k) or tostring(k)) .. ']', seen)
      count = count + 1
    end
    ffi.cast(u32p, e.ptr + count_at)[0] = count
    seen[v] = nil
  elseif tv == 'cdata' and ffi.istype('int64_t', v) then
    put_byte(e, INT64); e:reserve(8); ffi.cast(i64p, e.ptr + e.len)[0] = v; e.len = e.len + 8
  elseif tv == 'cdata' and ffi.istype('uint64_t', v) then
    put_byte(e, UINT64); e:reserve(8); ffi.cast(u64p, e.ptr + e.len)[0] = v; e.len = e.len + 8
  else
    refuse(path, describe(v))
  end
end

-- Appends value v to the message; `path` names it in errors ('example 7').
function Encoder:put(v, path)
  encode(self, v, path or 'the value', {})
end

-- decode(ptr, len, count) -> array of `count` values read from ptr[0 .. len-1].
function M.decode(ptr, len, count)
  ptr = ffi.cast(u8p, ptr)
  local pos = 0
  local function need(n)
    if pos + n > len then
      error(string.format('value_codec: truncated message (%d bytes, needed %d more at byte %d)', len, n, pos), 0)
    end
  end
  local function byte()
    need(1); local b = ptr[pos]; pos = pos + 1; return b
  end
  local function u32()
    need(4); local v = ffi.cast(u32p, ptr + pos)[0]; pos = pos + 4; return tonumber(v)
  end
  local function value()
    local tag = byte()
    if tag == NIL then return nil
    elseif tag == FALSE then return false
    elseif tag == TRUE then return true
    elseif tag == NUMBER then need(8); local v = ffi.cast(f64p, ptr + pos)[0]; pos = pos + 8; return v
    elseif tag == STRING then
      local n = u32(); need(n); local s = ffi.string(ptr + pos, n); pos = pos + n; return s
    elseif tag == TENSOR then
      local dt, nd = byte(), byte()
      need(8 * nd)
      local shape = {}
      for k = 1, nd do shape[k] = tonumber(ffi.cast(i64p, ptr + pos)[0]); pos = pos + 8 end
      local t = T.empty(shape, T.dtype_names[dt])
      local nbytes = tonumber(t.ptr.numel) * tonumber(C.ch_dtype_size(dt))
      need(nbytes)
      ffi.copy(t.ptr.data, ptr + pos, nbytes)
      pos = pos + nbytes
      return t
    elseif tag == TABLE then
      local t = {}
      for _ = 1, u32() do
        local k = value()
        t[k] = value()
      end
      return t
    elseif tag == INT64 then need(8); local v = ffi.cast(i64p, ptr + pos)[0]; pos = pos + 8; return v
    elseif tag == UINT64 then need(8); local v = ffi.cast(u64p, ptr + pos)[0]; pos = pos + 8; return v
    end
    error(string.format('value_codec: corrupt message (tag %d at byte %d)', tag, pos - 1), 0)
  end
  local out = {}
  for i = 1, count do out[i] = value() end
  return out
end

return M
