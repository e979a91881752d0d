-- functions/activation/lstm.lua: F.lstm(c_prev, x) -> c, h, Chainer's LSTM
-- cell as an activation.
--
-- x (B, 4U, ...) holds the gate pre-activations interleaved per unit:
-- x.reshape(B, U, 4, ...) gives (a, i, f, o).  c_prev (Bc, U, ...) may have
-- more rows than x (sequences that ended): those rows of c are c_prev, and
-- h has x's B rows only.
--   c = tanh(a) σ(i) + σ(f) c_prev,   h = σ(o) tanh(c)
-- The forward, the gradient (LSTMGrad) and the gradient's gradient are
-- fused C kernels (runtime/cpu/lstm.c).  As in Chainer, LSTMGrad's own
-- backward gives exact second-order gradients; they are constants for a
-- third differentiation.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local C, check, box, wrap = T.C, T.check, T.box, T.wrap
local ffi = require 'ffi'

local M = {}

local box2 = ffi.new('ch_tensor*[4]')

local LSTM = FunctionNode:extend('LSTM')
M.LSTM = LSTM
local LSTMGrad = FunctionNode:extend('LSTMGrad')
M.LSTMGrad = LSTMGrad

function LSTM:forward(inputs)
  self:retain_inputs({ 1, 2 })
  check(C.ch_lstm_forward(inputs[1].ptr, inputs[2].ptr, box2, box2 + 1), 3)
  return { wrap(box2[0]), wrap(box2[1]) }
end

function LSTM:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local gc, gh = gys[1], gys[2]
  local node = setmetatable({ has_gc = gc ~= nil, has_gh = gh ~= nil }, LSTMGrad)
  local ins = { xs[1], xs[2] }
  if gc ~= nil then ins[#ins + 1] = gc end
  if gh ~= nil then ins[#ins + 1] = gh end
  local r = node:apply(ins)
  return { r[1], r[2] }
end

local function ptr_or_nil(t) return t and t.ptr or nil end

-- inputs: c_prev, x, [gc], [gh] -> gc_prev, gx
function LSTMGrad:forward(inputs)
  self:retain_inputs({ 1, 2, 3, 4 })
  local k = 3
  local gc, gh
  if self.has_gc then gc = inputs[k]; k = k + 1 end
  if self.has_gh then gh = inputs[k] end
  check(C.ch_lstm_backward(inputs[1].ptr, inputs[2].ptr, ptr_or_nil(gc), ptr_or_nil(gh), box2, box2 + 1), 3)
  return { wrap(box2[0]), wrap(box2[1]) }
end

function LSTMGrad:backward(idx, ggs)
  local xs = self:get_retained_inputs()
  local k = 3
  local gc, gh
  if self.has_gc then gc = xs[k].array; k = k + 1 end
  if self.has_gh then gh = xs[k].array end
  local ggcp, ggx = ggs[1] and ggs[1].array, ggs[2] and ggs[2].array
  check(C.ch_lstm_grad_grad(xs[1].array.ptr, xs[2].array.ptr, ptr_or_nil(gc), ptr_or_nil(gh),
    ptr_or_nil(ggcp), ptr_or_nil(ggx), box2, box2 + 1, box2 + 2, box2 + 3), 3)
  local g_cp, g_x, g_gc, g_gh = wrap(box2[0]), wrap(box2[1]), wrap(box2[2]), wrap(box2[3])
  local out = { g_cp, g_x }
  k = 3
  if self.has_gc then out[k] = g_gc; k = k + 1 end
  if self.has_gh then out[k] = g_gh end
  return out
end

-- F.lstm(c_prev, x) -> c, h
function M.lstm(c_prev, x)
  local cd = args.float_array('lstm', 'c_prev', c_prev)
  local xd = args.float_array('lstm', 'x', x)
  if cd.ptr.nd < 2 then
    error(string.format('lstm: c_prev must be at least 2-d (B, U, ...), got %d-d', cd.ptr.nd), 2)
  end
  H.same_dtype(cd, xd, 'lstm', 'c_prev', 'x')
  if xd.dtype == 'float16' then
    -- the kernels work in float32; cast is differentiable, so gradients flow
    local F = H.F()
    local c, h = M.lstm(F.cast(c_prev, 'float32'), F.cast(x, 'float32'))
    return F.cast(c, 'float16'), F.cast(h, 'float16')
  end
  local r = setmetatable({}, LSTM):apply({ c_prev, x })
  return r[1], r[2]
end

return M
