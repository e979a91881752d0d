-- bench/omp_small.lua: small tensor ops must not enter OpenMP.
--
-- A `#pragma omp parallel for if (cond)` whose condition is false still
-- calls into libgomp, which builds a team of one and ends with a futex
-- syscall (~0.4 us, more than a 10-element op's arithmetic).  The runtime
-- therefore branches to a plain loop for small work (CH_PAR_FOR in
-- runtime/core/internal.h).  This script runs each small op N times so that
-- any OpenMP region entered per call shows up as N futex calls:
--
--   OMP_NUM_THREADS=2 strace -f -c -e trace=futex \
--     build/chainlua bench/omp_small.lua OP 10000
--
-- (or `luajit` with CHAINLUA_LIB and LUA_PATH set as in bench/icount).
-- Compare the futex count with N = 10000 against N = 0 (start-up alone):
-- the difference should be 0 for every OP.  OP is one of the names below,
-- or `all` (every op, one after another); `list` prints the names.
-- Each op works on 10-element float32 tensors.
local chainer = require 'chainer'
local T = chainer.tensor
local F = require 'chainer.functions'
local O = require 'chainer.optimizers'
local Link = chainer.Link or require('chainer.link').Link

local op = arg[1] or 'all'
local n = tonumber(arg[2]) or 10000

local x = T.arange(10, 'float32')
local y = T.zeros({ 10 }, 'float32')
local idx = T.array({ 0, 3, 9, 2 }, 'int64')
local x2 = T.random.uniform(-1, 1, { 2, 5 }, 'float32')

-- one optimizer on a 10-element parameter with a fixed gradient
local function optimizer(name, hp)
  local m = Link()
  local p = chainer.Parameter(T.zeros({ 10 }, 'float32'))
  m:add_param('w', p)
  local opt = O[name](hp):setup(m)
  local g = T.full({ 10 }, 0.01, 'float32')
  return function()
    p.grad = g
    opt:update()
  end
end

local ops = {
  sum = function() T.sum(x) end,
  zeros = function() T.zeros({ 10 }, 'float32') end,
  fill = function() y:fill_(1.5) end,
  copy = function() x:copy() end,
  take = function() T.take(x, idx) end,
  softmax = function() F.softmax(x2) end,
  sgd = optimizer('SGD', { lr = 0.01 }),
  adam = optimizer('Adam', { alpha = 0.001 }),
  uniform = function() T.random.uniform(0, 1, { 10 }, 'float32') end,
  normal = function() T.random.normal(0, 1, { 10 }, 'float32') end,
}
local names = {}
for k in pairs(ops) do names[#names + 1] = k end
table.sort(names)

if op == 'list' then
  print(table.concat(names, ' '))
  os.exit(0)
end
local run = {}
if op == 'all' then
  for _, k in ipairs(names) do run[#run + 1] = ops[k] end
else
  assert(ops[op], 'omp_small: unknown op ' .. op .. ' (try list)')
  run[1] = ops[op]
end
-- libgomp keeps its worker threads in a pool after the first parallel
-- region; only then does a region with a false if() clause make the futex
-- call, so one big op runs first, as it would in any real program
T.sum(T.ones({ 1000000 }, 'float32'))
for _, f in ipairs(run) do
  for _ = 1, n do f() end
end
