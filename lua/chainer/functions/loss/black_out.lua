-- functions/loss/black_out.lua: F.black_out(x, t, W, samples, {reduce = 'mean'})
-- (BlackOut, Ji et al. 2016).
--
-- x (B, D), t (B,) integer targets, W (V, D) output embeddings, samples
-- (B, S) integer negative ids.  With p = W[t]·x, n_k = W[samples_k]·x and
-- logZ = log(exp(p) + sum_k exp(n_k)):
--   loss = -(p - logZ + sum_k log(1 - exp(n_k - logZ)))
-- averaged over the batch ('mean') or per row (B,) ('no').  Composed of
-- FunctionNodes: differentiable in x and W, double backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}
local FN = 'black_out'
local SIGNATURE = args.signature { 'reduce' }

function M.black_out(x, t, W, samples, opts)
  local xd, td, wd, sd = args.float_array(FN, 'x', x), args.int_array(FN, 't', t), args.array(FN, 'W', W), args.int_array(FN, 'samples', samples)
  local b, d = checks.embedding_batch(FN, xd, td, wd)
  if sd.ptr.nd ~= 2 or sd.shape[1] ~= b then
    error(string.format('%s: samples must have shape (%d, S), got %s', FN, b, T.shape_str(sd.shape)), 2)
  end
  local o = args.parse(FN, SIGNATURE, 1, opts)
  local red = checks.reduce(FN, o.reduce, 'mean', { 'mean', 'no' })
  local v, s = wd.shape[1], sd.shape[2]
  checks.labels(FN, 't', td, v)
  checks.labels(FN, 'samples', sd, v)
  local F = U.F
  -- row dot products as products and sums (tiny batched matmuls cost more)
  local xb = F('broadcast_to')(F('reshape')(x, { b, 1, d }), { b, s, d })
  local neg = F('sum')(U.gather_rows(W, sd:astype('int64')) * xb, { axis = 2 })       -- (B, S)
  local pos = F('sum')(U.gather_rows(W, td:astype('int64')) * x, { axis = 1 })        -- (B,)
  -- logZ over [pos, neg] with a constant per-row shift for stability
  local m = T.maximum(T.amax(neg.array, { axis = 1 }), pos.array)
  local mb = m:reshape({ b, 1 }):broadcast_to({ b, s })
  local z = F('exp')(pos - m) + F('sum')(F('exp')(neg - mb), { axis = 1 })
  local logz = F('log')(z) + m
  local ny = F('exp')(neg - F('broadcast_to')(F('reshape')(logz, { b, 1 }), { b, s }))
  local per = -(pos - logz + F('sum')(F('log')(1 - ny), { axis = 1 }))
  if red == 'mean' then return U.batch_mean(per, b) end
  return per
end

return M
