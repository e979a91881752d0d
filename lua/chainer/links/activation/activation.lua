-- links/activation/activation.lua: PReLU, Maxout, Swish, SimplifiedDropconnect.
local F = require 'chainer.functions'
local config = require('chainer.config').config
local link = require 'chainer.link'
local Link, Chain = link.Link, link.Chain
local Linear = require('chainer.links.connection.linear').Linear
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local M = {}

-- PReLU(shape = {}, init = 0.25): y = max(x, W*x) with W broadcast from axis 1.
local PReLU = Link:extend('PReLU')
local pnames = { 'shape', 'init' }
function PReLU:init(...)
  local a = U.args('PReLU', pnames, select('#', ...), ...)
  local shape = a.shape or {}
  if type(shape) == 'number' then shape = { shape } end
  self.W = U.param(I._get_initializer(a.init == nil and 0.25 or a.init, 'PReLU'), shape)
end
function PReLU:forward(x) return F.prelu(x, self.W) end
M.PReLU = PReLU

-- Maxout(in_size, out_size, pool_size, initialW, initial_bias = 0): child
-- linear = Linear(in_size, out_size*pool_size) (no bias when initial_bias is false).
local Maxout = Chain:extend('Maxout')
local mnames = { 'in_size', 'out_size', 'pool_size', 'initialW', 'initial_bias' }
function Maxout:init(...)
  local a = U.args('Maxout', mnames, select('#', ...), ...)
  if type(a.out_size) ~= 'number' or type(a.pool_size) ~= 'number' then
    error('Maxout: out_size and pool_size must be numbers', 3)
  end
  self.out_size, self.pool_size = a.out_size, a.pool_size
  local ib = a.initial_bias
  if ib == nil then ib = 0 end
  self.linear = Linear(a.in_size, a.out_size * a.pool_size,
    { nobias = ib == false, initialW = a.initialW, initial_bias = ib ~= false and ib or nil })
end
function Maxout:forward(x) return F.maxout(self.linear(x), self.pool_size) end
M.Maxout = Maxout

-- Swish(beta_shape, beta_init = 1): y = x * sigmoid(beta * x); beta_shape nil infers x.shape[2].
local Swish = Link:extend('Swish')
function Swish:init(beta_shape, beta_init)
  if type(beta_shape) == 'number' then beta_shape = { beta_shape } end
  self.beta = U.param(I._get_initializer(beta_init == nil and 1.0 or beta_init, 'Swish'), beta_shape)
end
function Swish:forward(x)
  if self.beta._data == nil then
    local s = U.data(x).shape
    local bs = {}
    for i = 2, #s do bs[#bs + 1] = s[i] end
    self.beta:initialize({ bs[1] })
  end
  return F.swish(x, self.beta)
end
M.Swish = Swish

-- SimplifiedDropconnect(in_size, out_size, ratio = 0.5, nobias, initialW, initial_bias)
local SimplifiedDropconnect = Link:extend('SimplifiedDropconnect')
local snames = { 'in_size', 'out_size', 'ratio', 'nobias', 'initialW', 'initial_bias' }
function SimplifiedDropconnect:init(...)
  local a = U.args('SimplifiedDropconnect', snames, select('#', ...), ...)
  local in_size, out_size = a.in_size, a.out_size
  if out_size == nil then in_size, out_size = nil, in_size end
  self.in_size, self.out_size = in_size, out_size
  self.ratio = a.ratio or 0.5
  self.W = U.param(U.weight_init(a.initialW, 'SimplifiedDropconnect'), in_size and { out_size, in_size } or nil)
  if not a.nobias then self.b = U.param(U.bias_init(a.initial_bias, 'SimplifiedDropconnect'), { out_size }) end
end
-- forward(x, train = true, mask = nil, use_batchwise_mask = true)
function SimplifiedDropconnect:forward(x, train, mask, use_batchwise_mask)
  if self.W._data == nil then
    local xd = U.data(x)
    self.W:initialize({ self.out_size, tonumber(xd.ptr.numel) / xd.shape[1] })
  end
  if train == nil then train = config.train end
  if use_batchwise_mask == nil then use_batchwise_mask = true end
  if F.simplified_dropconnect == nil then
    error('SimplifiedDropconnect: F.simplified_dropconnect is not available', 2)
  end
  -- F.simplified_dropconnect takes Chainer's keyword arguments as an options table
  return F.simplified_dropconnect(x, self.W, self.b, { ratio = self.ratio, train = train, mask = mask,
    use_batchwise_mask = use_batchwise_mask })
end
M.SimplifiedDropconnect = SimplifiedDropconnect

return M
