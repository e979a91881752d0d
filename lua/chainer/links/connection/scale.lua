-- links/connection/scale.lua: L.Scale(axis = 1, W_shape = nil, bias_term = false,
--   bias_shape = nil, initialW = 1, initial_bias = 0).
-- forward(x) scales by W (of W_shape) broadcast from `axis`; forward(x, y)
-- scales by y; with bias_term a child Bias adds b.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Bias = require('chainer.links.connection.bias').Bias
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local Scale = Chain:extend('Scale')
local SIGNATURE = args.signature { 'axis', 'W_shape', 'bias_term', 'bias_shape', 'initialW', 'initial_bias' }

local function shape_of(s)
  if type(s) == 'number' then return { s } end
  return s
end

function Scale:init(...)
  local a = args.parse('L.Scale', SIGNATURE, select('#', ...), ...)
  self.axis = a.axis or 1
  if a.W_shape ~= nil then
    local iw = a.initialW
    if iw == nil then iw = 1 end
    self.W = U.param(I._get_initializer(iw, 'Scale'), shape_of(a.W_shape))
    if a.bias_term then self.bias = Bias(self.axis, shape_of(a.W_shape), a.initial_bias) end
  elseif a.bias_term then
    if a.bias_shape == nil then error('Scale: bias_shape is needed when W_shape is nil and bias_term is true', 3) end
    self.bias = Bias(self.axis, shape_of(a.bias_shape), a.initial_bias)
  end
end

-- forward(x) scales by W; forward(x, y) scales by y.
function Scale:forward(x, y)
  if y == nil then
    if self.W == nil then error('Scale: the link has no parameter W; call it as scale(x, y)', 2) end
    y = self.W
  end
  local z = F.scale(x, y, self.axis)
  if self.bias ~= nil then z = self.bias(z) end
  return z
end

return { Scale = Scale }
