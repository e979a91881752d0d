-- links/rnn/lstm.lua: L.LSTM (stateful) and L.StatelessLSTM on their shared
-- LSTMBase, as Chainer's rnn/lstm.py.
--
-- L.LSTM(in_size, out_size, {lateral_init, upward_init, bias_init = 0, forget_bias_init = 1})
-- children upward = Linear(in_size, 4*out_size), lateral = Linear(out_size,
-- 4*out_size, nobias); the gates of F.lstm are interleaved per unit
-- (a, i, f, o); state c, h (nil after reset_state()).  L.LSTM(out_size)
-- infers in_size at the first call.  A later call may use a smaller batch:
-- the leading rows of the state are updated, the rest kept (Chainer).
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Variable = require 'chainer.variable'
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local LSTMBase = Chain:extend('LSTMBase')
local SIGNATURE = args.signature { 'in_size', 'out_size', 'lateral_init', 'upward_init', 'bias_init',
  'forget_bias_init' }

function LSTMBase:init(...)
  local a = args.parse('L.' .. getmetatable(self).__name, SIGNATURE, select('#', ...), ...)
  local in_size, out_size = a.in_size, a.out_size
  if out_size == nil then in_size, out_size = nil, in_size end
  if type(out_size) ~= 'number' then error(getmetatable(self).__name .. ': out_size must be a number', 3) end
  self.state_size = out_size
  self.lateral_init = a.lateral_init
  self.upward_init = a.upward_init
  self.bias_init = a.bias_init == nil and 0 or a.bias_init
  self.forget_bias_init = a.forget_bias_init == nil and 1 or a.forget_bias_init
  self.upward = Linear(in_size, 4 * out_size, { initialW = 0 })
  self.lateral = Linear(out_size, 4 * out_size, { initialW = 0, nobias = true })
  if in_size ~= nil then self:_initialize_params() end
end

-- Chainer's initialisation: each gate block of W separately; biases per gate.
function LSTMBase:_initialize_params()
  local s = self.state_size
  local li = I._get_initializer(self.lateral_init, 'LSTM')
  local ui = I._get_initializer(self.upward_init, 'LSTM')
  local bi = I._get_initializer(self.bias_init, 'LSTM')
  local fi = I._get_initializer(self.forget_bias_init, 'LSTM')
  local lw, uw = self.lateral.W.array, self.upward.W.array
  for g = 0, 3 do
    li(lw:slice({ g * s, (g + 1) * s }))
    ui(uw:slice({ g * s, (g + 1) * s }))
  end
  local b = self.upward.b.array
  -- interleaved gates: unit u, gate g at u*4 + g; order a, i, f, o
  bi(b:slice({ 0, nil, 4 }))
  bi(b:slice({ 1, nil, 4 }))
  fi(b:slice({ 2, nil, 4 }))
  bi(b:slice({ 3, nil, 4 }))
end

function LSTMBase:printable_specs()
  return { { 'in_size', self.upward.W._data and self.upward.W.shape[2] or nil }, { 'out_size', self.state_size } }
end

-- Lazy in_size: the upward W and the gate blocks from x's size per example.
function LSTMBase:_initialize_from(x)
  if self.upward.W._data == nil then
    local xd = U.input_data('linear', x)
    self.upward:_initialize_params(tonumber(xd.ptr.numel) / xd.shape[1])
    self:_initialize_params()
  end
end

local LSTM = LSTMBase:extend('LSTM')

function LSTM:init(...)
  LSTMBase.init(self, ...)
  rawset(self, 'c', nil)
  rawset(self, 'h', nil)
end

function LSTM:reset_state()
  rawset(self, 'c', nil)
  rawset(self, 'h', nil)
end

local function as_var(v)
  if v == nil then return nil end
  if T.is_tensor(v) then return Variable(v) end
  return v
end

function LSTM:set_state(c, h)
  rawset(self, 'c', as_var(c))
  rawset(self, 'h', as_var(h))
end

function LSTM:forward(x)
  self:_initialize_from(x)
  local xd = U.input_data('linear', x)
  local batch = xd.shape[1]
  local lstm_in = self.upward(x)
  local h_rest
  local h = rawget(self, 'h')
  if h ~= nil then
    local h_size = h.shape[1]
    if batch == 0 then
      h_rest = h
    elseif h_size < batch then
      error(string.format('LSTM: the batch size of x (%d) must be equal to or less than that of the previous ' ..
        'state h (%d)', batch, h_size), 2)
    elseif h_size > batch then
      local parts = F.split_axis(h, { batch }, 0)
      lstm_in = lstm_in + self.lateral(parts[1])
      h_rest = parts[2]
    else
      lstm_in = lstm_in + self.lateral(h)
    end
  end
  if rawget(self, 'c') == nil then
    rawset(self, 'c', Variable(T.zeros({ batch, self.state_size }, xd.dtype, xd.ptr.dev)))
  end
  local c, y = F.lstm(rawget(self, 'c'), lstm_in)
  rawset(self, 'c', c)
  if h_rest == nil then
    rawset(self, 'h', y)
  elseif y.shape[1] == 0 then
    rawset(self, 'h', h_rest)
  else
    rawset(self, 'h', F.concat({ y, h_rest }, 0))
  end
  return y
end

-- StatelessLSTM: forward(c, h, x) -> c_new, h_new (c, h may be nil).
local StatelessLSTM = LSTMBase:extend('StatelessLSTM')
function StatelessLSTM:forward(c, h, x)
  self:_initialize_from(x)
  local xd = U.input_data('linear', x)
  local lstm_in = self.upward(x)
  if h ~= nil then lstm_in = lstm_in + self.lateral(h) end
  if c == nil then c = Variable(T.zeros({ xd.shape[1], self.state_size }, xd.dtype, xd.ptr.dev)) end
  return F.lstm(c, lstm_in)
end

return { LSTM = LSTM, StatelessLSTM = StatelessLSTM }
