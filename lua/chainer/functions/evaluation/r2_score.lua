-- functions/evaluation/r2_score.lua:
--   F.r2_score(pred, true_, {sample_weight = nil, multioutput = 'uniform_average'})
--
-- The coefficient of determination per output column (axis 0 holds the
-- samples): 1 - SS_res / SS_tot, 0 for a column whose SS_tot is 0.
-- 'uniform_average' returns their mean (0-d), 'raw_values' the columns.
-- A Variable of pred's dtype, no gradient.  sample_weight is not supported
-- (as in Chainer).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local checks = require 'chainer.functions.loss._checks'

local M = {}
local FN = 'r2_score'
local OPTIONS = args.accept { 'sample_weight', 'multioutput' }

function M.r2_score(pred, true_, opts)
  local pd, td = args.float_array(FN, 'pred', pred), args.array(FN, 'true', true_)
  checks.pair(FN, 'pred', pd, 'true', td)
  local o = args.options(FN, opts, OPTIONS)
  if o.sample_weight ~= nil and o.sample_weight ~= false then
    error(FN .. ': sample_weight is not supported (as in Chainer); leave it nil', 2)
  end
  local mo = o.multioutput or 'uniform_average'
  if mo ~= 'uniform_average' and mo ~= 'raw_values' then
    error(string.format("%s: multioutput must be 'uniform_average' or 'raw_values' (got %s)", FN, tostring(mo)), 2)
  end
  if pd.ptr.nd == 0 then
    error(FN .. ': pred must have at least 1 dimension (the samples on axis 0)', 2)
  end
  local p, t = pd:astype('float64'), td:astype('float64')
  local d = p - t
  local ss_res = T.sum(d * d, { axis = 0 })
  local c = t - T.mean(t, { axis = 0, keepdims = true })
  local ss_tot = T.sum(c * c, { axis = 0 })
  local zero = T.eq(ss_tot, 0)
  local ret = T.where(zero, 0, 1 - ss_res / T.where(zero, 1, ss_tot))
  if mo == 'uniform_average' then ret = T.mean(ret) end
  return Variable.new_var(ret:astype(pd.dtype), false)
end

return M
