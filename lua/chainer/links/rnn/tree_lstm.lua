-- links/rnn/tree_lstm.lua: ChildSumTreeLSTM, NaryTreeLSTM.
--
-- The tree-LSTM cell (Chainer's F.tree_lstm) is composed here:
-- x = [a, i, o, f1..fn] in consecutive blocks, c = tanh(a)σ(i) + Σ σ(f_k) c_k,
-- h = σ(o) tanh(c).  forward(c1, ..., cn, h1, ..., hn, x) -> c, h.
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Variable = require 'chainer.variable'
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local U = require 'chainer.links._util'

local M = {}

local function cell(cs, x, s)
  local n = #cs
  local parts = F.split_axis(x, 3 + n, 1)
  local c = F.tanh(parts[1]) * F.sigmoid(parts[2])
  for k = 1, n do c = c + F.sigmoid(parts[3 + k]) * cs[k] end
  local h = F.sigmoid(parts[3]) * F.tanh(c)
  return c, h
end
M._tree_lstm = cell

local function zeros_for(v, x, s)
  if v ~= nil then return v end
  local xd = U.data(x)
  return Variable(T.zeros({ xd.shape[1], s }, xd.dtype, xd.ptr.dev))
end

-- ChildSumTreeLSTM(in_size, out_size): any number of children.
local ChildSum = Chain:extend('ChildSumTreeLSTM')
function ChildSum:init(in_size, out_size)
  self.in_size, self.state_size = in_size, out_size
  self.W_x = Linear(in_size, 4 * out_size)
  self.W_h_aio = Linear(out_size, 3 * out_size, { nobias = true })
  self.W_h_f = Linear(out_size, out_size, { nobias = true })
end
function ChildSum:forward(...)
  local n = select('#', ...)
  local args = { ... }
  local x = args[n]
  local k = (n - 1) / 2
  local s = self.state_size
  local cs, hs = {}, {}
  for i = 1, k do cs[i] = args[i]; hs[i] = args[k + i] end
  local wx = self.W_x(x)
  local sp = F.split_axis(wx, { 3 * s }, 1)
  local wx_aio, wx_f = sp[1], sp[2]
  if k == 0 then
    local g = F.split_axis(wx_aio, 3, 1)
    local c = F.sigmoid(g[2]) * F.tanh(g[1])
    return c, F.sigmoid(g[3]) * F.tanh(c)
  end
  for i = 1, k do hs[i] = zeros_for(hs[i], x, s); cs[i] = zeros_for(cs[i], x, s) end
  local hsum = hs[1]
  for i = 2, k do hsum = hsum + hs[i] end
  local aio = self.W_h_aio(hsum) + wx_aio
  local fs = {}
  for i = 1, k do fs[i] = self.W_h_f(hs[i]) + wx_f end
  local xin = F.concat({ aio, F.concat(fs, 1) }, 1)
  return cell(cs, xin, s)
end
M.ChildSumTreeLSTM = ChildSum

-- NaryTreeLSTM(in_size, out_size, n_ary = 2): a fixed number of ordered children.
local Nary = Chain:extend('NaryTreeLSTM')
function Nary:init(in_size, out_size, n_ary)
  n_ary = n_ary or 2
  self.in_size, self.state_size, self.n_ary = in_size, out_size, n_ary
  self.W_x = Linear(in_size, (3 + n_ary) * out_size)
  for i = 1, n_ary do
    self['W_h' .. i] = Linear(out_size, (3 + n_ary) * out_size, { nobias = true })
  end
end
function Nary:forward(...)
  local n = select('#', ...)
  local args = { ... }
  local k = self.n_ary
  if n ~= 2 * k + 1 then
    error(string.format('NaryTreeLSTM: expected %d arguments (c1..c%d, h1..h%d, x), got %d', 2 * k + 1, k, k, n), 2)
  end
  local x = args[n]
  local s = self.state_size
  local cs = {}
  local tin = self.W_x(x)
  for i = 1, k do
    cs[i] = zeros_for(args[i], x, s)
    local h = args[k + i]
    if h ~= nil then tin = tin + self['W_h' .. i](h) end
  end
  return cell(cs, tin, s)
end
M.NaryTreeLSTM = Nary

return M
