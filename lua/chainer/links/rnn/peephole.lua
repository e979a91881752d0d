-- links/rnn/peephole.lua: L.StatefulPeepholeLSTM(in_size, out_size).
-- An LSTM whose input, forget and output gates also see the cell state
-- through the peephole connections peep_i, peep_f, peep_o (Linear(out, out,
-- nobias)); children upward, lateral as LSTM's; state c, h.
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Variable = require 'chainer.variable'
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local LSTM = require('chainer.links.rnn.lstm').LSTM
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local StatefulPeepholeLSTM = Chain:extend('StatefulPeepholeLSTM')
local SIGNATURE = args.signature { 'in_size', 'out_size' }

function StatefulPeepholeLSTM:init(...)
  local a = args.parse('L.StatefulPeepholeLSTM', SIGNATURE, select('#', ...), ...)
  local in_size, out_size = a.in_size, a.out_size
  if type(out_size) ~= 'number' then error('StatefulPeepholeLSTM: out_size must be a number', 3) end
  self.state_size = out_size
  self.upward = Linear(in_size, 4 * out_size)
  self.lateral = Linear(out_size, 4 * out_size, { nobias = true })
  self.peep_i = Linear(out_size, out_size, { nobias = true })
  self.peep_f = Linear(out_size, out_size, { nobias = true })
  self.peep_o = Linear(out_size, out_size, { nobias = true })
  rawset(self, 'c', nil)
  rawset(self, 'h', nil)
end

-- The state handling of LSTM.
StatefulPeepholeLSTM.reset_state = LSTM.reset_state
StatefulPeepholeLSTM.set_state = LSTM.set_state

function StatefulPeepholeLSTM:forward(x)
  local xd = U.data(x)
  local lstm_in = self.upward(x)
  local h = rawget(self, 'h')
  if h ~= nil then lstm_in = lstm_in + self.lateral(h) end
  if rawget(self, 'c') == nil then
    rawset(self, 'c', Variable(T.zeros({ xd.shape[1], self.state_size }, xd.dtype, xd.ptr.dev)))
  end
  local n = lstm_in.shape[1]
  lstm_in = F.reshape(lstm_in, { n, self.state_size, 4 })
  local g = F.split_axis(lstm_in, 4, 2)
  local a = F.reshape(g[1], { n, self.state_size })
  local i = F.reshape(g[2], { n, self.state_size })
  local f = F.reshape(g[3], { n, self.state_size })
  local o = F.reshape(g[4], { n, self.state_size })
  local c = rawget(self, 'c')
  a = F.tanh(a)
  i = F.sigmoid(i + self.peep_i(c))
  f = F.sigmoid(f + self.peep_f(c))
  c = a * i + f * c
  rawset(self, 'c', c)
  o = F.sigmoid(o + self.peep_o(c))
  local hn = o * F.tanh(c)
  rawset(self, 'h', hn)
  return hn
end

return { StatefulPeepholeLSTM = StatefulPeepholeLSTM }
