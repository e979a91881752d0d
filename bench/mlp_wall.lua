-- bench/mlp_wall.lua [STEPS]: the bench MLP's training step phase by phase in
-- wall-clock time (l1, relu, l2, relu, l3, softmax CE, cleargrads, backward,
-- update), medians of STEPS steps (default 300) after 300 warm-up steps, and
-- the step's 8 products alone through T.gemm in the same process.  Threads:
-- NT (default 1, as mlp_phases.lua).  For A/B of two library builds, run it
-- under luajit with CHAINLUA_LIB in alternating processes.
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local now = B.now
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local model, opt, x, t = B.mlp_step_fixture()
local names = {'l1','relu1','l2','relu2','l3','sce','clear','backward','update'}
local rec = {}; for _, n in ipairs(names) do rec[n] = {} end
local tot = {}
local N = tonumber(arg[1] or 300)
for it = 1, 300 + N do
  local t0 = now()
  local h = model.l1(x); local t1 = now()
  h = F.relu(h); local t2 = now()
  h = model.l2(h); local t3 = now()
  h = F.relu(h); local t4 = now()
  h = model.l3(h); local t5 = now()
  local loss = F.softmax_cross_entropy(h, t); local t6 = now()
  model:cleargrads(); local t7 = now()
  loss:backward(); local t8 = now()
  opt:update(); local t9 = now()
  if it > 300 then
    local d = {t1-t0,t2-t1,t3-t2,t4-t3,t5-t4,t6-t5,t7-t6,t8-t7,t9-t8}
    for i, n in ipairs(names) do table.insert(rec[n], d[i]) end
    table.insert(tot, t9 - t0)
  end
end
local function med(a) table.sort(a); return a[math.floor(#a/2)+1] end
local s = 0
for _, n in ipairs(names) do local m = med(rec[n]); io.write(string.format('%s=%.3f ', n, m*1e3)); s = s + m end
local mt = med(tot)
print(string.format('\nsum-of-med=%.3fms med-total=%.3fms => %.0f samples/s', s*1e3, mt*1e3, 100/mt))
local W1, W2, W3 = model.l1.W.array, model.l2.W.array, model.l3.W.array
local y1, y2, y3 = T.empty({100,1000}), T.empty({100,1000}), T.empty({100,10})
local g1, g2, g3 = T.empty({1000,784}), T.empty({1000,1000}), T.empty({10,1000})
local gx2, gx3 = T.empty({100,1000}), T.empty({100,1000})
local TB, TA = {transb=true}, {transa=true}
local gs = {}
for it = 1, 300 do
  local t0 = now()
  T.gemm(y1, x, W1, TB); T.gemm(y2, y1, W2, TB); T.gemm(y3, y2, W3, TB)
  T.gemm(g3, y3, y2, TA); T.gemm(gx3, y3, W3); T.gemm(g2, gx3, y1, TA); T.gemm(gx2, gx3, W2); T.gemm(g1, gx2, x, TA)
  if it > 50 then table.insert(gs, now() - t0) end
end
local g = med(gs)
print(string.format('8 gemms alone: %.3fms (%.1f GFLOP/s); step = %.0f%% of those GEMMs', g*1e3, 0.9208/g, 100*g/mt))
