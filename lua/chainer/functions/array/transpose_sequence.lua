-- functions/array/transpose_sequence.lua: F.transpose_sequence(xs): a
-- batch of sequences (xs[i] of shape (len_i, ...), lengths non-increasing)
-- into the sequence of batches ys[t] = stack of xs[i][t] over the i with
-- len_i > t.  The operation is its own inverse, so the gradient is
-- transpose_sequence of the gradients (missing ones are zeros).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'

local M = {}

local TransposeSequence = FunctionNode:extend('TransposeSequence')
M.TransposeSequence = TransposeSequence

function TransposeSequence:forward(xs)
  local lens = {}
  for i = 1, #xs do lens[i] = xs[i].shape[1] end
  self.lens = lens
  self._dt, self._dev = xs[1].dtype, xs[1].ptr.dev
  local rest = xs[1].shape
  table.remove(rest, 1)
  self.rest = rest
  local ys = {}
  for t = 0, (lens[1] or 0) - 1 do
    local parts = {}
    for i = 1, #xs do
      if lens[i] > t then parts[i] = xs[i]:select(t) else break end
    end
    ys[t + 1] = T.stack(parts, 0)
  end
  self.out_rows = {}
  for t = 1, #ys do self.out_rows[t] = ys[t].shape[1] end
  return ys
end

function TransposeSequence:backward(_, gys)
  local gs = {}
  for t = 1, #self.out_rows do
    local g = gys[t]
    if g == nil then
      local shape = { self.out_rows[t] }
      for k = 1, #self.rest do shape[k + 1] = self.rest[k] end
      g = Variable.new_var(T.zeros(shape, self._dt, self._dev), false)
    end
    gs[t] = g
  end
  local gx = #gs > 0 and M.transpose_sequence(gs) or {}
  -- zero-length sequences at the end of xs get no row back
  for i = #gx + 1, #self.lens do
    local shape = { 0 }
    for k = 1, #self.rest do shape[k + 1] = self.rest[k] end
    gx[i] = Variable.new_var(T.zeros(shape, self._dt, self._dev), false)
  end
  return gx
end

-- F.transpose_sequence(xs): returns a Lua array of Variables.
function M.transpose_sequence(xs)
  if type(xs) ~= 'table' or T.is_tensor(xs) or xs._is_variable then
    error('transpose_sequence: xs must be a Lua array of Variables or tensors', 2)
  end
  if #xs == 0 then return {} end
  local prev, nd, dt
  for i = 1, #xs do
    local d = args.array('transpose_sequence', string.format('xs[%d]', i), xs[i])
    if d.ptr.nd < 1 then error(string.format('transpose_sequence: xs[%d] is 0-d (expected a sequence)', i), 2) end
    local n = d.shape[1]
    if prev and n > prev then
      error(string.format('transpose_sequence: xs must be sorted by decreasing length (xs[%d] has %d, xs[%d] has %d)',
        i - 1, prev, i, n), 2)
    end
    if nd and (d.ptr.nd ~= nd or d.dtype ~= dt) then
      error(string.format('transpose_sequence: xs[%d] differs from xs[1] in rank or dtype', i), 2)
    end
    prev, nd, dt = n, d.ptr.nd, d.dtype
  end
  if args.array('transpose_sequence', 'x', xs[1]).shape[1] == 0 then return {} end
  local f = setmetatable({}, TransposeSequence)
  return f:apply(xs)
end

return M
