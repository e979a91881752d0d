-- functions/array/permutate.lua: F.permutate(x, indices, axis = 0,
-- inv = false): y[i] = x[indices[i]] along axis (inv: y[indices[i]] = x[i]).
-- A gather (Take) whose gradient is the matching scatter (TakeGrad).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local U = require 'chainer.functions.array._util'
local take = require('chainer.functions.array._take')._take

local M = {}

local SIGNATURE = args.signature { 'indices', 'axis', 'inv' }

function M.permutate(x, indices, axis, inv)
  local v = args.parse('permutate', SIGNATURE, 3, indices, axis, inv)
  local d = args.array('permutate', 'x', x)
  local idx = Variable.as_array(v.indices)
  if type(idx) == 'table' and not T.is_tensor(idx) then idx = T.array(idx, 'int64') end
  if not T.is_tensor(idx) or not idx.dtype:find('int') then
    error('permutate: indices must be an integer tensor (a permutation of 0..n-1)', 2)
  end
  if d.ptr.nd == 0 then error('permutate: x must be at least 1-d', 2) end
  axis = U.axis('permutate', U.int('permutate', v.axis, 'axis', 0), d.ptr.nd)
  local n = d.shape[axis + 1]
  if idx.ptr.nd ~= 1 or idx.shape[1] ~= n then
    error(string.format('permutate: indices must be 1-d with %d entries (the size of axis %d), got shape %s', n,
      axis, T.shape_str(idx.shape)), 2)
  end
  local seen, list = {}, idx:tolist()
  for i = 1, n do
    local p = list[i]
    if p < 0 or p >= n or seen[p] then
      error('permutate: indices is not a permutation of 0..' .. (n - 1) .. ' (found ' .. p .. ')', 2)
    end
    seen[p] = true
  end
  idx = idx:astype('int64')
  if v.inv then idx = T.argsort(idx) end
  return take(x, idx, axis, 'Permutate')
end

return M
