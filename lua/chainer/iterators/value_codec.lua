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
--
-- A chunk of examples (put_chunk / decode_batch) travels in one of two
-- forms.  When every example is a tensor, or a table of tensors with the
-- same keys, dtypes and shapes (a TupleDataset-like example), the chunk is
-- sent as rows: one block of bytes per field, which the parent copies
-- straight into the batch's stacked arrays (the examples handed out are row
-- views of them and concat_examples reuses the arrays, as SerialIterator
-- does for tensor datasets).  Anything else is sent value by value.
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

-- Elements of pointer type per item size, for copying strided rows.
local ELEMENT_PTR = { [1] = u8p, [2] = ffi.typeof('uint16_t *'), [4] = u32p, [8] = u64p }
local SMALL = 16384   -- elements: below this a Lua loop beats a contiguous() copy and its allocation

-- Appends the elements of CPU tensor handle p (any strides) in C order.
local function put_elements(e, p)
  local itemsize = tonumber(C.ch_dtype_size(p.dt))
  local numel = tonumber(p.numel)
  local nbytes = numel * itemsize
  e:reserve(nbytes)
  local dst = e.ptr + e.len
  local contiguous = C.ch_is_contiguous(p) ~= 0
  if contiguous or numel == 0 then
    ffi.copy(dst, ffi.cast(u8p, p.data) + p.offset * itemsize, nbytes)
  elseif numel <= SMALL and ELEMENT_PTR[itemsize] and p.nd <= 4 then
    -- a small view (a crop, a flip): walk it with a 4-d counter
    local et = ELEMENT_PTR[itemsize]
    local src, out = ffi.cast(et, p.data) + p.offset, ffi.cast(et, dst)
    local pad = 4 - p.nd
    local n, st = { 1, 1, 1, 1 }, { 0, 0, 0, 0 }
    for d = 0, p.nd - 1 do n[pad + d + 1], st[pad + d + 1] = tonumber(p.dim[d]), tonumber(p.stride[d]) end
    local k = 0
    for a = 0, n[1] - 1 do
      for b = 0, n[2] - 1 do
        for c = 0, n[3] - 1 do
          local base = a * st[1] + b * st[2] + c * st[3]
          local s4 = st[4]
          for d = 0, n[4] - 1 do
            out[k] = src[base + d * s4]
            k = k + 1
          end
        end
      end
    end
  else
    local copy = ffi.new('ch_tensor *[1]')
    T.check(C.ch_contiguous(p, copy), 2)
    local q = copy[0]
    ffi.copy(dst, ffi.cast(u8p, q.data) + q.offset * itemsize, nbytes)
    C.ch_tensor_release(q)
  end
  e.len = e.len + nbytes
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
    local nd = p.nd
    put_byte(e, TENSOR); put_byte(e, p.dt); put_byte(e, nd)
    e:reserve(8 * nd)
    for k = 0, nd - 1 do ffi.cast(i64p, e.ptr + e.len)[0] = p.dim[k]; e.len = e.len + 8 end
    put_elements(e, p)
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

local VALUES, ROWS = 0xF0, 0xF1
local SINGLE, ARRAY, DICT = 0, 1, 2

-- The fields of example ex when it can travel as rows: kind, keys (in a
-- fixed order) and tensors, or nil.
local function row_fields(ex)
  if T.is_tensor(ex) then
    if ex.ptr.dev ~= -1 then return nil end
    return SINGLE, { 1 }, { ex }
  end
  if type(ex) ~= 'table' or getmetatable(ex) ~= nil then return nil end
  local n = #ex
  local keys, values = {}, {}
  local count = 0
  for k, v in pairs(ex) do
    if not T.is_tensor(v) or v.ptr.dev ~= -1 then return nil end
    count = count + 1
    keys[count] = k
  end
  if count == 0 then return nil end
  local kind
  if n == count then
    kind = ARRAY
    for k = 1, n do keys[k] = k end
  else
    for _, k in ipairs(keys) do if type(k) ~= 'string' then return nil end end
    kind = DICT
    table.sort(keys)
  end
  for i, k in ipairs(keys) do
    values[i] = ex[k]
    if values[i] == nil then return nil end   -- an array with holes
  end
  return kind, keys, values
end

local function same_layout(a, b)
  local pa, pb = a.ptr, b.ptr
  if pa.dt ~= pb.dt or pa.nd ~= pb.nd then return false end
  for d = 0, pa.nd - 1 do if pa.dim[d] ~= pb.dim[d] then return false end end
  return true
end

-- The examples' common row layout ({kind, keys, first example's tensors})
-- or nil when they differ in any way.
local function common_rows(examples)
  local kind, keys, first = row_fields(examples[1])
  if kind == nil then return nil end
  for i = 2, #examples do
    local k2, keys2, values = row_fields(examples[i])
    if k2 ~= kind or #keys2 ~= #keys then return nil end
    for f = 1, #keys do
      if keys2[f] ~= keys[f] or not same_layout(values[f], first[f]) then return nil end
    end
  end
  return { kind = kind, keys = keys, first = first }
end

-- Appends a chunk of examples (labels[i] names example i in errors).
function Encoder:put_chunk(examples, labels)
  local rows = common_rows(examples)
  if rows == nil then
    put_byte(self, VALUES)
    for i, ex in ipairs(examples) do encode(self, ex, labels[i], {}) end
    return
  end
  put_byte(self, ROWS); put_byte(self, rows.kind); put_u32(self, #rows.keys)
  for f, key in ipairs(rows.keys) do
    if rows.kind == DICT then put_u32(self, #key); put_bytes(self, key, #key) end
    local p = rows.first[f].ptr
    put_byte(self, p.dt); put_byte(self, p.nd)
    self:reserve(8 * p.nd)
    for d = 0, p.nd - 1 do ffi.cast(i64p, self.ptr + self.len)[0] = p.dim[d]; self.len = self.len + 8 end
  end
  for f, key in ipairs(rows.keys) do
    for _, ex in ipairs(examples) do
      local v = rows.kind == SINGLE and ex or ex[key]
      put_elements(self, v.ptr)
    end
  end
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
  return out, pos
end

-- Reads a rows header at ptr: layout {kind, fields = {key, dtype, shape}},
-- and the offset of the row data.
local function rows_header(ptr, len)
  local pos = 2
  local function need(n)
    if pos + n > len then error(string.format('value_codec: truncated rows header (%d bytes)', len), 0) end
  end
  need(4)
  local kind, nfields = ptr[1], tonumber(ffi.cast(u32p, ptr + pos)[0])
  pos = pos + 4
  local fields = {}
  for f = 1, nfields do
    local key = f
    if kind == DICT then
      need(4); local n = tonumber(ffi.cast(u32p, ptr + pos)[0]); pos = pos + 4
      need(n); key = ffi.string(ptr + pos, n); pos = pos + n
    end
    need(2)
    local dt, nd = ptr[pos], ptr[pos + 1]
    pos = pos + 2
    need(8 * nd)
    local shape, numel = {}, 1
    for d = 1, nd do shape[d] = tonumber(ffi.cast(i64p, ptr + pos)[0]); numel = numel * shape[d]; pos = pos + 8 end
    fields[f] = { key = key, dt = dt, shape = shape, row_bytes = numel * tonumber(C.ch_dtype_size(dt)) }
  end
  return { kind = kind, fields = fields }, pos
end

local function same_header(a, b)
  if a.kind ~= b.kind or #a.fields ~= #b.fields then return false end
  for f, fa in ipairs(a.fields) do
    local fb = b.fields[f]
    if fa.key ~= fb.key or fa.dt ~= fb.dt or #fa.shape ~= #fb.shape then return false end
    for d = 1, #fa.shape do if fa.shape[d] ~= fb.shape[d] then return false end end
  end
  return true
end

-- Stacks rows parts (each {ptr, len, count, header, data}) into arrays
-- shaped like the examples' fields, with sum(count) rows.
local function stack_rows(parts, header, m)
  local arrays = {}
  for f, field in ipairs(header.fields) do
    local shape = { m }
    for d = 1, #field.shape do shape[d + 1] = field.shape[d] end
    local a = T.empty(shape, T.dtype_names[field.dt])
    local dst = ffi.cast(u8p, a.ptr.data)
    local at = 0
    for _, part in ipairs(parts) do
      local offset = part.data
      for g = 1, f - 1 do offset = offset + part.count * header.fields[g].row_bytes end
      local nbytes = part.count * field.row_bytes
      if offset + nbytes > part.len then
        error(string.format('value_codec: truncated rows (%d bytes, %d needed)', part.len, offset + nbytes), 0)
      end
      ffi.copy(dst + at, part.ptr + offset, nbytes)
      at = at + nbytes
    end
    arrays[f] = a
  end
  if header.kind == SINGLE then return arrays[1] end
  if header.kind == ARRAY then return arrays end
  local dict = {}
  for f, field in ipairs(header.fields) do dict[field.key] = arrays[f] end
  return dict
end

-- decode_batch(parts, P, convert) -> the examples of all parts in order.
-- parts: array of {ptr, len, count} chunks from put_chunk.  When every
-- part holds rows of one layout, the batch is attached to its stacked
-- arrays (convert.attach); otherwise each part is decoded on its own.
function M.decode_batch(parts, P, convert)
  local m, header = 0, nil
  for _, part in ipairs(parts) do
    part.ptr = ffi.cast(u8p, part.ptr)
    m = m + part.count
    if part.len < 1 then error('value_codec: empty message', 0) end
    if part.ptr[0] == ROWS then
      part.header, part.data = rows_header(part.ptr, part.len)
      if header == nil then header = part.header
      elseif header ~= false and not same_header(header, part.header) then header = false end
    elseif part.ptr[0] == VALUES then
      header = false
    else
      error(string.format('value_codec: corrupt chunk (first byte %d)', part.ptr[0]), 0)
    end
  end
  if header then
    local arrays = stack_rows(parts, header, m)
    return convert.attach(P.unstack(arrays, m), arrays)
  end
  local batch, n = {}, 0
  for _, part in ipairs(parts) do
    local examples
    if part.header then
      examples = P.unstack(stack_rows({ part }, part.header, part.count), part.count)
    else
      examples = M.decode(part.ptr + 1, part.len - 1, part.count)
    end
    for k = 1, part.count do batch[n + k] = examples[k] end
    n = n + part.count
  end
  return batch
end

return M
