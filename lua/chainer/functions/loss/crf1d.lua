-- functions/loss/crf1d.lua: linear-chain conditional random fields.
--
--   F.crf1d(cost, xs, ys, {reduce = 'mean'})
--     cost (K, K) transition scores (cost[i][j]: label i followed by j);
--     xs a Lua array of T emission Variables (B_t, K), ys a Lua array of T
--     integer label tensors (B_t,).  Sequences are time-major and sorted
--     longest first (B_0 >= B_1 >= ...), as Chainer expects (see
--     F.transpose_sequence).  loss = logZ - score per sequence; 'mean'
--     averages over the B_0 sequences, 'no' returns (B_0,).
--   F.argmax_crf1d(cost, xs) -> score, path
--     Viterbi decoding: score (B_0,) is the best path's score (a Variable,
--     differentiable in cost and xs), path a Lua array of T int32 tensors
--     (B_t,) of labels.
--
-- The forward-backward recursions run in C (runtime/cpu/crf1d.c), which
-- also returns per-sequence gradients in the same call.  crf1d is
-- differentiable once (Chainer's composed version also allows double
-- backprop; here the gradient is linear in the upstream gradient only).
local args = require 'chainer._args'
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local FunctionNode = require 'chainer.function_node'
local config = require('chainer.config').config
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local M = {}

local CRF1D_SIGNATURE = args.signature { 'reduce' }

local CRF1d = FunctionNode:extend('CRF1d')
M.CRF1d = CRF1d
local CostGrad = FunctionNode:extend('CRF1dCostGrad')
local EmissionGrad = FunctionNode:extend('CRF1dEmissionGrad')

local box_loss = ffi.new('ch_tensor*[1]')
local box_gx = ffi.new('ch_tensor*[1]')
local box_gc = ffi.new('ch_tensor*[1]')

local function run(cost, xs, ys, want_grad, level)
  local n = #xs
  local xa = ffi.new('ch_tensor*[?]', n)
  local ya = ffi.new('ch_tensor*[?]', n)
  for i = 1, n do xa[i - 1] = xs[i].ptr; ya[i - 1] = ys[i].ptr end
  check(C.ch_crf1d(cost.ptr, n, xa, ya, box_loss, want_grad and box_gx or nil, want_grad and box_gc or nil),
    level + 1)
  local loss = T.wrap(box_loss[0])
  if not want_grad then return loss end
  return loss, T.wrap(box_gx[0]), T.wrap(box_gc[0])
end

function CRF1d:forward(inputs)
  local cost = inputs[1]
  local xs = {}
  for i = 2, #inputs do xs[i - 1] = inputs[i] end
  local loss, gx, gc = run(cost, xs, self.ys, self.want_grad, 3)
  self._in = inputs
  self._gx, self._gc = gx, gc
  self._b = loss.shape[1]
  if self.reduce == 'no' then return { loss } end
  return { U.batch_mean_tensor(loss, self._b) }
end

function CRF1d:backward(idx, gys)
  if not self._gx then
    local inputs = self._in
    local xs = {}
    for i = 2, #inputs do xs[i - 1] = inputs[i] end
    local _
    _, self._gx, self._gc = run(inputs[1], xs, self.ys, true, 2)
  end
  local out = {}
  for k = 1, #idx do
    local i = idx[k]
    local f
    if i == 1 then
      f = setmetatable({}, CostGrad)
      f._g = self._gc
    else
      f = setmetatable({}, EmissionGrad)
      local bt = self._in[i].shape[1]
      f._g = self._gx:select(i - 2):slice({ 0, bt })
      f._bt = bt
    end
    f.reduce, f._b = self.reduce, self._b
    out[k] = f:apply({ gys[1] })[1]
  end
  out.n = #idx
  return out
end

-- per-sequence weights w (B,) from the upstream gradient
local function weights(self, gy)
  if self.reduce == 'mean' then
    return T.full({ self._b }, 1 / math.max(1, self._b), gy.dtype) * gy
  end
  return gy
end

-- gcost = sum_b w_b G_b
function CostGrad:forward(inputs)
  local w = weights(self, inputs[1])
  local g = self._g
  local k = g.shape[2]
  return { T.matmul(w:reshape({ 1, self._b }), g:reshape({ self._b, k * k })):reshape({ k, k }) }
end

function CostGrad:backward(idx, gys)
  local g = self._g
  local k = g.shape[2]
  local per = U.F('reshape')(U.F('matmul')(g:reshape({ self._b, k * k }), U.F('reshape')(gys[1], { k * k, 1 })),
    { self._b })
  if self.reduce == 'mean' then return { U.batch_mean(per, self._b) } end
  return { per }
end

-- gx_t = G_t * w[:B_t, None]
function EmissionGrad:forward(inputs)
  local w = weights(self, inputs[1]):slice({ 0, self._bt })
  return { self._g * w:reshape({ self._bt, 1 }) }
end

function EmissionGrad:backward(idx, gys)
  local per = U.F('sum')(gys[1] * self._g, { axis = 1 })
  if self._bt < self._b then
    -- pad back to (B,) with a constant (B, B_t) selection matrix
    local e = T.eye(self._b, self._bt, 0, per.dtype)
    per = U.F('reshape')(U.F('matmul')(e, U.F('reshape')(per, { self._bt, 1 })), { self._b })
  end
  if self.reduce == 'mean' then return { U.batch_mean(per, self._b) } end
  return { per }
end

local function check_lists(fn, cost, xs, ys)
  local cd = args.float_array(fn, 'cost', cost, 3)
  if type(xs) ~= 'table' or T.is_tensor(xs) or xs._is_variable or #xs == 0 then
    error(fn .. ': xs must be a non-empty Lua array of (B, K) Variables or tensors, one per time step', 3)
  end
  for i = 1, #xs do args.array(fn, 'xs[' .. (i - 1) .. ']', xs[i], 3) end
  if ys then
    if type(ys) ~= 'table' or T.is_tensor(ys) or ys._is_variable or #ys ~= #xs then
      error(string.format('%s: ys must be a Lua array of %d integer label tensors (one per element of xs)', fn, #xs), 3)
    end
    for i = 1, #ys do args.int_array(fn, 'ys[' .. (i - 1) .. ']', ys[i], 3) end
  end
  return cd
end

function M.crf1d(cost, xs, ys, opts)
  local fn = 'crf1d'
  check_lists(fn, cost, xs, ys)
  local o = args.parse(fn, CRF1D_SIGNATURE, 1, opts)
  local f = setmetatable({}, CRF1d)
  local yd = {}
  for i = 1, #ys do yd[i] = Variable.as_array(ys[i]) end
  f.ys = yd
  f.reduce = checks.reduce(fn, o.reduce, 'mean', { 'mean', 'no' })
  local rg = type(cost) == 'table' and cost._requires_grad
  for i = 1, #xs do if type(xs[i]) == 'table' and xs[i]._requires_grad then rg = true end end
  f.want_grad = rg and config.enable_backprop or false
  local inputs = { cost }
  for i = 1, #xs do inputs[i + 1] = xs[i] end
  return f:apply(inputs)[1]
end

local box_path = ffi.new('ch_tensor*[1]')

function M.argmax_crf1d(cost, xs)
  local fn = 'argmax_crf1d'
  local cd = check_lists(fn, cost, xs)
  local n = #xs
  local xa = ffi.new('ch_tensor*[?]', n)
  local xd = {}
  for i = 1, n do xd[i] = Variable.as_array(xs[i]); xa[i - 1] = xd[i].ptr end
  check(C.ch_crf1d_argmax(cd.ptr, n, xa, box_path), 2)
  local full = T.wrap(box_path[0])
  local b, k = xd[1].shape[1], cd.shape[1]
  local path = {}
  for t = 1, n do path[t] = full:select(t - 1):slice({ 0, xd[t].shape[1] }):copy() end
  -- the best path's score, composed so that it is differentiable
  local dt = cd.dtype
  local classes = T.arange(0, k, 1, 'int64'):reshape({ 1, k })
  local cost_flat = U.F('reshape')(cost, { k * k, 1 })
  local score
  for t = 1, n do
    local bt = xd[t].shape[1]
    local p = path[t]:astype('int64')
    local onehot = T.eq(p:reshape({ bt, 1 }), classes):astype(dt)
    local s = U.F('sum')(xs[t] * onehot, { axis = 1 })
    if t > 1 then
      local prev = path[t - 1]:slice({ 0, bt }):astype('int64')
      s = s + U.F('reshape')(U.gather_rows(cost_flat, prev * k + p), { bt })
    end
    if bt < b then
      s = U.F('reshape')(U.F('matmul')(T.eye(b, bt, 0, dt), U.F('reshape')(s, { bt, 1 })), { b })
    end
    score = score and score + s or s
  end
  return score, path
end

return M
