-- links/rnn/nary_tree_lstm.lua: L.NaryTreeLSTM(in_size, out_size, n_ary = 2).
-- A tree-LSTM node over a fixed number of ordered children, each child's
-- hidden state with its own weights W_h1..W_h{n_ary}.
-- forward(c1, ..., cn, h1, ..., hn, x) -> c, h; nil child states are zeros.
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local cell = require 'chainer.links.rnn._tree_lstm_cell'
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local NaryTreeLSTM = Chain:extend('NaryTreeLSTM')
local SIGNATURE = args.signature { 'in_size', 'out_size', 'n_ary' }

function NaryTreeLSTM:init(...)
  local a = args.parse('L.NaryTreeLSTM', SIGNATURE, select('#', ...), ...)
  local in_size = a.in_size
  local out_size = U.check_size('L.NaryTreeLSTM', 'out_size', a.out_size)
  local n_ary = U.check_size('L.NaryTreeLSTM', 'n_ary', a.n_ary or 2)
  self.in_size, self.state_size, self.n_ary = in_size, out_size, n_ary
  self.W_x = Linear(in_size, (3 + n_ary) * out_size)
  for i = 1, n_ary do
    self['W_h' .. i] = Linear(out_size, (3 + n_ary) * out_size, { nobias = true })
  end
end

function NaryTreeLSTM:forward(...)
  local n = select('#', ...)
  local inputs = { ... }
  local k = self.n_ary
  if n ~= 2 * k + 1 then
    error(string.format('NaryTreeLSTM: expected %d arguments (c1..c%d, h1..h%d, x), got %d', 2 * k + 1, k, k, n), 2)
  end
  local x = inputs[n]
  local s = self.state_size
  local cs = {}
  local tin = self.W_x(x)
  for i = 1, k do
    cs[i] = cell.zeros_for(inputs[i], x, s)
    local h = inputs[k + i]
    if h ~= nil then tin = tin + self['W_h' .. i](h) end
  end
  return cell.cell(cs, tin)
end

return { NaryTreeLSTM = NaryTreeLSTM }
