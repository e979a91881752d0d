-- links/connection/highway.lua: L.Highway(in_out_size, nobias = false,
--   activate = F.relu, init_Wh, init_Wt, init_bh, init_bt = -1).
-- y = activate(plain(x)) * t + x * (1 - t), t = sigmoid(transform(x)).
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local args = require 'chainer._args'

local Highway = Chain:extend('Highway')
local SIGNATURE = args.signature { 'in_out_size', 'nobias', 'activate', 'init_Wh', 'init_Wt', 'init_bh', 'init_bt' }

function Highway:init(...)
  local a = args.parse('L.Highway', SIGNATURE, select('#', ...), ...)
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

return { Highway = Highway }
