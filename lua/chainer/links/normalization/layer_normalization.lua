-- links/normalization/layer_normalization.lua: LayerNormalization, GroupNormalization.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local M = {}

local function gb_params(self, fn, a, size)
  local gi = a.initial_gamma
  if gi == nil then gi = 1 end
  local bi = a.initial_beta
  if bi == nil then bi = 0 end
  self.gamma = U.param(I._get_initializer(gi, fn), size and { size } or nil)
  self.beta = U.param(I._get_initializer(bi, fn), size and { size } or nil)
end

-- L.LayerNormalization(size = nil, eps = 1e-6, initial_gamma = 1, initial_beta = 0)
-- normalises each row of a (N, size) input.
local LayerNormalization = Link:extend('LayerNormalization')
local lnames = { 'size', 'eps', 'initial_gamma', 'initial_beta' }
function LayerNormalization:init(...)
  local a = U.args('LayerNormalization', lnames, select('#', ...), ...)
  self.eps = a.eps or 1e-6
  gb_params(self, 'LayerNormalization', a, a.size)
end
function LayerNormalization:forward(x)
  if self.gamma._data == nil then
    local n = U.data(x).shape[2]
    self.gamma:initialize({ n })
    self.beta:initialize({ n })
  end
  return F.layer_normalization(x, self.gamma, self.beta, { eps = self.eps })
end
M.LayerNormalization = LayerNormalization

-- L.GroupNormalization(groups, size = nil, eps = 1e-5, initial_gamma = 1, initial_beta = 0)
local GroupNormalization = Link:extend('GroupNormalization')
local gnames = { 'groups', 'size', 'eps', 'initial_gamma', 'initial_beta' }
function GroupNormalization:init(...)
  local a = U.args('GroupNormalization', gnames, select('#', ...), ...)
  if type(a.groups) ~= 'number' or a.groups < 1 then
    error('GroupNormalization: groups must be a positive number (got ' .. tostring(a.groups) .. ')', 3)
  end
  self.groups = a.groups
  self.eps = a.eps or 1e-5
  gb_params(self, 'GroupNormalization', a, a.size)
end
function GroupNormalization:forward(x)
  if self.gamma._data == nil then
    local n = U.data(x).shape[2]
    self.gamma:initialize({ n })
    self.beta:initialize({ n })
  end
  return F.group_normalization(x, self.groups, self.gamma, self.beta, { eps = self.eps })
end
M.GroupNormalization = GroupNormalization

return M
