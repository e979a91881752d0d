-- functions/loss/vae.lua: the losses of variational autoencoders.
--   F.gaussian_kl_divergence(mean, ln_var, {reduce = 'sum'})
--     KL(N(mean, exp(ln_var)) || N(0, I)) = (mean^2 + exp(ln_var) - ln_var - 1) / 2
--   F.gaussian_nll(x, mean, ln_var, {reduce = 'sum'})
--     -log N(x; mean, exp(ln_var)) = (ln_var + log 2π)/2 + (x - mean)^2 exp(-ln_var)/2
--   F.bernoulli_nll(x, y, {reduce = 'sum'})
--     -log B(x; sigmoid(y)) = softplus(y) - x y   (y: logits)
-- reduce: 'sum' (a 0-d Variable), 'mean' (over all elements) or 'no'
-- (elementwise).  Composed of FunctionNodes; double backprop works.
local args = require 'chainer._args'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}

local SIGNATURE = args.signature { 'reduce' }

local function finish(fn, loss, reduce)
  local r = checks.reduce(fn, reduce, 'sum', { 'sum', 'mean', 'no' }, 2)
  if r == 'sum' then return U.F('sum')(loss) end
  if r == 'mean' then return U.mean_all(loss) end
  return loss
end

function M.gaussian_kl_divergence(mean, ln_var, opts)
  local fn = 'gaussian_kl_divergence'
  local m, v = args.float_array(fn, 'mean', mean), args.array(fn, 'ln_var', ln_var)
  checks.pair(fn, 'mean', m, 'ln_var', v)
  local loss = (mean * mean + U.F('exp')(ln_var) - ln_var - 1) * 0.5
  return finish(fn, loss, args.parse(fn, SIGNATURE, 1, opts).reduce)
end

function M.gaussian_nll(x, mean, ln_var, opts)
  local fn = 'gaussian_nll'
  local xd, m, v = args.float_array(fn, 'x', x), args.array(fn, 'mean', mean), args.array(fn, 'ln_var', ln_var)
  checks.pair(fn, 'x', xd, 'mean', m)
  checks.pair(fn, 'x', xd, 'ln_var', v)
  local x_prec = U.F('exp')(-ln_var)
  local x_diff = x - mean
  local x_power = x_diff * x_diff * x_prec * -0.5
  local loss = (ln_var + math.log(2 * math.pi)) * 0.5 - x_power
  return finish(fn, loss, args.parse(fn, SIGNATURE, 1, opts).reduce)
end

function M.bernoulli_nll(x, y, opts)
  local fn = 'bernoulli_nll'
  local xd, yd = args.float_array(fn, 'x', x), args.array(fn, 'y', y)
  checks.pair(fn, 'x', xd, 'y', yd)
  local loss = U.softplus(y) - x * y
  return finish(fn, loss, args.parse(fn, SIGNATURE, 1, opts).reduce)
end

return M
