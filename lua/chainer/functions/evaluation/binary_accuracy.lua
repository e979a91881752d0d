-- functions/evaluation/binary_accuracy.lua: F.binary_accuracy(y, t).
--
-- y holds logits, t integer labels of the same shape in {0, 1}; a
-- prediction is positive when y >= 0.  Labels equal to -1 are ignored.
-- Returns the fraction of correct predictions among the non-ignored labels
-- as a 0-d Variable of y's dtype (no gradient; 0 when all are ignored).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal

local M = {}
local FN = 'binary_accuracy'

function M.binary_accuracy(y, t)
  local yd, td = args.float_array(FN, 'y', y), args.int_array(FN, 't', t)
  if not shape_equal(yd, td.shape) then
    error(string.format('%s: y and t must have the same shape (got %s and %s)', FN, T.shape_str(yd.shape),
      T.shape_str(td.shape)), 2)
  end
  local tt = td:astype('int64')
  local pred = T.ge(yd, 0):astype('int64')
  local valid = T.ne(tt, -1)
  local count = math.max(1, tonumber(T.sum(valid:astype('int64')):item()))
  local hit = tonumber(T.sum(T.logical_and(T.eq(pred, tt), valid):astype('int64')):item())
  return Variable.new_var(T.array(hit / count, yd.dtype), false)
end

return M
