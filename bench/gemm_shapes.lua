-- bench/gemm_shapes.lua [THREADS] [SET]: wall-clock medians of float32 products
-- through T.gemm (preallocated outputs), one line per shape and a total.
--   SET mlp (default): the bench MLP's eight products per step (batch 100,
--       784-1000-1000-10: forward x W^T, backward gy W and gy^T x)
--   SET lstm: NStepLSTM's and the output layer's shapes (batch 20, 35 steps)
--   SET all: both
-- Uses: A/B of two library builds (run under luajit with CHAINLUA_LIB, in
-- alternating processes), and the speed of each vCPU alone:
--   taskset -c 0 luajit bench/gemm_shapes.lua 1;  taskset -c 1 luajit bench/gemm_shapes.lua 1
-- (on the bench VM one vCPU ran 7-14 % behind the other for minutes at a time).
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local chainer = require 'chainer'
local T = chainer.tensor

chainer.set_num_threads(tonumber(arg[1]) or chainer.get_num_threads())
local set = arg[2] or 'mlp'

-- {M, N, K, op(A) transposed, op(B) transposed, name}
local sets = {
  mlp = {
    { 100, 1000, 784, false, true, 'l1 forward x W1^T' },
    { 100, 1000, 1000, false, true, 'l2 forward h W2^T' },
    { 100, 10, 1000, false, true, 'l3 forward h W3^T' },
    { 10, 1000, 100, true, false, 'l3 gW = gy^T h' },
    { 100, 1000, 10, false, false, 'l3 gx = gy W3' },
    { 1000, 1000, 100, true, false, 'l2 gW = gy^T h' },
    { 100, 1000, 1000, false, false, 'l2 gx = gy W2' },
    { 1000, 784, 100, true, false, 'l1 gW = gy^T x' },
  },
  lstm = {
    { 20, 800, 200, false, true, 'recurrent h W^T' },
    { 20, 200, 800, false, false, 'recurrent gh = g W' },
    { 800, 200, 20, true, false, 'recurrent gW = g^T h' },
    { 700, 800, 200, false, true, 'inputs x W^T (35 steps at once)' },
    { 700, 10000, 200, false, true, 'output layer h W^T' },
    { 700, 200, 10000, false, false, 'output layer gh = gy W' },
    { 10000, 200, 700, true, false, 'output layer gW = gy^T h' },
  },
}
local list = sets[set] or {}
if set == 'all' then
  for _, s in ipairs(sets.mlp) do list[#list + 1] = s end
  for _, s in ipairs(sets.lstm) do list[#list + 1] = s end
end
assert(#list > 0, 'gemm_shapes.lua: SET must be mlp, lstm or all, got ' .. tostring(set))

T.random.seed(0)
local function U(shape) return T.random.uniform(-1, 1, shape, 'float32') end
local total, flop = 0, 0
for _, s in ipairs(list) do
  local M, N, K, ta, tb, name = s[1], s[2], s[3], s[4], s[5], s[6]
  local a, b, c = ta and U({ K, M }) or U({ M, K }), tb and U({ N, K }) or U({ K, N }), T.empty({ M, N })
  local opts = { transa = ta, transb = tb }
  local reps = math.max(51, math.floor(3e8 / (M * N * K)))
  for _ = 1, 10 do T.gemm(c, a, b, opts) end
  local times = {}
  for i = 1, reps do
    local t0 = B.now()
    T.gemm(c, a, b, opts)
    times[i] = B.now() - t0
  end
  table.sort(times)
  local med = times[math.floor(#times / 2) + 1]
  total, flop = total + med, flop + 2 * M * N * K
  print(string.format('%-34s %5d x %5d x %5d %s%s  %9.1f us  %6.1f GFLOP/s', name, M, N, K, ta and 'T' or 'N',
    tb and 'T' or 'N', med * 1e6, 2 * M * N * K / med / 1e9))
end
print(string.format('%-34s %29s  %9.1f us  %6.1f GFLOP/s  (%d threads)', 'sum of medians', '', total * 1e6,
  flop / total / 1e9, chainer.get_num_threads()))
