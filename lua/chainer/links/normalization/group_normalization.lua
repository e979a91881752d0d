-- links/normalization/group_normalization.lua: L.GroupNormalization(groups,
--   size = nil, eps = 1e-5, initial_gamma = 1, initial_beta = 0)
-- Normalises each group of channels of each example, then scales by gamma
-- and shifts by beta (per channel); size nil: inferred at the first call.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local GroupNormalization = Link:extend('GroupNormalization')
local SIGNATURE = args.signature { 'groups', 'size', 'eps', 'initial_gamma', 'initial_beta' }

function GroupNormalization:init(...)
  local a = args.parse('L.GroupNormalization', SIGNATURE, select('#', ...), ...)
  if type(a.groups) ~= 'number' or a.groups < 1 then
    error('GroupNormalization: groups must be a positive number (got ' .. tostring(a.groups) .. ')', 3)
  end
  self.groups = a.groups
  self.eps = a.eps or 1e-5
  U.gamma_beta(self, 'GroupNormalization', a.initial_gamma, a.initial_beta, a.size, true)
end

function GroupNormalization:forward(x)
  U.init_gamma_beta(self, x)
  return F.group_normalization(x, self.groups, self.gamma, self.beta, { eps = self.eps })
end

return { GroupNormalization = GroupNormalization }
