-- bench/mlp_cpu.lua MODE N: process CPU time per MLP training step (MODE train) or per
-- batch-1 inference call (MODE infer), 1 thread unless NT is set; prints min and median.
-- The CPU-time counterpart of the harness workloads mlp/infer for a loaded machine.
local ffi = require 'ffi'
pcall(ffi.cdef, [[int mlpb_clock_gettime(int clk, void *ts) __asm__("clock_gettime");]])
local ts = ffi.new('int64_t[2]')
local function cpu() ffi.C.mlpb_clock_gettime(2, ts); return tonumber(ts[0]) + tonumber(ts[1]) * 1e-9 end
local chainer = require 'chainer'
chainer.set_num_threads(tonumber(os.getenv('NT') or 1))
local F = require 'chainer.functions'
local L = require 'chainer.links'
local optimizers = require 'chainer.optimizers'
local T = chainer.tensor
T.random.seed(0)
local MLP = chainer.Chain:extend('BenchMLP')
function MLP:init() self.l1 = L.Linear(784, 1000); self.l2 = L.Linear(1000, 1000); self.l3 = L.Linear(1000, 10) end
function MLP:forward(x) return self.l3(F.relu(self.l2(F.relu(self.l1(x))))) end
local model = MLP()
local opt = optimizers.SGD { lr = 0.01 }:setup(model)
local x = T.random.uniform(-1, 1, { 100, 784 }, 'float32')
local t = T.random.randint(0, 10, { 100 }, 'int32')
local mode = arg[1] or 'train'
local ts_ = {}
if mode == 'train' then
  local function step()
    local loss = F.softmax_cross_entropy(model(x), t)
    model:cleargrads(); loss:backward(); opt:update()
  end
  for i = 1, 10 do step() end
  for i = 1, tonumber(arg[2] or 60) do local t0 = cpu(); step(); ts_[i] = cpu() - t0 end
else
  local x1 = T.random.uniform(-1, 1, { 1, 784 }, 'float32')
  chainer.no_backprop_mode(function()
    for i = 1, 100 do model(x1) end
    for i = 1, tonumber(arg[2] or 60) do local t0 = cpu(); for k = 1, 20 do model(x1) end; ts_[i] = (cpu() - t0) / 20 end
  end)
end
table.sort(ts_)
print(string.format('RES %s min %.1f med %.1f', mode, ts_[1]*1e6, ts_[math.floor(#ts_/2)+1]*1e6))
