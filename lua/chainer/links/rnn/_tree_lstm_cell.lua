-- links/rnn/_tree_lstm_cell.lua: the tree-LSTM cell shared by
-- ChildSumTreeLSTM and NaryTreeLSTM (Chainer's F.tree_lstm, composed here):
-- x = [a, i, o, f1..fn] in consecutive blocks, c = tanh(a)σ(i) + Σ σ(f_k) c_k,
-- h = σ(o) tanh(c).
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Variable = require 'chainer.variable'
local U = require 'chainer.links._util'

local M = {}

-- c, h from the children's cell states cs (a list) and the gate input x.
function M.cell(cs, x)
  local n = #cs
  local parts = F.split_axis(x, 3 + n, 1)
  local c = F.tanh(parts[1]) * F.sigmoid(parts[2])
  for k = 1, n do c = c + F.sigmoid(parts[3 + k]) * cs[k] end
  local h = F.sigmoid(parts[3]) * F.tanh(c)
  return c, h
end

-- v, or zeros (batch of x, s) for a missing child state.
function M.zeros_for(v, x, s)
  if v ~= nil then return v end
  local xd = U.data(x)
  return Variable(T.zeros({ xd.shape[1], s }, xd.dtype, xd.ptr.dev))
end

return M
