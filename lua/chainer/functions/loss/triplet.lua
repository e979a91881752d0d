-- functions/loss/triplet.lua:
--   F.triplet(anchor, positive, negative, {margin = 0.2, reduce = 'mean'})
--
-- Rows (N, K); loss = max(0, |a - p|^2 - |a - n|^2 + margin) per row,
-- averaged over N for 'mean', (N,) for 'no'.  Composed of FunctionNodes.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}
local FN = 'triplet'
local SIGNATURE = args.signature { 'margin', 'reduce' }

function M.triplet(anchor, positive, negative, margin, reduce)
  local a, p, n = args.float_array(FN, 'anchor', anchor), args.array(FN, 'positive', positive), args.array(FN, 'negative', negative)
  local o = args.parse(FN, SIGNATURE, 2, margin, reduce)
  if a.ptr.nd < 2 then
    error(string.format('%s: anchor must have at least 2 dimensions (N, K), got shape %s', FN, T.shape_str(a.shape)), 2)
  end
  checks.pair(FN, 'anchor', a, 'positive', p)
  checks.pair(FN, 'anchor', a, 'negative', n)
  local m = o.margin
  if m == nil then m = 0.2 end
  if type(m) ~= 'number' or m <= 0 then
    error(string.format('%s: margin must be a positive number (got %s)', FN, tostring(m)), 2)
  end
  local red = checks.reduce(FN, o.reduce, 'mean', { 'mean', 'no' })
  local dp, dn = anchor - positive, anchor - negative
  local axes = {}
  for i = 1, a.ptr.nd - 1 do axes[i] = i end
  local dist = U.F('sum')(dp * dp - dn * dn, { axis = axes }) + m
  local h = dist * T.gt(dist.array, 0):astype(a.dtype)
  if red == 'mean' then return U.batch_mean(h, a.shape[1]) end
  return h
end

return M
