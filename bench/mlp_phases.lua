-- bench/mlp_phases.lua N: best process CPU time of each phase of one MLP training step
-- (l1, relu, l2, relu, l3, softmax CE, cleargrads, backward, update) and of the
-- step's 8 GEMMs alone (set NOGEMM=1 to skip those).

package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local cpu = B.cpu_time
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local model, opt, x, t = B.mlp_step_fixture()
local ph = {}
local names = {'l1','relu1','l2','relu2','l3','sce','clear','backward','update'}
for _, n in ipairs(names) do ph[n] = 1e9 end
local total = 1e9
local N = tonumber(arg[1] or 30)
for it = 1, N do
  local t0 = cpu()
  local h = model.l1(x); local t1 = cpu()
  h = F.relu(h); local t2 = cpu()
  h = model.l2(h); local t3 = cpu()
  h = F.relu(h); local t4 = cpu()
  h = model.l3(h); local t5 = cpu()
  local loss = F.softmax_cross_entropy(h, t); local t6 = cpu()
  model:cleargrads(); local t7 = cpu()
  loss:backward(); local t8 = cpu()
  opt:update(); local t9 = cpu()
  local d = {t1-t0,t2-t1,t3-t2,t4-t3,t5-t4,t6-t5,t7-t6,t8-t7,t9-t8}
  for i, n in ipairs(names) do ph[n] = math.min(ph[n], d[i]) end
  total = math.min(total, t9 - t0)
end
local s = 0
for _, n in ipairs(names) do io.write(string.format('%s=%.2fms ', n, ph[n]*1e3)); s = s + ph[n] end
print(string.format('\nsum-of-min=%.2fms best-total=%.2fms  => %.0f samples/s', s*1e3, total*1e3, 100/total))
if os.getenv("NOGEMM") then return end
-- the 6 gemms alone
local W1, W2, W3 = model.l1.W.array, model.l2.W.array, model.l3.W.array
local y1, y2, y3 = T.empty({100,1000}), T.empty({100,1000}), T.empty({100,10})
local g1, g2, g3 = T.empty({1000,784}), T.empty({1000,1000}), T.empty({10,1000})
local gx2, gx3 = T.empty({100,1000}), T.empty({100,1000})
local best = 1e9
local TB, TA = {transb=true}, {transa=true}
for it = 1, N do
  local t0 = cpu()
  T.gemm(y1, x, W1, TB); T.gemm(y2, y1, W2, TB); T.gemm(y3, y2, W3, TB)
  T.gemm(g3, y3, y2, TA); T.gemm(gx3, y3, W3); T.gemm(g2, gx3, y1, TA); T.gemm(gx2, gx3, W2); T.gemm(g1, gx2, x, TA)
  best = math.min(best, cpu() - t0)
end
print(string.format('6 gemms alone: %.2fms  (%.1f GFLOP/s) => gemm-only ceiling %.0f samples/s', best*1e3, 0.9208e9/best/1e9*1.0, 100/best))
