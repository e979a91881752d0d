-- links/rnn/mgu.lua: L.StatelessMGU and L.StatefulMGU (minimal gated units) on
-- their shared MGUBase, as Chainer's rnn/mgu.py.
--
-- MGU: f = σ(W_f [h, x]), h̄ = tanh(W_h [f⊙h, x]), h' = linear_interpolate(f, h̄, h)
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Variable = require 'chainer.variable'
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local MGUBase = Chain:extend('MGUBase')
local SIGNATURE = args.signature { 'in_size', 'out_size' }

function MGUBase:init(...)
  local a = args.parse('L.' .. getmetatable(self).__name, SIGNATURE, select('#', ...), ...)
  local in_size, out_size = a.in_size, a.out_size
  if type(in_size) ~= 'number' or type(out_size) ~= 'number' then
    error(getmetatable(self).__name .. ': in_size and out_size must be numbers', 3)
  end
  self.out_size = out_size
  self.W_f = Linear(in_size + out_size, out_size)
  self.W_h = Linear(in_size + out_size, out_size)
end

function MGUBase:_call_mgu(h, x)
  local f = F.sigmoid(self.W_f(F.concat({ h, x }, 1)))
  local h_bar = F.tanh(self.W_h(F.concat({ f * h, x }, 1)))
  return F.linear_interpolate(f, h_bar, h)
end

-- StatelessMGU: forward(h, x) -> h_new
local StatelessMGU = MGUBase:extend('StatelessMGU')
StatelessMGU.forward = MGUBase._call_mgu

-- StatefulMGU: state h (zeros at first); forward(x) -> h_new
local StatefulMGU = MGUBase:extend('StatefulMGU')
function StatefulMGU:init(...)
  MGUBase.init(self, ...)
  rawset(self, 'h', nil)
end

function StatefulMGU:reset_state() rawset(self, 'h', nil) end

function StatefulMGU:set_state(h)
  if T.is_tensor(h) then h = Variable(h) end
  rawset(self, 'h', h)
end

function StatefulMGU:forward(x)
  local xd = U.input_data('linear', x)
  local h = rawget(self, 'h')
  if h == nil then h = Variable(T.zeros({ xd.shape[1], self.out_size }, xd.dtype, xd.ptr.dev)) end
  h = self:_call_mgu(h, x)
  rawset(self, 'h', h)
  return h
end

return { StatelessMGU = StatelessMGU, StatefulMGU = StatefulMGU }
