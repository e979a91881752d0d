-- links/rnn/gru.lua: L.StatelessGRU, L.StatefulGRU and L.GRU (a StatefulGRU) on
-- their shared GRUBase, as Chainer's rnn/gru.py.
--
-- L.StatefulGRU(in_size, out_size, init, inner_init, bias_init); (out_size)
-- alone infers in_size at the first call.
--
-- GRU: r = σ(W_r x + U_r h), z = σ(W_z x + U_z h), h̄ = tanh(W x + U (r⊙h)),
-- h' = (1 - z)⊙h + z⊙h̄ (Chainer's linear_interpolate(z, h̄, h)).
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Variable = require 'chainer.variable'
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local args = require 'chainer._args'

local GRUBase = Chain:extend('GRUBase')
local SIGNATURE = args.signature { 'in_size', 'out_size', 'init', 'inner_init', 'bias_init' }

function GRUBase:init(...)
  local a = args.parse('L.' .. getmetatable(self).__name, SIGNATURE, select('#', ...), ...)
  local in_size, out_size = a.in_size, a.out_size
  if out_size == nil then in_size, out_size = nil, in_size end
  if type(out_size) ~= 'number' then error(getmetatable(self).__name .. ': out_size must be a number', 3) end
  self.in_size, self.out_size = in_size, out_size
  local wo = { initialW = a.init, initial_bias = a.bias_init }
  local uo = { initialW = a.inner_init, initial_bias = a.bias_init }
  self.W_r = Linear(in_size, out_size, wo)
  self.U_r = Linear(out_size, out_size, uo)
  self.W_z = Linear(in_size, out_size, wo)
  self.U_z = Linear(out_size, out_size, uo)
  self.W = Linear(in_size, out_size, wo)
  self.U = Linear(out_size, out_size, uo)
end

-- StatelessGRU: forward(h, x) -> h_new
local StatelessGRU = GRUBase:extend('StatelessGRU')
function StatelessGRU:forward(h, x)
  local r = F.sigmoid(self.W_r(x) + self.U_r(h))
  local z = F.sigmoid(self.W_z(x) + self.U_z(h))
  local h_bar = F.tanh(self.W(x) + self.U(r * h))
  return F.linear_interpolate(z, h_bar, h)
end

-- StatefulGRU: state h; forward(x) -> h_new
local StatefulGRU = GRUBase:extend('StatefulGRU')
function StatefulGRU:init(...)
  GRUBase.init(self, ...)
  rawset(self, 'h', nil)
end

function StatefulGRU:reset_state() rawset(self, 'h', nil) end

function StatefulGRU:set_state(h)
  if T.is_tensor(h) then h = Variable(h) end
  rawset(self, 'h', h)
end

function StatefulGRU:forward(x)
  local z = self.W_z(x)
  local h_bar = self.W(x)
  local h = rawget(self, 'h')
  if h ~= nil then
    local r = F.sigmoid(self.W_r(x) + self.U_r(h))
    z = z + self.U_z(h)
    h_bar = h_bar + self.U(r * h)
  end
  z = F.sigmoid(z)
  h_bar = F.tanh(h_bar)
  local h_new
  if h ~= nil then h_new = F.linear_interpolate(z, h_bar, h) else h_new = z * h_bar end
  rawset(self, 'h', h_new)
  return h_new
end

-- Chainer's GRU is the stateful one.
local GRU = StatefulGRU:extend('GRU')

return { StatelessGRU = StatelessGRU, StatefulGRU = StatefulGRU, GRU = GRU }
