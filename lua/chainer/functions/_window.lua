-- functions/_window.lua: the window geometry shared by the convolution,
-- pooling and im2col functions (not exported into F): per-axis integer
-- arguments, Chainer's get_conv_outsize / get_deconv_outsize, and the
-- per-axis lists as int64 arrays for the C kernels.
local ffi = require 'ffi'
local conv = require 'chainer.utils.conv'

local W = {}

-- An int or an n-tuple -> Lua array of n integers (>= min when min is
-- given); nil or false (Python None) takes `default`.  `level` as in
-- chainer._args: 2 blames the caller's caller.
function W.tuple(fn, name, v, n, default, min, level)
  level = (level or 2) + 1
  if v == nil or v == false then v = default end
  local out = {}
  if type(v) == 'number' then
    for i = 1, n do out[i] = v end
  elseif type(v) == 'table' and getmetatable(v) == nil and #v == n then
    for i = 1, n do out[i] = v[i] end
  else
    error(string.format('%s: %s must be an integer or a table of %d integers (got %s)', fn, name, n,
      type(v) == 'table' and ('a table of ' .. #v) or tostring(v)), level)
  end
  for i = 1, n do
    local x = out[i]
    if type(x) ~= 'number' or x ~= math.floor(x) or (min and x < min) then
      error(string.format('%s: %s must hold integers%s (got %s)', fn, name, min and (' >= ' .. min) or '',
        tostring(x)), level)
    end
  end
  return out
end

-- Chainer's get_conv_outsize / get_deconv_outsize (chainer.utils.conv,
-- the one copy of the formulas): the output size of a window k (dilated by
-- d, default 1) sliding with stride s over size padded by p on both sides,
-- and the size whose convolution gives `size`.
W.outsize = conv.conv_outsize
W.deconv_outsize = conv.deconv_outsize

-- A per-axis list as an int64 array for a C kernel argument: reusable
-- buffers, one per argument position `slot` (1..5) of a kernel call, so
-- that a call allocates nothing.
local slots = {}
for i = 1, 5 do slots[i] = ffi.new('int64_t[16]') end
function W.i64(slot, t)
  local b = slots[slot]
  for i = 1, #t do b[i - 1] = t[i] end
  return b
end

return W
