-- links/activation/swish.lua: L.Swish(beta_shape, beta_init = 1).
-- y = x * sigmoid(beta * x); beta_shape nil infers {x.shape[2]} at the first call.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local Swish = Link:extend('Swish')
local SIGNATURE = args.signature { 'beta_shape', 'beta_init' }

function Swish:init(...)
  local beta_shape = ...
  local a
  if select('#', ...) == 1 and type(beta_shape) == 'table' and next(beta_shape) == nil then
    a = { beta_shape = beta_shape }     -- Swish({}): a scalar beta (Chainer's shape ()), not empty options
  else
    a = args.parse('L.Swish', SIGNATURE, select('#', ...), ...)
  end
  beta_shape = a.beta_shape
  if type(beta_shape) == 'number' then beta_shape = { beta_shape } end
  self.beta = U.param(I._get_initializer(a.beta_init == nil and 1.0 or a.beta_init, 'Swish'), beta_shape)
end

function Swish:forward(x)
  if self.beta._data == nil then self.beta:initialize({ U.input_data('swish', x).shape[2] }) end
  return F.swish(x, self.beta)
end

return { Swish = Swish }
