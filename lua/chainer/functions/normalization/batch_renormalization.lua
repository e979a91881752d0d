-- functions/normalization/batch_renormalization.lua:
-- F.batch_renormalization(x, gamma, beta, rmax, dmax, {eps = 2e-5,
--   running_mean =, running_var =, decay = 0.9, update_statistics = false,
--   axis = nil})
-- Batch renormalization (Ioffe 2017): with sigma = sqrt(var_B + eps) and
-- running sigma_R = sqrt(running_var + eps),
--   r = clip(sigma / sigma_R, 1/rmax, rmax), d = clip((mean_B - running_mean) / sigma_R, -dmax, dmax)
--   y = gamma * ((x - mean_B) / sigma * r + d) + beta
-- r and d are constants for the gradient (as in the paper and Chainer).
-- Missing running statistics start at zero (mean) and zero (var), as in
-- Chainer; with update_statistics the given tensors are updated in place
-- like Chainer's: decay, and the unbiased batch variance var_B * m/(m-1)
-- (without eps).
-- Composed of differentiable functions.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'
local N = require 'chainer.functions.normalization._util'
local BN = require 'chainer.functions.normalization.batch_normalization'

local M = {}

local OPTIONS = args.accept { 'eps', 'running_mean', 'running_var', 'decay', 'update_statistics', 'axis' }

function M.batch_renormalization(x, gamma, beta, rmax, dmax, opts)
  local fn = 'batch_renormalization'
  local xd = args.float_array(fn, 'x', x, 2)
  if type(rmax) ~= 'number' or rmax < 1 then
    error(string.format('%s: rmax must be a number >= 1 (got %s)', fn, tostring(rmax)), 2)
  end
  if type(dmax) ~= 'number' or dmax < 0 then
    error(string.format('%s: dmax must be a number >= 0 (got %s)', fn, tostring(dmax)), 2)
  end
  opts = args.options(fn, opts, OPTIONS)
  local L = N.layout(fn, xd.shape, opts.axis, 2)
  BN._check_param(fn, 'gamma', gamma, L, xd, 2)
  BN._check_param(fn, 'beta', beta, L, xd, 2)
  local eps = BN._number_opt(fn, 'eps', opts.eps, 2e-5, 2)
  local decay = BN._number_opt(fn, 'decay', opts.decay, 0.9, 2)
  local rm = opts.running_mean and BN._check_param(fn, 'running_mean', opts.running_mean, L, xd, 2) or nil
  local rv = opts.running_var and BN._check_param(fn, 'running_var', opts.running_var, L, xd, 2) or nil
  local dt = xd.dtype
  local F = H.F()
  local function E(v) return F.broadcast_to(F.reshape(v, L.eshape), L.xshape) end
  x = Variable.as_variable(x)
  local inv_m = 1 / L.m
  local mean = F.sum(x, { axis = L.axes }) * inv_m
  local xc = x - E(mean)
  local var = F.sum(xc * xc, { axis = L.axes }) * inv_m
  local std = F.sqrt(var + eps)
  -- r and d are computed from the batch outside any node (and the statistics
  -- updated there): a static graph keeps running this define-by-run
  require('chainer.graph_optimizations.trace').refuse('F.batch_renormalization computes r and d outside its nodes')
  local rmean = rm or T.zeros(L.gshape, dt)
  local rsig = T.sqrt((rv or T.zeros(L.gshape, dt)) + eps)
  local r = T.clip(std.array / rsig, 1 / rmax, rmax)
  local d = T.clip((mean.array - rmean) / rsig, -dmax, dmax)
  if opts.update_statistics then
    local adjust = L.m / math.max(L.m - 1, 1)
    if rm then rm:copy_(rm * decay + mean.array * (1 - decay)) end
    if rv then rv:copy_(rv * decay + var.array * ((1 - decay) * adjust)) end
  end
  local x_hat = xc / E(std)
  return (x_hat * E(r) + E(d)) * E(gamma) + E(beta)
end

return M
