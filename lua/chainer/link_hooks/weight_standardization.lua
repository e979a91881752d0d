-- link_hooks/weight_standardization.lua: WeightStandardization, a link hook
-- that standardizes a link's weight per output unit before every forward
-- (Qiao et al., 2019; Chainer's chainer.link_hooks.WeightStandardization).
--
--   local l = L.Convolution2D(3, 8, 3)
--   l:add_hook(chainer.link_hooks.WeightStandardization())   -- (eps, {weight_name, name})
--
-- For each output unit (axis 0 of the weight) over all other axes:
--   W_hat = (W - mean) / (std + eps),  std = sqrt(mean((W - mean)^2))
-- (Chainer's semantics: eps is added to the standard deviation, the
-- variance is the biased one).  The standardization is built from
-- differentiable functions, so gradients reach W.  A unit whose weights
-- are all equal (std 0) gets a zero gradient through std instead of NaN,
-- as Chainer's masked backward does.
local args = require 'chainer._args'
local F = require 'chainer.functions'
local LinkHook = require('chainer.link_hook').LinkHook
local W_ = require 'chainer.link_hooks._weight'

local NAME = 'WeightStandardization'
local WS = LinkHook:extend(NAME)
WS.name = NAME

local SIGNATURE = args.signature { 'eps', 'weight_name', 'name' }

function WS:init(...)
  local a = args.parse(NAME, SIGNATURE, select('#', ...), ...)
  local eps = W_.eps_option(NAME, a.eps, 1e-5)
  local weight_name = W_.weight_name_option(NAME, a)
  self.eps = eps
  self.weight_name = weight_name
  if a.name ~= nil then self.name = a.name end
end

WS.scope = W_.refuse_scope(NAME)
WS.register = W_.refuse_scope(NAME)

function WS:added(link)
  if link == nil then W_.refuse_scope(NAME)() end
  W_.weight_of(NAME, link, self.weight_name, 3)
end

-- The standardized weight (a Variable) of W (a Variable with ndim >= 2).
local function standardize(W, eps)
  if W.ndim < 2 then
    error(string.format('%s: the weight must have 2 or more dimensions (got %d)', NAME, W.ndim), 4)
  end
  local axes = {}
  for i = 1, W.ndim - 1 do axes[i] = i end
  local shape = W.shape
  local mu = F.broadcast_to(F.mean(W, { axis = axes, keepdims = true }), shape)
  local centered = W - mu
  local var = F.mean(centered * centered, { axis = axes, keepdims = true })
  -- sqrt has an infinite slope at 0; the floor keeps a constant unit's
  -- gradient finite (its centered weights are 0, so it is 0) and is far
  -- below eps, so it changes no value.
  local std = F.sqrt(F.clip(var, 1e-30, math.huge)) + eps
  return centered / F.broadcast_to(std, shape)
end
WS.standardize = standardize

function WS:forward_preprocess(cb)
  local link = cb.link
  local W = W_.weight_of(NAME, link, self.weight_name, 3)
  if not W_.is_initialized(W) then W_.initialize_from_input(NAME, link, cb.args[1]) end
  self.original_weight = W
  rawset(link, self.weight_name, standardize(W, self.eps))
end

function WS:forward_postprocess(cb)
  local W = self.original_weight
  if W ~= nil then
    rawset(cb.link, self.weight_name, W)
    self.original_weight = nil
  end
end

return WS
