-- bench/mlp_phases.lua N: each phase of one MLP training step (l1, relu, l2,
-- relu, l3, softmax CE, cleargrads, backward, update) and the step's 8 GEMMs
-- alone (set NOGEMM=1 to skip those), over N steps.  Threads: NT (default 1).
--   default:     the best process CPU time of each phase over N steps (30)
--   CLOCK=wall:  wall-clock medians of N steps (300) after 300 warm-up steps:
--                what the step takes on several threads (session 17's A/B of
--                two library builds: under luajit with CHAINLUA_LIB, in
--                alternating processes)

package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local wall = os.getenv('CLOCK') == 'wall'
local clock = wall and B.now or B.cpu_time
local N = tonumber(arg[1] or (wall and 300 or 30))
local warmup = wall and 300 or 0
-- best (CPU time: the least disturbed run) or median (wall time)
local function summary(v)
  table.sort(v)
  return wall and v[math.floor(#v / 2) + 1] or v[1]
end

local model, opt, x, t = B.mlp_step_fixture()
local names = { 'l1', 'relu1', 'l2', 'relu2', 'l3', 'sce', 'clear', 'backward', 'update' }
local ph, total = {}, {}
for _, n in ipairs(names) do ph[n] = {} end
for it = 1, warmup + N do
  local t0 = clock()
  local h = model.l1(x); local t1 = clock()
  h = F.relu(h); local t2 = clock()
  h = model.l2(h); local t3 = clock()
  h = F.relu(h); local t4 = clock()
  h = model.l3(h); local t5 = clock()
  local loss = F.softmax_cross_entropy(h, t); local t6 = clock()
  model:cleargrads(); local t7 = clock()
  loss:backward(); local t8 = clock()
  opt:update(); local t9 = clock()
  if it > warmup then
    local d = { t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6, t8 - t7, t9 - t8 }
    for i, n in ipairs(names) do table.insert(ph[n], d[i]) end
    table.insert(total, t9 - t0)
  end
end
local s = 0
for _, n in ipairs(names) do
  local v = summary(ph[n])
  io.write(string.format('%s=%.3fms ', n, v * 1e3))
  s = s + v
end
local step = summary(total)
print(string.format('\nsum of the phases %.3fms, the step %.3fms (%s) => %.0f samples/s', s * 1e3, step * 1e3,
  wall and 'wall medians' or 'best CPU times', 100 / step))
if os.getenv('NOGEMM') then return end

-- the step's 8 GEMMs alone
local products = B.mlp_products(model, x)
local gemms = {}
for it = 1, (wall and 50 or 0) + N do
  local t0 = clock()
  products()
  if it > (wall and 50 or 0) then table.insert(gemms, clock() - t0) end
end
local g = summary(gemms)
print(string.format('8 gemms alone: %.3fms (%.1f GFLOP/s) => gemm-only ceiling %.0f samples/s; the step is %.0f%% GEMMs',
  g * 1e3, B.MLP_PRODUCT_FLOP / g / 1e9, 100 / g, 100 * g / step))
