-- functions/normalization/decorrelated_batch_normalization.lua:
--   F.decorrelated_batch_normalization(x, {groups = 16, eps = 2e-5,
--     running_mean = nil, running_projection = nil, decay = 0.9})
--   F.fixed_decorrelated_batch_normalization(x, mean, projection, groups = 16)
--
-- Decorrelated batch normalization (Huang et al. 2018): the channels of x
-- (b, c, ...) are split into `groups` groups of C = c / groups; each
-- group's values, as a (C, m) matrix over the m = b * spatial positions,
-- are centred and ZCA-whitened,
--   y = V diag(w)^-1/2 V^T (x - mean),   cov = (x - mean)(x - mean)^T / m + eps I = V diag(w) V^T,
-- so the output channels of a group are zero-mean and uncorrelated.  Given
-- running_mean (groups, C) and running_projection (groups, C, C) tensors
-- are updated IN PLACE: r = decay r + (1 - decay) batch, the projection
-- with the unbiased factor m / max(m - 1, 1), as Chainer.
--
-- The gradient (DecorrelatedBatchNormalizationGrad) is Chainer's closed
-- form through the eigen-decomposition; like Chainer's it has no gradient
-- of its own: double backprop is an error (with respect to x too, where
-- Chainer's graph silently has no path).  The eigenvalues come from
-- _symmetric_eigen.lua (Jacobi, float64); the rest runs in x's dtype.
--
-- fixed_decorrelated_batch_normalization (test mode) is y = P (x - mean)
-- per group with the given mean (groups, C) and projection (groups, C, C),
-- composed of differentiable functions: x, mean and projection all get
-- their true gradients, to any order (Chainer 7.8.1 returns a wrong
-- gradient for mean and a wrongly shaped one for projection).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local Eigen = require 'chainer.functions.normalization._symmetric_eigen'

local M = {}

local FN = 'decorrelated_batch_normalization'
local FIXED_FN = 'fixed_decorrelated_batch_normalization'
local OPTIONS = args.accept { 'groups', 'eps', 'running_mean', 'running_projection', 'decay' }
local FIXED_SIGNATURE = args.signature { 'groups' }

-- (b, c, s...) <-> (g, C, m): channels first, then batch and space.
local function to_groups(x, g)
  local s = x.shape
  local perm = { 1, 0 }
  for i = 2, #s - 1 do perm[#perm + 1] = i end
  local m = s[1]
  for i = 3, #s do m = m * s[i] end
  return x:transpose(perm):reshape({ g, s[2] / g, m }), m
end

local function from_groups(y, shape)
  local mid = { shape[2], shape[1] }
  for i = 3, #shape do mid[#mid + 1] = shape[i] end
  local perm = { 1, 0 }
  for i = 2, #shape - 1 do perm[#perm + 1] = i end
  return y:reshape(mid):transpose(perm):contiguous()
end

local function groups_of(fn, xd, groups, level)
  if type(groups) ~= 'number' or groups ~= math.floor(groups) or groups < 1 then
    error(string.format('%s: groups must be a positive integer (got %s)', fn, tostring(groups)), level + 1)
  end
  if xd.ndim < 2 then
    error(string.format('%s: x must be at least 2-d (batch, channels, ...), got shape %s', fn,
      T.shape_str(xd.shape)), level + 1)
  end
  if xd.shape[2] % groups ~= 0 then
    error(string.format('%s: the channels of x (%d) must be a multiple of groups (%d)', fn, xd.shape[2], groups),
      level + 1)
  end
  return groups, xd.shape[2] / groups
end

-- A running statistic: a float tensor of the given shape, or nil.  Its
-- dtype may differ from x's (the link keeps float32 statistics, as
-- Chainer's): the update is cast to it.
local function running(fn, name, v, shape, level)
  if v == nil or v == false then return nil end
  if not T.is_tensor(v) then
    error(string.format('%s: %s must be a tensor updated in place (got %s)', fn, name, type(v)), level + 1)
  end
  local ok = #v.shape == #shape and T.is_float_dtype(v.dtype)
  for i = 1, #shape do ok = ok and v.shape[i] == shape[i] end
  if not ok then
    error(string.format('%s: %s must be a float tensor of shape %s, got %s %s', fn, name, T.shape_str(shape),
      v.dtype, T.shape_str(v.shape)), level + 1)
  end
  return v
end

local DBN = FunctionNode:extend('DecorrelatedBatchNormalization')
local DBNGrad = FunctionNode:extend('DecorrelatedBatchNormalizationGrad')
M.DecorrelatedBatchNormalization, M.DecorrelatedBatchNormalizationGrad = DBN, DBNGrad

function DBN:forward(inputs)
  self:retain_inputs({ 1 })
  local x = inputs[1]
  local dt = x.dtype
  local xg, m = to_groups(x, self.groups)
  local mean = T.mean(xg, { axis = 2, keepdims = true })
  local xc = xg - mean
  local C = xg.shape[2]
  local cov = T.matmul(xc, xc, { transb = true }) / m + T.eye(C, dt) * self.eps
  local w, v = Eigen.eigh(cov, FN)
  w, v = w:astype(dt), v:astype(dt)
  local w3 = w:reshape({ self.groups, C, 1 })
  -- PCA whitening diag(w)^-1/2 V^T xc, then back to the channel basis (ZCA)
  local y_pca = T.matmul(v, xc, { transa = true }) * T.pow(w3, -0.5)
  local y = T.matmul(v, y_pca)
  self.eigvals, self.eigvectors, self.y_hat_pca = w, v, y_pca
  if self.running_mean then
    local rm = self.running_mean
    rm:copy_((rm * self.decay + mean:reshape(rm.shape):astype(rm.dtype) * (1 - self.decay)):astype(rm.dtype))
  end
  if self.running_projection then
    local rp = self.running_projection
    local adjust = m / math.max(m - 1, 1)
    local projection = T.matmul(v * T.pow(w, -0.5):reshape({ self.groups, 1, C }), v, { transb = true })
    rp:copy_((rp * self.decay + projection:astype(rp.dtype) * ((1 - self.decay) * adjust)):astype(rp.dtype))
  end
  return { from_groups(y, x.shape) }
end

function DBN:backward(idx, gys)
  local f = setmetatable({}, DBNGrad)
  f.groups, f.eigvals, f.eigvectors, f.y_hat_pca = self.groups, self.eigvals, self.eigvectors, self.y_hat_pca
  -- x rides along (unused) so that differentiating gx with respect to x
  -- reaches DBNGrad:backward and fails loudly instead of giving nothing
  return { f:apply({ self:get_retained_inputs()[1], gys[1] })[1] }
end

-- Chainer's closed form: with gy_pca = V^T gy, f its mean over m,
-- F = gy_pca y_pca^T / m, K_ij = 1 / (w_i - w_j) (0 where equal),
-- S = sym(K^T o (diag(w) F^T + diag(w)^1/2 F diag(w)^1/2)),
--   gx = V diag(w)^-1/2 (gy_pca - f + (S - diag(F))^T y_pca).
function DBNGrad:forward(inputs)
  local gy = inputs[2]
  local g = self.groups
  local gyg, m = to_groups(gy, g)
  local w, v, y_pca = self.eigvals, self.eigvectors, self.y_hat_pca
  local C = w.shape[2]
  local gy_pca = T.matmul(v, gyg, { transa = true })
  local f = T.mean(gy_pca, { axis = 2, keepdims = true })
  local wi, wj = w:reshape({ g, C, 1 }), w:reshape({ g, 1, C })
  local diff = wi - wj
  local nonzero = T.ne(diff, 0)
  local K = T.where(nonzero, 1 / T.where(nonzero, diff, 1), 0)
  local Fc = T.matmul(gy_pca, y_pca, { transb = true }) / m
  local eye = T.eye(C, w.dtype)
  local Mdiag = Fc * eye
  local sw = T.sqrt(w)
  local inner = wi * Fc:swapaxes(1, 2) + sw:reshape({ g, C, 1 }) * Fc * sw:reshape({ g, 1, C })
  local mat = K:swapaxes(1, 2) * inner
  local S = mat + mat:swapaxes(1, 2)
  local R = gy_pca - f + T.matmul(S - Mdiag, y_pca, { transa = true })
  local gx = T.matmul(v, R * T.pow(wi, -0.5))
  return { from_groups(gx, gy.shape) }
end

function DBNGrad:backward()
  error(FN .. ': double backward is not supported (Chainer has none either)', 0)
end

function M.decorrelated_batch_normalization(x, opts)
  local xd = args.float_array(FN, 'x', x, 2)
  opts = args.options(FN, opts, OPTIONS)
  local groups, C = groups_of(FN, xd, opts.groups == nil and 16 or opts.groups, 2)
  local eps = opts.eps == nil and 2e-5 or opts.eps
  if type(eps) ~= 'number' or eps < 0 then
    error(string.format('%s: eps must be a non-negative number (got %s)', FN, tostring(eps)), 2)
  end
  local decay = opts.decay == nil and 0.9 or opts.decay
  if type(decay) ~= 'number' then
    error(string.format('%s: decay must be a number (got %s)', FN, tostring(decay)), 2)
  end
  local f = setmetatable({}, DBN)
  f.groups, f.eps, f.decay = groups, eps, decay
  f.running_mean = running(FN, 'running_mean', opts.running_mean, { groups, C }, 2)
  f.running_projection = running(FN, 'running_projection', opts.running_projection, { groups, C, C }, 2)
  return f:apply({ x })[1]
end

function M.fixed_decorrelated_batch_normalization(x, mean, projection, ...)
  local F = require 'chainer.functions'
  local a = args.parse(FIXED_FN, FIXED_SIGNATURE, select('#', ...), ...)
  local xd = args.float_array(FIXED_FN, 'x', x, 2)
  local groups, C = groups_of(FIXED_FN, xd, a.groups == nil and 16 or a.groups, 2)
  local md = args.float_array(FIXED_FN, 'mean', mean, 2)
  local pd = args.float_array(FIXED_FN, 'projection', projection, 2)
  if md.ndim ~= 2 or md.shape[1] ~= groups or md.shape[2] ~= C then
    error(string.format('%s: mean must be (groups, C) = (%d, %d), got %s', FIXED_FN, groups, C,
      T.shape_str(md.shape)), 2)
  end
  if pd.ndim ~= 3 or pd.shape[1] ~= groups or pd.shape[2] ~= C or pd.shape[3] ~= C then
    error(string.format('%s: projection must be (groups, C, C) = (%d, %d, %d), got %s', FIXED_FN, groups, C, C,
      T.shape_str(pd.shape)), 2)
  end
  if md.dtype ~= xd.dtype or pd.dtype ~= xd.dtype then
    error(string.format('%s: x, mean and projection must have one dtype (got %s, %s, %s)', FIXED_FN, xd.dtype,
      md.dtype, pd.dtype), 2)
  end
  -- the layout moves of to_groups / from_groups as differentiable functions
  local s = xd.shape
  local perm, back = { 1, 0 }, { 1, 0 }
  local m = s[1]
  for i = 2, #s - 1 do perm[#perm + 1] = i; back[#back + 1] = i end
  for i = 3, #s do m = m * s[i] end
  local xg = F.reshape(F.transpose(x, perm), { groups, C, m })
  local centred = xg - F.broadcast_to(F.reshape(mean, { groups, C, 1 }), { groups, C, m })
  local y = F.matmul(projection, centred)
  local mid = { s[2], s[1] }
  for i = 3, #s do mid[#mid + 1] = s[i] end
  return F.transpose(F.reshape(y, mid), back)
end

return M
