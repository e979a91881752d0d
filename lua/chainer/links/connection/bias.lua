-- links/connection/bias.lua: L.Bias(axis = 1, shape = nil, initial_bias = 0).
-- forward(x) adds b (of `shape`) broadcast from `axis`; forward(x, y) adds y
-- instead (a Bias without shape has no parameter).
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local Bias = Link:extend('Bias')
local SIGNATURE = args.signature { 'axis', 'shape', 'initial_bias' }

function Bias:init(...)
  local a = args.parse('L.Bias', SIGNATURE, select('#', ...), ...)
  self.axis = a.axis or 1
  if a.shape ~= nil then
    local ib = a.initial_bias
    if ib == nil then ib = 0 end
    self.b = U.param(I._get_initializer(ib, 'Bias'), type(a.shape) == 'number' and { a.shape } or a.shape)
  end
end

function Bias:forward(x, y)
  if y == nil then
    if self.b == nil then error('Bias: the link has no parameter b; call it as bias(x, y)', 2) end
    y = self.b
  end
  return F.bias(x, y, self.axis)
end

return { Bias = Bias }
