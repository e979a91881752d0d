-- What the programs that chainermn_spec.lua starts (ranks_program.lua,
-- tools_program.lua) share: the communicator named on their command line
-- (default 'flat'), the check helpers (rank_checks.lua), max_diff and the
-- small MLP they train.
local chainer = require 'chainer'
local chainermn = require 'chainermn'
local T, L, F = chainer.tensor, chainer.links, chainer.functions

local S = { chainer = chainer, chainermn = chainermn, T = T, L = L, F = F }
S.comm = chainermn.create_communicator(arg[1] or 'flat')
S.rank, S.size = S.comm.rank, S.comm.size
S.check, S.expect = require('spec.chainermn.rank_checks')(S.rank)

function S.max_diff(a, b) return (a - b):abs():max():item() end

-- A 5-16-3 tanh MLP of `dtype`, initialised from `seed`.
function S.mlp(seed, dtype)
  chainer.config.dtype = dtype
  T.random.seed(seed)
  local m = chainer.Sequential(L.Linear(5, 16), F.tanh, L.Linear(16, 3))
  chainer.config.dtype = 'float32'
  return m
end

return S
