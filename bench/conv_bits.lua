-- bench/conv_bits.lua: a hash of the bits of y, gx and gW of float32 3x3
-- convolutions on shapes that take the Winograd path (32+ channels) with
-- odd sizes, pads 0-2 and a bias: one line per shape.  Run it with the
-- library before and after a change to the convolution kernels
-- (CHAINLUA_LIB=...) and compare: a change meant to keep the results
-- must print the same lines.
--   chainlua bench/conv_bits.lua [threads]
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local lib = require 'chainer._lib'
local ffi = lib.ffi
chainer.set_num_threads(tonumber(arg[1]) or 2)

local function hash(t) -- FNV-style over the float32 words
  t = t:astype('float32'):copy()
  local p = ffi.cast('const uint32_t *', lib.C.ch_tensor_ptr(t.ptr))
  local h = 2166136261ULL
  for i = 0, t.size - 1 do h = (h * 16777619ULL + p[i]) % 4294967296ULL end
  return tostring(h):gsub('ULL$', '')
end

-- {N, Cin, Cout, H, W, pad}
local shapes = { { 3, 32, 40, 13, 11, 1 }, { 2, 64, 64, 32, 32, 1 }, { 2, 48, 33, 9, 17, 0 },
                 { 1, 40, 36, 20, 7, 2 }, { 4, 128, 64, 8, 8, 1 }, { 2, 32, 32, 37, 35, 1 },
                 { 1, 33, 34, 70, 3, 1 } }
for _, s in ipairs(shapes) do
  T.random.seed(1)
  local N, C, Co, H, W, pad = (table.unpack or unpack)(s)
  local x = chainer.Variable(T.random.uniform(-1, 1, { N, C, H, W }, 'float32'))
  local w = chainer.Variable(T.random.uniform(-1, 1, { Co, C, 3, 3 }, 'float32'))
  local b = chainer.Variable(T.random.uniform(-1, 1, { Co }, 'float32'))
  local y = F.convolution_2d(x, w, b, 1, pad)
  y.grad = T.random.uniform(-1, 1, y.shape, 'float32')
  y:backward()
  print(table.concat(s, 'x'), 'y ' .. hash(y.array), 'gx ' .. hash(x.grad), 'gW ' .. hash(w.grad))
end
