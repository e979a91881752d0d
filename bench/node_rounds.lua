-- bench/node_rounds.lua [ROUNDS]: the `node` workload as bench/run times it
-- (bench/workloads.lua W.node: 200 warm-up iterations, then rounds of 200),
-- with a getppid() call after every 200 iterations, where bench/node_rounds
-- makes callgrind dump its counts: instructions and cache misses of the
-- warm-up and of each timed round, with no jit.flush (unlike
-- bench/icount_rounds), so the JIT's warm-up shows as it does in the bench.
local ffi = require 'ffi'
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
pcall(ffi.cdef, 'int getppid(void);')   -- (chainer._libc may have declared it)
local a = chainer.Variable(T.full({ 10 }, 1.001))
local b = chainer.Variable(T.full({ 10 }, 0.001))
local x = chainer.Variable(T.full({ 10 }, 0.5))
local function step()
  local h = x
  for _ = 1, 50 do h = h * a + b end
  F.sum(h):backward()
  x:cleargrad() a:cleargrad() b:cleargrad()
end
for _ = 1, tonumber(arg[1]) or 6 do
  for _ = 1, 200 do step() end
  ffi.C.getppid()
end
