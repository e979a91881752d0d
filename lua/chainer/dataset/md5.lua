-- dataset/md5.lua: MD5 of a Lua string as 32 hex digits (RFC 1321).
-- Used to name files in the download cache the way Chainer does
-- (<root>/_dl_cache/<md5 of the URL>); not a security primitive.
local bit = require 'bit'
local band, bor, bxor, bnot = bit.band, bit.bor, bit.bxor, bit.bnot
local rol, tobit = bit.rol, bit.tobit

local S = {
  7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
  5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
  4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
  6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
}
local K = {}
for i = 0, 63 do K[i + 1] = tobit(math.floor(math.abs(math.sin(i + 1)) * 2^32)) end

local function le32(s, i)
  local a, b, c, d = s:byte(i, i + 3)
  return tobit(a + b * 256 + c * 65536 + d * 16777216)
end

local function hex_le(x)
  local out = {}
  for k = 0, 3 do out[k + 1] = string.format('%02x', band(bit.rshift(x, 8 * k), 0xff)) end
  return table.concat(out)
end

return function(msg)
  local len = #msg
  -- padding: 0x80, zeros to 56 mod 64, then the bit length (little-endian 64-bit)
  local bits = len * 8
  local pad = '\128' .. string.rep('\0', (55 - len) % 64)
  local lo = bits % 2^32
  local hi = math.floor(bits / 2^32)
  local function u32(v)
    return string.char(v % 256, math.floor(v / 256) % 256, math.floor(v / 65536) % 256, math.floor(v / 16777216) % 256)
  end
  msg = msg .. pad .. u32(lo) .. u32(hi)
  local a0, b0, c0, d0 = tobit(0x67452301), tobit(0xefcdab89), tobit(0x98badcfe), tobit(0x10325476)
  local X = {}
  for chunk = 1, #msg, 64 do
    for j = 0, 15 do X[j] = le32(msg, chunk + 4 * j) end
    local a, b, c, d = a0, b0, c0, d0
    for i = 0, 63 do
      local f, g
      if i < 16 then
        f = bor(band(b, c), band(bnot(b), d)); g = i
      elseif i < 32 then
        f = bor(band(d, b), band(bnot(d), c)); g = (5 * i + 1) % 16
      elseif i < 48 then
        f = bxor(b, c, d); g = (3 * i + 5) % 16
      else
        f = bxor(c, bor(b, bnot(d))); g = (7 * i) % 16
      end
      local tmp = d
      d = c
      c = b
      b = tobit(b + rol(tobit(a + f + K[i + 1] + X[g]), S[i + 1]))
      a = tmp
    end
    a0, b0, c0, d0 = tobit(a0 + a), tobit(b0 + b), tobit(c0 + c), tobit(d0 + d)
  end
  return hex_le(a0) .. hex_le(b0) .. hex_le(c0) .. hex_le(d0)
end
