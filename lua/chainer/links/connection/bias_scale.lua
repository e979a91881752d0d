-- links/connection/bias_scale.lua: Bias, Scale, Bilinear, Highway.
local F = require 'chainer.functions'
local link = require 'chainer.link'
local Link, Chain = link.Link, link.Chain
local Linear = require('chainer.links.connection.linear').Linear
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local M = {}

local function shape_of(s)
  if type(s) == 'number' then return { s } end
  return s
end

-- Bias(axis = 1, shape = nil, initial_bias = 0): forward(x) adds b broadcast
-- from `axis`; forward(x, y) adds y instead.
local Bias = Link:extend('Bias')
local bnames = { 'axis', 'shape', 'initial_bias' }
function Bias:init(...)
  local a = U.args('Bias', bnames, select('#', ...), ...)
  self.axis = a.axis or 1
  if a.shape ~= nil then
    local ib = a.initial_bias
    if ib == nil then ib = 0 end
    self.b = U.param(I._get_initializer(ib, 'Bias'), shape_of(a.shape))
  end
end
function Bias:forward(x, y)
  if y == nil then
    if self.b == nil then error('Bias: the link has no parameter b; call it as bias(x, y)', 2) end
    y = self.b
  end
  return F.bias(x, y, self.axis)
end
M.Bias = Bias

-- Scale(axis = 1, W_shape = nil, bias_term = false, bias_shape = nil, initialW = 1, initial_bias = 0)
local Scale = Chain:extend('Scale')
local snames = { 'axis', 'W_shape', 'bias_term', 'bias_shape', 'initialW', 'initial_bias' }
function Scale:init(...)
  local a = U.args('Scale', snames, select('#', ...), ...)
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
M.Scale = Scale

-- Bilinear(left_size, right_size, out_size, nobias = false, initialW, initial_bias = {V1, V2, b})
-- W: (J, K, L); V1: (J, L); V2: (K, L); b: (L).
local Bilinear = Link:extend('Bilinear')
local binames = { 'left_size', 'right_size', 'out_size', 'nobias', 'initialW', 'initial_bias' }
function Bilinear:init(...)
  local a = U.args('Bilinear', binames, select('#', ...), ...)
  local J, K, L = a.left_size, a.right_size, a.out_size
  if type(J) ~= 'number' or type(K) ~= 'number' or type(L) ~= 'number' then
    error('Bilinear: left_size, right_size and out_size must be numbers', 3)
  end
  self.in_sizes = { J, K }
  self.out_size = L
  self.nobias = a.nobias and true or false
  self.W = U.param(U.weight_init(a.initialW, 'Bilinear'), { J, K, L })
  if not self.nobias then
    local V1, V2, b
    if a.initial_bias ~= nil then
      if type(a.initial_bias) ~= 'table' or #a.initial_bias ~= 3 then
        error('Bilinear: initial_bias must be a list of three initializers {V1, V2, b}', 3)
      end
      V1, V2, b = a.initial_bias[1], a.initial_bias[2], a.initial_bias[3]
    end
    self.V1 = U.param(U.weight_init(V1, 'Bilinear'), { J, L })
    self.V2 = U.param(U.weight_init(V2, 'Bilinear'), { K, L })
    self.b = U.param(U.bias_init(b, 'Bilinear'), { L })
  end
end
function Bilinear:forward(e1, e2)
  if self.nobias then return F.bilinear(e1, e2, self.W) end
  return F.bilinear(e1, e2, self.W, self.V1, self.V2, self.b)
end
M.Bilinear = Bilinear

-- Highway(in_out_size, nobias, activate = F.relu, init_Wh, init_Wt, init_bh, init_bt = -1)
-- y = activate(plain(x)) * t + x * (1 - t), t = sigmoid(transform(x)).
local Highway = Chain:extend('Highway')
local hnames = { 'in_out_size', 'nobias', 'activate', 'init_Wh', 'init_Wt', 'init_bh', 'init_bt' }
function Highway:init(...)
  local a = U.args('Highway', hnames, select('#', ...), ...)
  local n = a.in_out_size
  if type(n) ~= 'number' then error('Highway: in_out_size must be a number', 3) end
  rawset(self, 'activate', a.activate or F.relu)
  local bt = a.init_bt
  if bt == nil then bt = -1 end
  self.plain = Linear(n, n, { nobias = a.nobias, initialW = a.init_Wh, initial_bias = a.init_bh })
  self.transform = Linear(n, n, { nobias = a.nobias, initialW = a.init_Wt, initial_bias = bt })
end
function Highway:forward(x)
  local out_plain = self.activate(self.plain(x))
  local out_transform = F.sigmoid(self.transform(x))
  return out_plain * out_transform + x * (1 - out_transform)
end
M.Highway = Highway

return M
