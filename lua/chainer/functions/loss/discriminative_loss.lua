-- functions/loss/discriminative_loss.lua:
-- F.discriminative_margin_based_clustering_loss(embeddings, labels, delta_v,
--   delta_d, max_embedding_dim, {norm = 1, alpha = 1.0, beta = 1.0, gamma = 0.001})
--
-- De Brabandere et al., "Semantic Instance Segmentation with a
-- Discriminative Loss Function" (arXiv:1708.02551), as Chainer computes it.
-- embeddings (B, E, H, W) with E = max_embedding_dim, labels (B, H, W)
-- integers: label c (1..E) marks instance c, anything else is background.
-- With m[c, b] the mean embedding of instance c in image b (0 when absent)
-- and |.| the L1 or L2 norm:
--   variance      sum_c [sum_{b,pixels of c} relu(|m[c, b] - e| - delta_v)^2
--                        / max(#pixels of c in the batch, 1)] / E
--   distance      sum_{c < c', b} relu(2 delta_d - |m[c, b] - m[c', b]|)^2
--                 / max(E (E - 1) / 2 * B, 1)
--   regularizer   sum_c |m[c, :, :]| / (E B)  (the norm over batch and
--                 embedding axes together, as in Chainer)
-- Returns alpha * variance, beta * distance, gamma * regularizer (three
-- 0-d Variables).  Composed of differentiable functions, so gradients of
-- every order come from them.  The pairs of the distance term are taken
-- all at once ((E, E, B) distances, the upper triangle kept) instead of
-- Chainer's loop over pairs; the values are the same.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local checks = require 'chainer.functions.loss._checks'

local M = {}
local FN = 'discriminative_margin_based_clustering_loss'

-- Chainer's arguments after labels, positional or by name in a trailing options table.
local SIGNATURE = args.signature { 'delta_v', 'delta_d', 'max_embedding_dim', 'norm', 'alpha', 'beta', 'gamma' }
local defaults = { norm = 1, alpha = 1.0, beta = 1.0, gamma = 0.001 }

local function number_arg(o, name)
  local v = o[name]
  if v == nil then v = defaults[name] end
  if v == nil then
    error(string.format('%s: %s is required (a number)', FN, name), 3)
  end
  if type(v) ~= 'number' or v ~= v then
    error(string.format('%s: %s must be a number (got %s)', FN, name, tostring(v)), 3)
  end
  return v
end

-- Chainer's two norms over `axes`.  The L2 norm's gradient at a zero vector
-- is 0 here (Chainer's sqrt gives NaN there, which its variance term hits at
-- every pixel outside an instance); the values are the same.
local function make_norm(F, p)
  if p == 1 then
    return function(x, axes) return F.sum(F.absolute(x), { axis = axes }) end
  end
  return function(x, axes)
    local s = F.sum(x * x, { axis = axes })
    local d = s.array
    local nonzero = T.gt(d, 0)
    local one = T.ones(d.shape, d.dtype, d.ptr.dev)
    local zero = T.zeros(d.shape, d.dtype, d.ptr.dev)
    return F.where(nonzero, F.sqrt(F.where(nonzero, s, one)), zero)
  end
end

function M.discriminative_margin_based_clustering_loss(embeddings, labels, ...)
  local F = require 'chainer.functions'
  local e = args.float_array(FN, 'embeddings', embeddings)
  local t = args.int_array(FN, 'labels', labels)
  checks.ndim(FN, 'embeddings', e, 4)
  local B, E, H, W = e.shape[1], e.shape[2], e.shape[3], e.shape[4]
  if t.ptr.nd ~= 3 or t.shape[1] ~= B or t.shape[2] ~= H or t.shape[3] ~= W then
    error(string.format('%s: labels must have shape (%d, %d, %d) to match embeddings of shape %s, got %s', FN,
      B, H, W, T.shape_str(e.shape), T.shape_str(t.shape)), 2)
  end
  if t.ptr.dev ~= e.ptr.dev then
    error(string.format('%s: labels are on %s but embeddings on %s', FN, t.device, e.device), 2)
  end
  local o = args.parse(FN, SIGNATURE, select('#', ...), ...)
  local delta_v, delta_d = number_arg(o, 'delta_v'), number_arg(o, 'delta_d')
  local C = o.max_embedding_dim
  if C == nil then error(string.format('%s: max_embedding_dim is required (a positive integer)', FN), 2) end
  if type(C) ~= 'number' or C ~= math.floor(C) or C <= 0 then
    error(string.format('%s: max_embedding_dim must be a positive integer (got %s)', FN, tostring(C)), 2)
  end
  if C ~= E then
    error(string.format('%s: max_embedding_dim %d must equal embeddings.shape[1] (got %s, shape %s)', FN, C, E,
      E, T.shape_str(e.shape)), 2)
  end
  local p = o.norm
  if p == nil then p = defaults.norm end
  if p ~= 1 and p ~= 2 then
    error(string.format('%s: norm must be 1 or 2 (got %s)', FN, tostring(p)), 2)
  end
  local alpha, beta, gamma = number_arg(o, 'alpha'), number_arg(o, 'beta'), number_arg(o, 'gamma')
  local norm = make_norm(F, p)
  local dt, dev = e.dtype, e.ptr.dev

  -- instance masks (C, B, 1, H, W): ms[c] = (labels == c + 1), constants
  local ids = T.arange(1, C + 1, 1, 'int64', dev):reshape({ C, 1, 1, 1, 1 })
  local ms = T.eq(t:reshape({ 1, B, 1, H, W }), ids):astype(dt)
  local emb = F.reshape(embeddings, { 1, B, E, H, W })

  -- instance means (C, B, E)
  local pixels = T.maximum(T.sum(ms, { axis = { 2, 3, 4 } }), 1):reshape({ C, B, 1 })
  local mns = F.sum(emb * ms, { axis = { 3, 4 } }) / pixels

  local l_reg = F.sum(norm(mns, { 1, 2 })) * (1 / (C * B))

  local l_var = norm((F.reshape(mns, { C, B, E, 1, 1 }) - emb) * ms, 2)   -- (C, B, H, W)
  l_var = F.relu(l_var - delta_v) ^ 2
  l_var = F.sum(l_var, { axis = { 1, 2, 3 } }) / T.maximum(T.sum(ms, { axis = { 1, 2, 3, 4 } }), 1)
  l_var = F.sum(l_var) * (1 / C)

  local l_dist
  if C > 1 then
    local dist = norm(F.reshape(mns, { C, 1, B, E }) - F.reshape(mns, { 1, C, B, E }), 3)   -- (C, C, B)
    local hinge = F.relu(2 * delta_d - dist) ^ 2
    local pos = T.arange(0, C, 1, 'int64', dev)
    local upper = T.lt(pos:reshape({ C, 1 }), pos:reshape({ 1, C })):astype(dt):reshape({ C, C, 1 })
    local pairs = C * (C - 1) / 2
    l_dist = F.sum(hinge * upper) * (1 / math.max(pairs * B, 1))
  else
    -- no pair of instances: Chainer's 0.0, as a constant Variable
    l_dist = Variable.new_var(T.zeros({}, dt, dev), false)
  end
  return l_var * alpha, l_dist * beta, l_reg * gamma
end

return M
