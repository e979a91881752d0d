-- bench/mlp_cpu.lua MODE N: process CPU time per MLP training step (MODE train) or per
-- batch-1 inference call (MODE infer), 1 thread unless NT is set; prints min and median.
-- The CPU-time counterpart of the harness workloads mlp/infer for a loaded machine.
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local cpu = B.cpu_time
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local model, opt, x, t = B.mlp_step_fixture()
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
    for i = 1, 4000 do model(x1) end   -- (steady state: see workloads.lua's W.infer)
    for i = 1, tonumber(arg[2] or 60) do local t0 = cpu(); for k = 1, 20 do model(x1) end; ts_[i] = (cpu() - t0) / 20 end
  end)
end
table.sort(ts_)
print(string.format('RES %s min %.1f med %.1f', mode, ts_[1]*1e6, ts_[math.floor(#ts_/2)+1]*1e6))
