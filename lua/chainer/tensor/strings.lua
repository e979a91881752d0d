-- tensor/strings.lua: string arrays, NumPy's '<U<n>' (UTF-32) and '|S<n>'
-- (bytes) arrays as Lua strings.  A string array is a Lua table holding the
-- items in C order at [1..n], with `shape` (a table, {} for 0-d) and `kind`
-- ('U' text, 'S' bytes); the readers in tensor/io.lua return one for every
-- string member, the writers take one (or a plain Lua string, a 0-d array).
-- The runtime moves them as tensors with one more, last axis of the item
-- length: int32 code points ('U') or uint8 bytes ('S').  See docs/files.md.
local M = require 'chainer.tensor.core'
local ffi = M.ffi

local StringArray = {}
StringArray.__index = StringArray
StringArray.__name = 'StringArray'

local function is_string_array(v) return getmetatable(v) == StringArray end
M.is_string_array = is_string_array

local function shape_str(shape)
  local parts = {}
  for i, d in ipairs(shape) do parts[i] = tostring(d) end
  return '(' .. table.concat(parts, ', ') .. (#shape == 1 and ',)' or ')')
end

-- string_array(items, [shape], [kind = 'U']): items is a flat list of
-- strings in C order (or one string, a 0-d array); shape defaults to
-- {#items}.
function M.string_array(items, shape, kind)
  if type(items) == 'string' then items, shape = { items }, shape or {} end
  if type(items) ~= 'table' then
    error(string.format('string_array: items must be a string or a list of strings (got %s)', type(items)), 2)
  end
  kind = kind or 'U'
  if kind ~= 'U' and kind ~= 'S' then
    error(string.format("string_array: kind must be 'U' (text) or 'S' (bytes) (got %s)", tostring(kind)), 2)
  end
  local n = #items
  shape = shape or { n }
  if type(shape) ~= 'table' then
    error(string.format('string_array: shape must be a table (got %s)', type(shape)), 2)
  end
  local count = 1
  for i, d in ipairs(shape) do
    if type(d) ~= 'number' or d < 0 or d ~= math.floor(d) then
      error(string.format('string_array: shape[%d] must be a non-negative integer (got %s)', i, tostring(d)), 2)
    end
    count = count * d
  end
  if count ~= n then
    error(string.format('string_array: shape %s holds %d items but %d strings were given', shape_str(shape), count,
      n), 2)
  end
  local sa = { shape = {}, kind = kind }
  for i, d in ipairs(shape) do sa.shape[i] = d end
  for i = 1, n do
    if type(items[i]) ~= 'string' then
      error(string.format('string_array: item %d must be a string (got %s)', i, type(items[i])), 2)
    end
    sa[i] = items[i]
  end
  return setmetatable(sa, StringArray)
end

function StringArray:numel() return #self end

-- The only item (a 0-d or one-item array), as NumPy's arr.item().
function StringArray:item()
  if #self ~= 1 then
    error(string.format('item: the string array of shape %s has %d items (expected 1)', shape_str(self.shape), #self),
      2)
  end
  return self[1]
end

function StringArray:__tostring()
  local parts = {}
  for i = 1, math.min(#self, 6) do parts[i] = string.format('%q', self[i]) end
  if #self > 6 then parts[#parts + 1] = '...' end
  return string.format('string_array(%s, shape=%s, kind=%s)', table.concat(parts, ', '), shape_str(self.shape),
    self.kind)
end

---------------------------------------------------------------------------
-- UTF-8 <-> code points
---------------------------------------------------------------------------
local char, concat = string.char, table.concat

local function utf8_char(c)
  if c < 0x80 then return char(c) end
  if c < 0x800 then return char(0xC0 + math.floor(c / 0x40), 0x80 + c % 0x40) end
  if c < 0x10000 then
    return char(0xE0 + math.floor(c / 0x1000), 0x80 + math.floor(c / 0x40) % 0x40, 0x80 + c % 0x40)
  end
  return char(0xF0 + math.floor(c / 0x40000), 0x80 + math.floor(c / 0x1000) % 0x40,
    0x80 + math.floor(c / 0x40) % 0x40, 0x80 + c % 0x40)
end

-- Code points of a UTF-8 string into out[1..]; returns their count, or nil
-- and the byte position of the first malformed sequence (overlong forms,
-- surrogates and values above U+10FFFF are malformed).
local function utf8_decode(s, out)
  local n, i, len = 0, 1, #s
  while i <= len do
    local b = s:byte(i)
    local c, extra, min
    if b < 0x80 then c, extra, min = b, 0, 0
    elseif b >= 0xC2 and b < 0xE0 then c, extra, min = b - 0xC0, 1, 0x80
    elseif b >= 0xE0 and b < 0xF0 then c, extra, min = b - 0xE0, 2, 0x800
    elseif b >= 0xF0 and b < 0xF5 then c, extra, min = b - 0xF0, 3, 0x10000
    else return nil, i end
    if i + extra > len then return nil, i end
    for k = 1, extra do
      local cb = s:byte(i + k)
      if cb < 0x80 or cb >= 0xC0 then return nil, i end
      c = c * 0x40 + (cb - 0x80)
    end
    if c < min or c > 0x10FFFF or (c >= 0xD800 and c <= 0xDFFF) then return nil, i end
    n = n + 1
    out[n] = c
    i = i + extra + 1
  end
  return n
end

-- Whether s is valid UTF-8 (then it can be stored as '<U').
function M.is_utf8(s) return utf8_decode(s, {}) ~= nil end

---------------------------------------------------------------------------
-- tensors <-> string arrays (used by tensor/io.lua)
---------------------------------------------------------------------------
-- A string array from a runtime tensor of kind 'U' or 'S' (C-contiguous,
-- CPU, last axis the item length); trailing NULs are dropped, as NumPy does.
function M._strings_from_tensor(t, kind)
  local p = t.ptr
  local nd = p.nd
  local len = tonumber(p.dim[nd - 1])
  local shape, count = {}, 1
  for i = 0, nd - 2 do
    shape[i + 1] = tonumber(p.dim[i])
    count = count * shape[i + 1]
  end
  local items = {}
  if kind == 'U' then
    local u = ffi.cast('const int32_t*', p.data) + p.offset
    local buf = {}
    for i = 0, count - 1 do
      local base, last = i * len, len
      while last > 0 and u[base + last - 1] == 0 do last = last - 1 end
      for k = 1, last do buf[k] = utf8_char(u[base + k - 1]) end
      items[i + 1] = concat(buf, '', 1, last)
    end
  else
    local b = ffi.cast('const char*', p.data) + p.offset
    for i = 0, count - 1 do
      local base, last = i * len, len
      while last > 0 and b[base + last - 1] == 0 do last = last - 1 end
      items[i + 1] = ffi.string(b + base, last)
    end
  end
  local sa = M.string_array(items, shape, kind)
  return sa
end

-- The runtime tensor and kind for a string array or a Lua string (a 0-d
-- array: 'U' when it is valid UTF-8, 'S' otherwise).  `text_only` makes
-- 'U' items UTF-8 bytes of kind 'S' (HDF5 stores text that way).
function M._strings_to_tensor(v, fn, what, text_only)
  if type(v) == 'string' then v = M.string_array(v, {}, M.is_utf8(v) and 'U' or 'S') end
  local kind = v.kind
  local n = #v
  local shape = {}
  for i, d in ipairs(v.shape) do shape[i] = d end
  if kind == 'U' and not text_only then
    local points, counts, longest = {}, {}, 1
    for i = 1, n do
      local cps = {}
      local c, bad = utf8_decode(v[i], cps)
      if not c then
        error(string.format("%s: %s item %d is not valid UTF-8 (byte %d); text ('U') items must be UTF-8, use kind " ..
          "'S' for bytes", fn, what, i, bad), 3)
      end
      points[i], counts[i] = cps, c
      if c > longest then longest = c end
    end
    shape[#shape + 1] = longest
    local buf = ffi.new('int32_t[?]', math.max(n * longest, 1))   -- zero-filled
    for i = 1, n do
      local cps, base = points[i], (i - 1) * longest
      for k = 1, counts[i] do buf[base + k - 1] = cps[k] end
    end
    return M.from_buffer(buf, shape, 'int32'), 'U'
  end
  local longest = 1
  for i = 1, n do if #v[i] > longest then longest = #v[i] end end
  shape[#shape + 1] = longest
  local buf = ffi.new('uint8_t[?]', math.max(n * longest, 1))
  for i = 1, n do ffi.copy(buf + (i - 1) * longest, v[i], #v[i]) end
  return M.from_buffer(buf, shape, 'uint8'), 'S'
end

return M
