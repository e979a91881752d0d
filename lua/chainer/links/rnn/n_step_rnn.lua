-- links/rnn/n_step_rnn.lua: NStepRNNBase, the stacked RNN over variable-length
-- sequences, and its plain-RNN variants L.NStepRNNTanh, L.NStepRNNReLU,
-- L.NStepBiRNNTanh, L.NStepBiRNNReLU (as Chainer's rnn/n_step_rnn.py; the
-- LSTM and GRU variants are in n_step_lstm.lua and n_step_gru.lua).
--
-- L.NStepRNNTanh(n_layers, in_size, out_size, dropout, {initialW =, initial_bias =})
-- A ChainList of one Link per layer and direction (Chainer's names '0', '1',
-- ... in files), each holding w0..w{n-1} and b0..b{n-1} (n = 8 LSTM, 6 GRU,
-- 2 RNN): w0..w{n/2-1} act on the layer input (out_size, in), the others on
-- the hidden state (out_size, out_size).
--   local hy, cy, ys = lstm(hx, cx, xs)     -- hx, cx nil: zeros; xs a Lua list of
--                                            -- (L_i, in_size) sequences, any order (sorted
--                                            -- and transposed for F.n_step_lstm, as Chainer)
--   local hy, ys = gru(hx, xs)
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Variable = require 'chainer.variable'
local link = require 'chainer.link'
local Link, ChainList = link.Link, link.ChainList
local Parameter = require 'chainer.parameter'
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local NStepRNNBase = ChainList:extend('NStepRNNBase')
local SIGNATURE = args.signature { 'n_layers', 'in_size', 'out_size', 'dropout', 'initialW', 'initial_bias' }

local function make_layer(n_weights, w_in, out_size, initialW, initial_bias)
  local l = Link()
  for j = 0, n_weights - 1 do
    local wi = j < n_weights / 2 and w_in or out_size
    local winit = initialW and I._get_initializer(initialW, 'NStepRNN') or I.Normal(math.sqrt(1 / wi))
    l:add_param('w' .. j, Parameter(winit, { out_size, wi }))
    local binit = initial_bias ~= nil and I._get_initializer(initial_bias, 'NStepRNN') or I.Constant(0)
    l:add_param('b' .. j, Parameter(binit, { out_size }))
  end
  return l
end

local function setup(self, fn, n_weights, use_cell, bi, rnn_name, a)
  if type(a.n_layers) ~= 'number' or a.n_layers < 1 then error(fn .. ': n_layers must be a positive number', 4) end
  if type(a.in_size) ~= 'number' or type(a.out_size) ~= 'number' then
    error(fn .. ': in_size and out_size must be numbers', 4)
  end
  local dirs = bi and 2 or 1
  for i = 0, a.n_layers - 1 do
    for _ = 1, dirs do
      local w_in = i == 0 and a.in_size or a.out_size * dirs
      self:add_link(make_layer(n_weights, w_in, a.out_size, a.initialW, a.initial_bias))
    end
  end
  self.n_layers = a.n_layers
  self.in_size = a.in_size
  self.out_size = a.out_size
  self.dropout = a.dropout or 0
  self.n_weights = n_weights
  self.use_cell = use_cell
  self.use_bi_direction = bi
  self.direction = dirs
  self._rnn_name = rnn_name
  self.activation = a.activation
end

function NStepRNNBase:printable_specs()
  return { { 'n_layers', self.n_layers }, { 'in_size', self.in_size }, { 'out_size', self.out_size },
    { 'dropout', self.dropout } }
end

local function weights(self)
  local ws, bs = {}, {}
  for i, l in ipairs(self._children) do
    local w, b = {}, {}
    for j = 0, self.n_weights - 1 do
      w[j + 1] = l['w' .. j]
      b[j + 1] = l['b' .. j]
    end
    ws[i], bs[i] = w, b
  end
  return ws, bs
end

-- Zeros (n_layers * directions, batch, out_size) for a nil initial state.
function NStepRNNBase:init_hx(xs)
  local x1 = U.data(xs[1])
  return Variable(T.zeros({ self.n_layers * self.direction, #xs, self.out_size }, x1.dtype, x1.ptr.dev))
end

local function check_xs(fn, xs)
  if type(xs) ~= 'table' or T.is_tensor(xs) or xs._is_variable or #xs == 0 then
    error(fn .. ': xs must be a non-empty Lua list of sequences (tensors or Variables)', 3)
  end
end

-- Chainer's order: sequences sorted by length, longest first (stable).
local function sort_desc(xs)
  local idx = {}
  for i = 1, #xs do idx[i] = i end
  local len = {}
  for i = 1, #xs do len[i] = U.data(xs[i]).shape[1] end
  table.sort(idx, function(a, b)
    if len[a] ~= len[b] then return len[a] > len[b] end
    return a < b
  end)
  local sorted, zero_based = {}, {}
  for k, i in ipairs(idx) do sorted[k] = xs[i]; zero_based[k] = i - 1 end
  -- the permutation indices live where the sequences do (F.permutate needs both on one device)
  return idx, T.array(zero_based, 'int32'):to_device(U.data(xs[1]).ptr.dev), sorted
end

-- The initial state in sorted order (zeros when nil).
local function prepare_state(self, h, xs, idx_t)
  if h == nil or h == false then return self:init_hx(xs) end
  return F.permutate(h, idx_t, 1)
end

local function unsort(ys, idx)
  local out = {}
  for k, i in ipairs(idx) do out[i] = ys[k] end
  return out
end

local function rnn_fn(self)
  local f = F[self._rnn_name]
  if f == nil then error(getmetatable(self).__name .. ': F.' .. self._rnn_name .. ' is not available', 3) end
  return f
end

-- A variant: n_weights per layer and direction (8 LSTM, 6 GRU, 2 RNN),
-- use_cell (LSTM's c state), bi (both directions), F[rnn_name] and the
-- activation of the plain RNNs.
function NStepRNNBase._variant(name, n_weights, use_cell, bi, rnn_name, activation)
  local cls = NStepRNNBase:extend(name)
  local fn = 'L.' .. name
  function cls:init(...)
    ChainList.init(self)
    local a = args.parse(fn, SIGNATURE, select('#', ...), ...)
    a.activation = activation
    setup(self, name, n_weights, use_cell, bi, rnn_name, a)
  end
  if use_cell then
    function cls:forward(hx, cx, xs)
      check_xs(name, xs)
      local f = rnn_fn(self)
      local idx, idx_t, sorted = sort_desc(xs)
      hx = prepare_state(self, hx, xs, idx_t)
      cx = prepare_state(self, cx, xs, idx_t)
      local ws, bs = weights(self)
      local hy, cy, ys = f(self.n_layers, self.dropout, hx, cx, ws, bs, F.transpose_sequence(sorted))
      return F.permutate(hy, idx_t, 1, true), F.permutate(cy, idx_t, 1, true), unsort(F.transpose_sequence(ys), idx)
    end
  else
    function cls:forward(hx, xs)
      check_xs(name, xs)
      local f = rnn_fn(self)
      local idx, idx_t, sorted = sort_desc(xs)
      hx = prepare_state(self, hx, xs, idx_t)
      local ws, bs = weights(self)
      local txs = F.transpose_sequence(sorted)
      local hy, ys
      if self.activation then
        hy, ys = f(self.n_layers, self.dropout, hx, ws, bs, txs, { activation = self.activation })
      else
        hy, ys = f(self.n_layers, self.dropout, hx, ws, bs, txs)
      end
      return F.permutate(hy, idx_t, 1, true), unsort(F.transpose_sequence(ys), idx)
    end
  end
  return cls
end

local variant = NStepRNNBase._variant
return {
  NStepRNNTanh = variant('NStepRNNTanh', 2, false, false, 'n_step_rnn', 'tanh'),
  NStepRNNReLU = variant('NStepRNNReLU', 2, false, false, 'n_step_rnn', 'relu'),
  NStepBiRNNTanh = variant('NStepBiRNNTanh', 2, false, true, 'n_step_birnn', 'tanh'),
  NStepBiRNNReLU = variant('NStepBiRNNReLU', 2, false, true, 'n_step_birnn', 'relu'),
  _NStepRNNBase = NStepRNNBase,
}
