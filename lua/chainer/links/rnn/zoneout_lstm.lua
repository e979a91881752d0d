-- links/rnn/zoneout_lstm.lua: L.StatefulZoneoutLSTM(in_size, out_size,
-- c_ratio = 0.5, h_ratio = 0.5), an LSTM whose cell state and output are
-- regularised by zoneout (Krueger et al. 2016), as Chainer's
-- rnn/zoneoutlstm.py.
--
-- Children upward = Linear(in_size, 4*out_size) and lateral =
-- Linear(out_size, 4*out_size, nobias) with Linear's default initialisers;
-- the gates are interleaved per unit (a, i, f, o) as in F.lstm.  Each call
--   c_new = tanh(a) sigmoid(i) + sigmoid(f) c,   h_new = sigmoid(o) tanh(c_new)
--   c = F.zoneout(c, c_new, c_ratio),  h = F.zoneout(h, h_new, h_ratio)
-- keeps each old value with probability ratio in training (test mode: the
-- new values, a plain LSTM), and returns h.  The state c, h starts as zeros
-- (nil after reset_state()); set_state(c, h) sets it.  Unlike L.LSTM,
-- Chainer's uses the zoneout state with the un-zoned c_new for h_new.
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Variable = require 'chainer.variable'
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local StatefulZoneoutLSTM = Chain:extend('StatefulZoneoutLSTM')
local NAME = 'L.StatefulZoneoutLSTM'
local SIGNATURE = args.signature { 'in_size', 'out_size', 'c_ratio', 'h_ratio' }

local function ratio(name, v)
  if v == nil then return 0.5 end
  if type(v) ~= 'number' or v < 0 or v > 1 then
    error(string.format('%s: %s must be a number in [0, 1] (got %s)', NAME, name, tostring(v)), 4)
  end
  return v
end

function StatefulZoneoutLSTM:init(...)
  local a = args.parse(NAME, SIGNATURE, select('#', ...), ...)
  U.check_size(NAME, 'in_size', a.in_size)
  U.check_size(NAME, 'out_size', a.out_size)
  self.state_size = a.out_size
  self.c_ratio, self.h_ratio = ratio('c_ratio', a.c_ratio), ratio('h_ratio', a.h_ratio)
  self.upward = Linear(a.in_size, 4 * a.out_size)
  self.lateral = Linear(a.out_size, 4 * a.out_size, { nobias = true })
  rawset(self, 'c', nil)
  rawset(self, 'h', nil)
end

function StatefulZoneoutLSTM:reset_state()
  rawset(self, 'c', nil)
  rawset(self, 'h', nil)
end

local function as_var(name, v)
  if T.is_tensor(v) then return Variable(v) end
  if type(v) == 'table' and v._is_variable then return v end
  error(string.format('%s: set_state: %s must be a Variable or a tensor (got %s)', NAME, name, type(v)), 3)
end

function StatefulZoneoutLSTM:set_state(c, h)
  rawset(self, 'c', as_var('c', c))
  rawset(self, 'h', as_var('h', h))
end

function StatefulZoneoutLSTM:forward(x)
  local xd = args.float_array(NAME, 'x', x, 2)
  if xd.ndim ~= 2 then
    error(string.format('%s: x must be 2-d (batch, in_size), got shape %s', NAME, T.shape_str(xd.shape)), 2)
  end
  local batch, s = xd.shape[1], self.state_size
  local lstm_in = self.upward(x)
  local h, c = rawget(self, 'h'), rawget(self, 'c')
  if h ~= nil then
    lstm_in = lstm_in + self.lateral(h)
  else
    h = Variable(T.zeros({ batch, s }, xd.dtype, xd.ptr.dev))
  end
  if c == nil then c = Variable(T.zeros({ batch, s }, xd.dtype, xd.ptr.dev)) end
  local gates = F.split_axis(F.reshape(lstm_in, { batch, s, 4 }), 4, 2)
  local ga, gi, gf, go = gates[1], gates[2], gates[3], gates[4]
  ga, gi = F.reshape(ga, { batch, s }), F.reshape(gi, { batch, s })
  gf, go = F.reshape(gf, { batch, s }), F.reshape(go, { batch, s })
  local c_new = F.tanh(ga) * F.sigmoid(gi) + F.sigmoid(gf) * c
  c = F.zoneout(c, c_new, { ratio = self.c_ratio })
  h = F.zoneout(h, F.sigmoid(go) * F.tanh(c_new), { ratio = self.h_ratio })
  rawset(self, 'c', c)
  rawset(self, 'h', h)
  return h
end

return { StatefulZoneoutLSTM = StatefulZoneoutLSTM }
