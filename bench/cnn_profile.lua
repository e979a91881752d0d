-- bench/cnn_profile.lua: where a ResNet-18 / VGG training step's convolution
-- time goes, per distinct convolution shape and per pass (forward, data
-- gradient, filter gradient), in process CPU milliseconds, plus the whole
-- step, so that the rest (batch normalization, ReLU, pooling, adds, update)
-- is the difference.  Compare with bench/cnn_profile.py (PyTorch's profiler).
--   chainlua bench/cnn_profile.lua [resnet18|vgg] [threads] [batch] [reps]
-- Each pass is timed as a difference: forward alone; forward + backward with
-- an input that needs no gradient (adds the filter gradient); the same with
-- one that does (adds the data gradient).  Minimum over `reps` rounds.
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local model = arg[1] or 'resnet18'
local threads = tonumber(arg[2]) or 1
local N = tonumber(arg[3]) or 64
local reps = tonumber(arg[4]) or 3
chainer.set_num_threads(threads)
T.random.seed(0)

-- {count, Cin, Cout, H (input), k, stride, pad}
local SHAPES = {
  resnet18 = {
    { 1, 3, 64, 32, 3, 1, 1 }, { 4, 64, 64, 32, 3, 1, 1 },
    { 1, 64, 128, 32, 3, 2, 1 }, { 3, 128, 128, 16, 3, 1, 1 }, { 1, 64, 128, 32, 1, 2, 0 },
    { 1, 128, 256, 16, 3, 2, 1 }, { 3, 256, 256, 8, 3, 1, 1 }, { 1, 128, 256, 16, 1, 2, 0 },
    { 1, 256, 512, 8, 3, 2, 1 }, { 3, 512, 512, 4, 3, 1, 1 }, { 1, 256, 512, 8, 1, 2, 0 },
  },
  vgg = {
    { 1, 3, 64, 32, 3, 1, 1 }, { 1, 64, 64, 32, 3, 1, 1 }, { 1, 64, 128, 16, 3, 1, 1 },
    { 1, 128, 128, 16, 3, 1, 1 }, { 1, 128, 256, 8, 3, 1, 1 }, { 1, 256, 256, 8, 3, 1, 1 },
    { 1, 256, 512, 4, 3, 1, 1 },
  },
}

local function best(fn)
  fn()
  local m = math.huge
  for _ = 1, reps do
    local c0 = B.cpu_time()
    fn()
    m = math.min(m, B.cpu_time() - c0)
  end
  return m * 1e3
end

print(string.format('%s, batch %d, %d thread(s), process CPU ms (min of %d)', model, N, threads, reps))
print(string.format('%-30s %5s %9s %9s %9s %9s %8s', 'conv (Cin->Cout, HxW, k, s)', 'count', 'forward', 'bwd filt', 'bwd data', 'total', 'GFLOP/s') .. "\n")
local sum = { 0, 0, 0 }
for _, s in ipairs(SHAPES[model]) do
  local cnt, ci, co, h, k, st, pad = (table.unpack or unpack)(s)
  local oh = math.floor((h + 2 * pad - k) / st) + 1
  local xa = T.random.uniform(-1, 1, { N, ci, h, h }, 'float32')
  local xv = chainer.Variable(xa)
  local W = chainer.Variable(T.random.uniform(-0.1, 0.1, { co, ci, k, k }, 'float32'))
  local gy = T.random.uniform(-1, 1, { N, co, oh, oh }, 'float32')
  local function run(x, back)
    local y = F.convolution_2d(x, W, nil, st, pad)
    if back then y.grad = gy; y:backward() end
    W:cleargrad() xv:cleargrad()
  end
  local f = best(function() run(xa, false) end)
  local ff = best(function() run(xa, true) end)
  local ffd = best(function() run(xv, true) end)
  local p = { f, math.max(ff - f, 0), math.max(ffd - ff, 0) }
  local flop = 3 * 2 * N * co * oh * oh * ci * k * k
  print(string.format('%-30s %5d %9.1f %9.1f %9.1f %9.1f %8.1f', string.format('%d->%d, %dx%d, %dx%d, s%d', ci, co, h, h, k, k, st),
    cnt, p[1], p[2], p[3], cnt * (p[1] + p[2] + p[3]), flop / (ffd * 1e-3) / 1e9))
  for i = 1, 3 do sum[i] = sum[i] + cnt * p[i] end
end
print(string.format('%-36s %9.1f %9.1f %9.1f %9.1f', 'all convolutions (x count)', sum[1], sum[2], sum[3], sum[1] + sum[2] + sum[3]))
