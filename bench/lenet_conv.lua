-- bench/lenet_conv.lua: the two LeNet convolutions, forward + backward,
-- batch 64, float32:
--   conv1: x (64, 1, 28, 28), W (20, 1, 5, 5) -> (64, 20, 24, 24); gW, gb
--          (the input needs no gradient, as in LeNet's first layer)
--   conv2: x (64, 20, 12, 12), W (50, 20, 5, 5) -> (64, 50, 8, 8); gx, gW, gb
-- through F.convolution_2d and backward().  Compare with lenet_conv.py
-- (torch.nn.functional.conv2d, same shapes, same thread count).
--   luajit bench/lenet_conv.lua [threads] [iterations] [wall|cpu]
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local monotonic = require('chainer._libc').monotonic
-- clock 'cpu' measures process CPU time (os.clock): with 1 thread it is
-- the work itself even on a machine shared with other jobs
local use_cpu = arg and arg[3] == 'cpu'
local function now()
  if use_cpu then return os.clock() end
  return monotonic()
end

io.stdout:setvbuf("no")
local threads = tonumber(arg and arg[1]) or 2
local iters = tonumber(arg and arg[2]) or 200
T.C.ch_set_num_threads(threads)
T.random.seed(0)

local function layer(n, c, h, co, k, need_gx)
  local x = chainer.Variable(T.random.uniform(-1, 1, { n, c, h, h }, 'float32'))
  local W = chainer.Variable(T.random.uniform(-0.1, 0.1, { co, c, k, k }, 'float32'))
  local b = chainer.Variable(T.zeros({ co }, 'float32'))
  local oh = h - k + 1
  local gy = T.random.uniform(-1, 1, { n, co, oh, oh }, 'float32')
  local xin = need_gx and x or x.array
  local function fwd() return F.convolution_2d(xin, W, b) end
  local function step()
    local y = fwd()
    y.grad = gy
    y:backward()
    W:cleargrad() b:cleargrad() x:cleargrad()
  end
  return fwd, step
end

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

local function time(fn)
  for _ = 1, 10 do fn() end
  collectgarbage()
  local rounds = {}
  for r = 1, 5 do
    local t0 = now()
    for _ = 1, iters do fn() end
    rounds[r] = (now() - t0) / iters * 1e3
  end
  local m = median(rounds)
  return m, rounds[1]
end

local f1, s1 = layer(64, 1, 28, 20, 5, false)
local f2, s2 = layer(64, 20, 12, 50, 5, true)
local r = {}
for _, e in ipairs({ { 'conv1 forward', f1 }, { 'conv1 fwd+bwd', s1 }, { 'conv2 forward', f2 }, { 'conv2 fwd+bwd', s2 } }) do
  local med, best = time(e[2])
  r[#r + 1] = { e[1], med, best }
end
print(string.format('chainlua %s, %d threads, %s clock, %s', chainer.__version or T.ffi.string(T.C.ch_version()), threads, use_cpu and 'cpu' or 'wall',
  T.ffi.string(T.C.ch_blas_info())))
local total = 0
for _, e in ipairs(r) do
  print(string.format('  %-14s %8.3f ms median %8.3f ms min', e[1], e[2], e[3]))
end
print(string.format('  %-14s %8.3f ms median %8.3f ms min', 'both fwd+bwd', r[2][2] + r[4][2], r[2][3] + r[4][3]))
os.exit(0) -- skip lua_close: no dlclose while OpenMP workers still spin
