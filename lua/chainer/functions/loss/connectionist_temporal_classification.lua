-- functions/loss/connectionist_temporal_classification.lua:
--   F.connectionist_temporal_classification(x, t, blank_symbol,
--       input_length, label_length, reduce)
--   F.connectionist_temporal_classification(x, t, {blank_symbol = 0,
--       input_length = nil, label_length = nil, reduce = 'mean'})
--
-- x is a Lua array of T Variables/tensors (B, V) of unnormalised log
-- probabilities (softmax is applied inside), t (B, L) integer labels.
-- input_length (B,) gives each sequence's number of steps (default T),
-- label_length (B,) its number of labels (default L).  The loss is
-- -log p(t | x) per sequence: reduce = 'mean' averages over the batch,
-- 'no' returns (B,).  The forward-backward recursion and the gradient run
-- in one C kernel (runtime/cpu/ctc.c).  Differentiable with respect to x
-- once; as in Chainer, the gradient is not differentiable again with
-- respect to x (it is linear in the upstream gradient).
local args = require 'chainer._args'
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local config = require('chainer.config').config
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local M = {}
local FN = 'connectionist_temporal_classification'
local SIGNATURE = args.signature { 'blank_symbol', 'input_length', 'label_length', 'reduce' }

local CTC = FunctionNode:extend('ConnectionistTemporalClassification')
M.ConnectionistTemporalClassification = CTC

local CTCGrad = FunctionNode:extend('ConnectionistTemporalClassificationGrad')
M.ConnectionistTemporalClassificationGrad = CTCGrad

local box_loss = ffi.new('ch_tensor*[1]')
local box_grad = ffi.new('ch_tensor*[1]')

function CTC:forward(inputs)
  local n = #inputs
  local arr = ffi.new('ch_tensor*[?]', n)
  for i = 1, n do arr[i - 1] = inputs[i].ptr end
  box_grad[0] = nil
  check(C.ch_ctc_loss(n, arr, self.t.ptr, self.input_length and self.input_length.ptr or nil,
    self.label_length and self.label_length.ptr or nil, self.blank, box_loss,
    self.want_grad and box_grad or nil), 3)
  local loss = T.wrap(box_loss[0])
  self._grad = self.want_grad and T.wrap(box_grad[0]) or nil
  self._inputs = inputs
  self._b = loss.shape[1]
  if self.reduce == 'no' then return { loss } end
  return { U.batch_mean_tensor(loss, self._b) }
end

function CTC:backward(idx, gys)
  local g = self._grad
  if not g then
    local inputs = self._inputs
    local arr = ffi.new('ch_tensor*[?]', #inputs)
    for i = 1, #inputs do arr[i - 1] = inputs[i].ptr end
    check(C.ch_ctc_loss(#inputs, arr, self.t.ptr, self.input_length and self.input_length.ptr or nil,
      self.label_length and self.label_length.ptr or nil, self.blank, box_loss, box_grad), 2)
    T.wrap(box_loss[0])
    g = T.wrap(box_grad[0])
  end
  local out = {}
  for k = 1, #idx do
    local f = setmetatable({}, CTCGrad)
    f._g, f.reduce, f._b = g:select(idx[k] - 1), self.reduce, self._b
    out[k] = f:apply({ gys[1] })[1]
  end
  out.n = #idx -- one gradient per target input
  return out
end

-- gx_t = G_t * gy / B ('mean') or G_t * gy[:, None] ('no')
function CTCGrad:forward(inputs)
  local gy, g = inputs[1], self._g
  if self.reduce == 'mean' then return { g * (gy * (1 / math.max(1, self._b))):astype(g.dtype) } end
  return { g * gy:reshape({ self._b, 1 }) }
end

function CTCGrad:backward(idx, gys)
  local prod = gys[1] * self._g
  if self.reduce == 'mean' then return { U.batch_mean(prod, self._b) } end
  return { U.F('sum')(prod, { axis = 1 }) }
end

local function int_arg(name, v)
  if v == nil or v == false then return nil end
  return args.int_array(FN, name, v, 3)
end

function M.connectionist_temporal_classification(x, t, blank_symbol, input_length, label_length, reduce)
  local o = args.parse(FN, SIGNATURE, 4, blank_symbol, input_length, label_length, reduce)
  if type(x) ~= 'table' or T.is_tensor(x) or x._is_variable or #x == 0 then
    error(FN .. ': x must be a non-empty Lua array of (B, V) Variables or tensors, one per time step', 2)
  end
  for i = 1, #x do args.float_array(FN, 'x[' .. (i - 1) .. ']', x[i]) end
  local td = args.int_array(FN, 't', t)
  local blank = o.blank_symbol
  if type(blank) ~= 'number' or blank ~= math.floor(blank) then
    error(string.format('%s: blank_symbol must be an integer (got %s)', FN, tostring(blank)), 2)
  end
  local f = setmetatable({}, CTC)
  f.t, f.blank = td, blank
  f.input_length = int_arg('input_length', o.input_length)
  f.label_length = int_arg('label_length', o.label_length)
  f.reduce = checks.reduce(FN, o.reduce, 'mean', { 'mean', 'no' })
  local rg = false
  for i = 1, #x do if type(x[i]) == 'table' and x[i]._requires_grad then rg = true end end
  f.want_grad = rg and config.enable_backprop
  return f:apply(x)[1]
end

return M
