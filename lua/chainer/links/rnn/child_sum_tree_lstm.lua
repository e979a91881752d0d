-- links/rnn/child_sum_tree_lstm.lua: L.ChildSumTreeLSTM(in_size, out_size).
-- A tree-LSTM node over any number of children, whose hidden states are
-- summed for the a, i, o gates (each child keeps its own forget gate).
-- forward(c1, ..., cn, h1, ..., hn, x) -> c, h; nil child states are zeros.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local cell = require 'chainer.links.rnn._tree_lstm_cell'
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local ChildSumTreeLSTM = Chain:extend('ChildSumTreeLSTM')
local SIGNATURE = args.signature { 'in_size', 'out_size' }

function ChildSumTreeLSTM:init(...)
  local a = args.parse('L.ChildSumTreeLSTM', SIGNATURE, select('#', ...), ...)
  local in_size, out_size = a.in_size, U.check_size('L.ChildSumTreeLSTM', 'out_size', a.out_size)
  self.in_size, self.state_size = in_size, out_size
  self.W_x = Linear(in_size, 4 * out_size)
  self.W_h_aio = Linear(out_size, 3 * out_size, { nobias = true })
  self.W_h_f = Linear(out_size, out_size, { nobias = true })
end

function ChildSumTreeLSTM:forward(...)
  local n = select('#', ...)
  local inputs = { ... }
  local x = inputs[n]
  local k = (n - 1) / 2
  local s = self.state_size
  local cs, hs = {}, {}
  for i = 1, k do cs[i] = inputs[i]; hs[i] = inputs[k + i] end
  local wx = self.W_x(x)
  local sp = F.split_axis(wx, { 3 * s }, 1)
  local wx_aio, wx_f = sp[1], sp[2]
  if k == 0 then
    local g = F.split_axis(wx_aio, 3, 1)
    local c = F.sigmoid(g[2]) * F.tanh(g[1])
    return c, F.sigmoid(g[3]) * F.tanh(c)
  end
  for i = 1, k do hs[i] = cell.zeros_for(hs[i], x, s); cs[i] = cell.zeros_for(cs[i], x, s) end
  local hsum = hs[1]
  for i = 2, k do hsum = hsum + hs[i] end
  local aio = self.W_h_aio(hsum) + wx_aio
  local fs = {}
  for i = 1, k do fs[i] = self.W_h_f(hs[i]) + wx_f end
  local xin = F.concat({ aio, F.concat(fs, 1) }, 1)
  return cell.cell(cs, xin)
end

return { ChildSumTreeLSTM = ChildSumTreeLSTM }
