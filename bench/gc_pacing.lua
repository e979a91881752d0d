-- bench/gc_pacing.lua MODE N: counts (does not time) the full collections, the new memory
-- (ch_fresh_bytes: blocks the allocator took from the system) and the peak live bytes over N
-- iterations of a loop: matmul (T.matmul 1024), mlp_small (784-100-10 b8 SGD step), mlp
-- (784-1000-1000-10 b100), lstm (35 steps of L.LSTM(650) at batch 20, forward and backward).
-- Compares GC pacing rules (lua/chainer/tensor/core.lua) independently of the machine's load.
local ncollect = 0
local cg = collectgarbage
collectgarbage = function(opt, ...) if opt == nil or opt == 'collect' then ncollect = ncollect + 1 end return cg(opt, ...) end
local chainer = require 'chainer'
local F, L, O, T = chainer.functions, chainer.links, chainer.optimizers, chainer.tensor
local C = require('chainer._lib').C
pcall(require('ffi').cdef, 'int64_t ch_fresh_bytes(void);')
local mode, n = arg[1], tonumber(arg[2])
local step
if mode == 'mlp' or mode == 'mlp_small' then
  local h = mode == 'mlp' and 1000 or 100
  local b = mode == 'mlp' and 100 or 8
  local model = chainer.Sequential(L.Linear(784, h), F.relu, L.Linear(h, h), F.relu, L.Linear(h, 10))
  local opt = O.SGD(0.01); opt:setup(model)
  local x = T.random.uniform(-1, 1, { b, 784 }, 'float32')
  local t = T.random.randint(0, 10, { b }, 'int32')
  step = function()
    local loss = F.softmax_cross_entropy(model(x), t)
    model:cleargrads(); loss:backward(); opt:update()
  end
elseif mode == 'matmul' then
  local x = T.random.uniform(-1, 1, { 1024, 1024 }, 'float32')
  step = function() T.matmul(x, x) end
elseif mode == 'lstm' then
  local lstm = L.LSTM(650, 650)
  local x = T.random.uniform(-1, 1, { 20, 650 }, 'float32')
  step = function() lstm:reset_state(); local s; for i = 1, 35 do local h = lstm(x); s = s and s + F.sum(h) or F.sum(h) end; s:backward() end
end
local f0, c0, t0 = tonumber(C.ch_fresh_bytes and C.ch_fresh_bytes() or 0), ncollect, os.clock()
local peak = 0
for i = 1, n do step(); local l = tonumber(C.ch_live_bytes(-1)); if l > peak then peak = l end end
print(string.format('%s n=%d collections %d fresh %.1f MiB peak live %.1f MiB cpu %.2f s', mode, n, ncollect - c0,
  (tonumber(C.ch_fresh_bytes()) - f0) / 2^20, peak / 2^20, os.clock() - t0))
