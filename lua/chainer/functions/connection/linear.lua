-- functions/connection/linear.lua: F.linear(x, W, b, {n_batch_axes = 1}).
--
-- y = x W^T + b with W (out, in) as in Chainer.  The forward of float32 and
-- float64 is one C call (ch_linear: y's rows start as b, then one gemm with
-- W read transposed in place and beta = 1, or gemv for a single row);
-- float16 makes that call in float32 and rounds the result.  The gradients are matmuls (gx = gy W,
-- gW = gy^T x, again transposed views only) and a sum, so they are
-- differentiable again.  When no graph is to be recorded (inference under
-- no_backprop_mode; FunctionNode.can_skip_node) a 2-d float32/float64 x goes
-- straight to ch_linear and its result is wrapped: no node, no tables.
local args = require 'chainer._args'
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local U = require 'chainer.functions.connection._util'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check
local new_var = require('chainer.variable').new_var
local skip_node = FunctionNode.can_skip_node

local M = {}

local LinearFunction = FunctionNode:extend('LinearFunction')
M.LinearFunction = LinearFunction

local TRANSB = { transb = true }
local TRANSA = { transa = true }
local GEMM_TA_ACC = { transa = true, beta = 1 }
local AXIS0 = { axis = 0 }

local RETAIN = { 1, 2 }
local box = ffi.new('ch_tensor*[1]')
local FLOAT32, FLOAT64 = T.DT.float32, T.DT.float64

function LinearFunction:forward(inputs)
  local x, W, b = inputs[1], inputs[2], inputs[3]
  self:retain_inputs(RETAIN)
  local xp = x.ptr
  local dt = xp.dt
  -- ch_linear runs on either device (cuBLAS on a GPU) and names mixed ones
  if dt == FLOAT32 or dt == FLOAT64 then
    check(C.ch_linear(xp, W.ptr, b ~= nil and b.ptr or nil, box), 3)
    return { T.wrap(box[0]) }
  end
  -- float16: no half-precision gemm on the CPU; ch_linear in float32 and
  -- one rounding to float16 at the end
  local x32, W32 = x:astype('float32'), W:astype('float32')
  local b32 = b ~= nil and b:astype('float32') or nil
  check(C.ch_linear(x32.ptr, W32.ptr, b32 ~= nil and b32.ptr or nil, box), 3)
  return { T.wrap(box[0]):astype(x.dtype) }
end

-- The gradients, written once for both protocols: gx = gy W, gW = gy^T x
-- (transposed views only) and gb = the sum of gy's rows.  ops is the
-- differentiable functions for backward (Variables) or the tensor kernels
-- for backward_tensors.  gxs is the table to fill; from backprop it may
-- hold W's gradient sum on entry, which gy^T x is then added into (a gemm
-- with beta = 1: a layer applied at many steps takes no W-sized temporary
-- per step).
local function gradients(ops, idx, gy, x, W, gxs)
  for k = 1, #idx do
    local i = idx[k]
    if i == 1 then
      gxs[1] = ops.matmul(gy, W)
    elseif i == 2 then
      local acc = gxs[2]
      if acc ~= nil and acc.ptr.dt == gy.ptr.dt and (acc.ptr.dt == FLOAT32 or acc.ptr.dt == FLOAT64) then
        T.gemm(acc, gy, x, GEMM_TA_ACC)
      else
        gxs[2] = ops.matmul(gy, x, TRANSA)
      end
    else
      gxs[3] = ops.sum(gy, AXIS0)
    end
  end
  return gxs
end

local TENSOR_OPS = { matmul = T.matmul, sum = T.sum }
local VARIABLE_OPS = {}   -- filled on first use (those modules load this one's siblings)

function LinearFunction:backward(idx, gys)
  if not VARIABLE_OPS.matmul then
    VARIABLE_OPS.matmul = require('chainer.functions.math.matmul').matmul
    VARIABLE_OPS.sum = require('chainer.functions.math.sum').sum
  end
  local xs = self:get_retained_inputs()
  return gradients(VARIABLE_OPS, idx, gys[1], xs[1], xs[2], {})
end

function LinearFunction:backward_tensors(idx, gys, gxs)
  local ins = self.inputs
  gradients(TENSOR_OPS, idx, gys[1], ins[1].data, ins[2].data, gxs)
end

local SIGNATURE = args.signature { 'n_batch_axes' }

function M.linear(x, W, b, ...)
  local fn = 'linear'
  local opts
  b, opts = U.split_args(fn, b, SIGNATURE, ...)
  local xd, Wd, bd = U.x_W_b(fn, x, W, b)
  local nba = opts.n_batch_axes or 1
  if type(nba) ~= 'number' or nba < 1 or nba ~= math.floor(nba) then
    error('linear: n_batch_axes must be a positive integer (got ' .. tostring(nba) .. ')', 2)
  end
  local xp, Wp = xd.ptr, Wd.ptr
  local nd = xp.nd
  if nd < nba + 1 then
    error(string.format('linear: x must have more than n_batch_axes=%d axes, got shape %s', nba,
      T.shape_str(xd.shape)), 2)
  end
  if Wp.nd ~= 2 then
    error('linear: W must be 2-d (out_size, in_size), got shape ' .. T.shape_str(Wd.shape), 2)
  end
  local dt = xp.dt
  if not T.is_float_code[dt] then
    error('linear: x must be floating point (got ' .. xd.dtype .. ')', 2)
  end
  if dt ~= Wp.dt then
    error(string.format('linear: x and W have different dtypes (%s and %s)', xd.dtype, Wd.dtype), 2)
  end
  local rows, inner
  if nd == 2 then
    -- (no loop for the common case: every short loop LuaJIT unrolls in a
    -- trace uses up the unroll budget the callers' tail calls draw on)
    rows, inner = tonumber(xp.dim[0]), tonumber(xp.dim[1])
  else
    rows, inner = 1, 1
    for i = 0, nba - 1 do rows = rows * tonumber(xp.dim[i]) end
    for i = nba, nd - 1 do inner = inner * tonumber(xp.dim[i]) end
  end
  local out = tonumber(Wp.dim[0])
  if inner ~= tonumber(Wp.dim[1]) then
    error(string.format('linear: x has %d input features (shape %s, n_batch_axes=%d) but W.shape[1] is %d', inner,
      T.shape_str(xd.shape), nba, tonumber(Wp.dim[1])), 2)
  end
  if bd ~= nil then
    local bp = bd.ptr
    if bp.nd ~= 1 or tonumber(bp.dim[0]) ~= out then
      error(string.format('linear: b must have shape (%d,) to match W, got %s', out, T.shape_str(bd.shape)), 2)
    end
    if bp.dt ~= dt then
      error(string.format('linear: x and b have different dtypes (%s and %s)', xd.dtype, bd.dtype), 2)
    end
  end
  if nd == 2 and (dt == FLOAT32 or dt == FLOAT64) then
    -- (as apply: the output requires a gradient when an input does)
    local requires_grad = (type(x) == 'table' and x._requires_grad == true) or (type(W) == 'table' and W._requires_grad == true)
      or (type(b) == 'table' and b._requires_grad == true)
    if skip_node(requires_grad) then
      check(C.ch_linear(xp, Wp, bd ~= nil and bd.ptr or nil, box), 2)
      local v = new_var(T.wrap(box[0]), requires_grad)
      return v   -- (not a tail call: see variable.lua's new_var)
    end
  end
  if nd ~= 2 then x = require('chainer.functions.array.reshape').reshape(x, { rows, inner }) end
  local f = setmetatable({}, LinearFunction)
  local y
  if b ~= nil then y = f:apply({ x, W, b })[1] else y = f:apply({ x, W })[1] end
  if nba ~= 1 then
    local ys = {}
    for i = 1, nba do ys[i] = tonumber(xp.dim[i - 1]) end
    ys[nba + 1] = out
    y = require('chainer.functions.array.reshape').reshape(y, ys)
  end
  return y
end

return M
