-- A small protobuf encoder for the CaffeFunction specs: builds .caffemodel
-- files (NetParameter messages) field by field from the wire format, without
-- protobuf-c, so the parser under test is checked against an independent
-- writer.  Field numbers are Caffe's (runtime/io/caffe.proto).
local ffi = require 'ffi'

local M = {}

-- base-128 varint of a non-negative integer, or of a negative one as its
-- 64-bit two's complement (10 bytes), as protobuf writes int32/int64.
local function varint(v)
  assert(v == math.floor(v), 'varint: not an integer')
  if v < 0 then
    local u = ffi.new('uint64_t', ffi.cast('int64_t', v))
    local bytes = {}
    repeat
      local b = tonumber(u % 128)
      u = u / 128
      if u ~= 0 then b = b + 128 end
      bytes[#bytes + 1] = string.char(b)
    until u == 0
    return table.concat(bytes)
  end
  local bytes = {}
  repeat
    local b = v % 128
    v = math.floor(v / 128)
    if v > 0 then b = b + 128 end
    bytes[#bytes + 1] = string.char(b)
  until v == 0
  return table.concat(bytes)
end
M.varint = varint

local function key(field, wire) return varint(field * 8 + wire) end

function M.uint(field, v) return key(field, 0) .. varint(v) end
function M.bool(field, v) return key(field, 0) .. varint(v and 1 or 0) end
function M.bytes(field, s) return key(field, 2) .. varint(#s) .. s end
M.string = M.bytes
M.message = M.bytes

function M.float(field, v)
  local f = ffi.new('float[1]', v)
  return key(field, 5) .. ffi.string(f, 4)
end

-- repeated float or double (ctype 'float' / 'double'), packed
local function packed(ctype, size, field, values)
  local n = #values
  local buf = ffi.new(ctype .. '[?]', math.max(n, 1))
  for k = 1, n do buf[k - 1] = values[k] end
  return M.bytes(field, ffi.string(buf, size * n))
end
function M.floats(field, values) return packed('float', 4, field, values) end
function M.doubles(field, values) return packed('double', 8, field, values) end

-- repeated int64, packed
function M.ints_packed(field, values)
  local parts = {}
  for k = 1, #values do parts[k] = varint(values[k]) end
  return M.bytes(field, table.concat(parts))
end

-- BlobProto: {shape = {...}, data = {...}} or {legacy = {n, c, h, w}, data = {...}}
-- (double = true stores double_data).
function M.blob(b)
  local parts = {}
  if b.shape then parts[#parts + 1] = M.message(7, M.ints_packed(1, b.shape)) end
  if b.legacy then
    for k, f in ipairs({ 1, 2, 3, 4 }) do
      if b.legacy[k] ~= 0 then parts[#parts + 1] = M.uint(f, b.legacy[k]) end
    end
  end
  if b.double then
    parts[#parts + 1] = M.doubles(8, b.data)
  else
    parts[#parts + 1] = M.floats(5, b.data)
  end
  return table.concat(parts)
end

-- The blob of a tensor's values (C order) and shape.
function M.tensor_blob(t, legacy)
  local data = {}
  local flat = t:reshape({ -1 })
  for k = 0, t.size - 1 do data[k + 1] = flat:slice(k):item() end
  if legacy then
    local s = t.shape
    local four = { 1, 1, 1, 1 }
    for k = 1, #s do four[4 - #s + k] = s[k] end
    return M.blob({ legacy = four, data = data })
  end
  return M.blob({ shape = t.shape, data = data })
end

-- LayerParameter (new form): {name, type, bottom = {}, top = {}, blobs = {encoded...},
-- params = {[field] = encoded sub-message}}
function M.layer(l)
  local parts = { M.string(1, l.name), M.string(2, l.type) }
  for _, b in ipairs(l.bottom or {}) do parts[#parts + 1] = M.string(3, b) end
  for _, t in ipairs(l.top or {}) do parts[#parts + 1] = M.string(4, t) end
  for _, b in ipairs(l.blobs or {}) do parts[#parts + 1] = M.message(7, b) end
  for _, f in ipairs(l.params or {}) do parts[#parts + 1] = M.message(f[1], f[2]) end
  return table.concat(parts)
end

-- V1LayerParameter: type is the enum number.
function M.v1layer(l)
  local parts = { M.string(4, l.name), M.uint(5, l.type) }
  for _, b in ipairs(l.bottom or {}) do parts[#parts + 1] = M.string(2, b) end
  for _, t in ipairs(l.top or {}) do parts[#parts + 1] = M.string(3, t) end
  for _, b in ipairs(l.blobs or {}) do parts[#parts + 1] = M.message(6, b) end
  for _, f in ipairs(l.params or {}) do parts[#parts + 1] = M.message(f[1], f[2]) end
  return table.concat(parts)
end

-- NetParameter: name, layer (field 100) or V1 layers (field 2).
function M.net(name, layers, v1)
  local parts = { M.string(1, name) }
  for _, l in ipairs(layers) do parts[#parts + 1] = v1 and M.message(2, M.v1layer(l)) or M.message(100, M.layer(l)) end
  return table.concat(parts)
end

M.write = require('helpers').write_file

return M
