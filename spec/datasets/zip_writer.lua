-- A minimal zip writer for the zipped-dataset specs, written from PKWARE's
-- APPNOTE independently of the runtime's reader it tests: stored members, or
-- deflated ones (zlib's compress2 output without its 2-byte header and
-- 4-byte Adler-32 trailer is a raw deflate stream).
local ffi = require 'ffi'
local bit = require 'bit'

ffi.cdef [[
unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned int len);
int compress2(unsigned char *dest, unsigned long *destLen, const unsigned char *source, unsigned long sourceLen,
              int level);
unsigned long compressBound(unsigned long sourceLen);
]]
local ok, z = pcall(ffi.load, 'z')
if not ok then z = ffi.load('libz.so.1') end

local M = {}

local function u16(v) return string.char(bit.band(v, 255), bit.band(bit.rshift(v, 8), 255)) end
local function u32(v)
  v = tonumber(v) % 4294967296
  return string.char(v % 256, math.floor(v / 256) % 256, math.floor(v / 65536) % 256, math.floor(v / 16777216) % 256)
end

local function crc(data) return tonumber(z.crc32(0, data, #data)) end

local function deflate(data)
  local cap = ffi.new('unsigned long[1]', z.compressBound(#data))
  local buf = ffi.new('unsigned char[?]', tonumber(cap[0]))
  assert(z.compress2(buf, cap, data, #data, 9) == 0, 'compress2 failed')
  return ffi.string(buf + 2, tonumber(cap[0]) - 6)
end

-- write(path, members): members is a Lua array of {name, bytes, [deflate = true]};
-- a name ending in '/' is a directory entry.
function M.write(path, members)
  local out, central = {}, {}
  local offset = 0
  for _, m in ipairs(members) do
    local name, data = m[1], m[2] or ''
    local method, body = 0, data
    if m.deflate then method, body = 8, deflate(data) end
    local c = crc(data)
    local fields = u16(20) .. u16(0) .. u16(method) .. u16(0) .. u16(0x21) .. u32(c) .. u32(#body) .. u32(#data)
      .. u16(#name) .. u16(0)
    local loc = u32(0x04034b50) .. fields .. name .. body
    out[#out + 1] = loc
    central[#central + 1] = u32(0x02014b50) .. u16(20) .. fields .. u16(0) .. u16(0) .. u16(0) .. u32(0)
      .. u32(offset) .. name
    offset = offset + #loc
  end
  local cd = table.concat(central)
  local eocd = u32(0x06054b50) .. u16(0) .. u16(0) .. u16(#members) .. u16(#members) .. u32(#cd) .. u32(offset)
    .. u16(0)
  require('helpers').write_file(path, table.concat(out) .. cd .. eocd)
end

return M
