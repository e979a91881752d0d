-- links/normalization/layer_normalization.lua: L.LayerNormalization(size = nil,
--   eps = 1e-6, initial_gamma = 1, initial_beta = 0)
-- Normalises each row of a (N, size) input, then scales by gamma and shifts
-- by beta; size nil: inferred at the first call.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local LayerNormalization = Link:extend('LayerNormalization')
local SIGNATURE = args.signature { 'size', 'eps', 'initial_gamma', 'initial_beta' }

function LayerNormalization:init(...)
  local a = args.parse('L.LayerNormalization', SIGNATURE, select('#', ...), ...)
  self.eps = a.eps or 1e-6
  U.gamma_beta(self, 'LayerNormalization', a.initial_gamma, a.initial_beta, a.size)
end

function LayerNormalization:forward(x)
  U.init_gamma_beta(self, x)
  return F.layer_normalization(x, self.gamma, self.beta, { eps = self.eps })
end

return { LayerNormalization = LayerNormalization }
