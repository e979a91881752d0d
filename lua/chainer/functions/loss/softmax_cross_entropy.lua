-- functions/loss/softmax_cross_entropy.lua:
--   F.softmax_cross_entropy(x, t, {normalize = true, cache_score = true,
--     class_weight = nil, ignore_label = -1, reduce = 'mean',
--     enable_double_backprop = false})
--
-- x (N, C, d1, ...) holds logits, t (N, d1, ...) integer labels in 0..C-1;
-- positions whose label is ignore_label contribute nothing.  The loss at a
-- position is -class_weight[t] * log_softmax(x)[t].  reduce = 'mean' sums
-- and divides by the number of non-ignored labels (normalize = true) or by
-- N (normalize = false), never by less than 1; reduce = 'no' returns the
-- per-position losses, shaped like t.
--
-- The default path runs one fused C kernel (runtime/cpu/softmax_cross_entropy.c)
-- that computes the loss and, when x needs a gradient, the gradient
-- (softmax - onehot) * weight in the same pass.  As in Chainer, that path
-- is differentiable once (its gradient node is linear in the upstream
-- gradient and constant in x); enable_double_backprop = true composes the
-- loss from log_softmax and products instead, so every order works.
-- cache_score is accepted for compatibility (the fused kernel always keeps
-- what backward needs).
local args = require 'chainer._args'
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local config = require('chainer.config').config
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local M = {}
local FN = 'softmax_cross_entropy'
local OPTIONS = args.accept { 'normalize', 'cache_score', 'class_weight', 'ignore_label', 'reduce',
  'enable_double_backprop' }

local box_loss = ffi.new('ch_tensor*[1]')
local box_grad = ffi.new('ch_tensor*[1]')
local cnt = ffi.new('int64_t[1]')

-- Runs the kernel; returns loss (t.shape), grad (x.shape) or nil, count.
local function kernel(x, t, cw, ignore, want_grad, level)
  box_grad[0] = nil
  check(C.ch_softmax_cross_entropy(x.ptr, t.ptr, cw and cw.ptr or nil, ignore, box_loss,
    want_grad and box_grad or nil, nil, cnt), level + 1)
  local loss = T.wrap(box_loss[0])
  local grad = want_grad and T.wrap(box_grad[0]) or nil
  return loss, grad, tonumber(cnt[0])
end

-- shape (1, C, 1, ...) for broadcasting along axis 1
local function axis1_shape(nd, c)
  local s = {}
  for i = 1, nd do s[i] = 1 end
  s[2] = c
  return s
end

local function coeff_of(self, x, count)
  local n
  if self.normalize then n = count else n = x.shape[1] end
  return 1 / math.max(n, 1)
end

---------------------------------------------------------------------------
-- fused path
---------------------------------------------------------------------------
local SoftmaxCrossEntropy = FunctionNode:extend('SoftmaxCrossEntropy')
M.SoftmaxCrossEntropy = SoftmaxCrossEntropy

local SoftmaxCrossEntropyGrad = FunctionNode:extend('SoftmaxCrossEntropyGrad')
M.SoftmaxCrossEntropyGrad = SoftmaxCrossEntropyGrad

function SoftmaxCrossEntropy:forward(inputs)
  local x, t = inputs[1], inputs[2]
  local loss, grad, count = kernel(x, t, self.class_weight, self.ignore_label, self.want_grad, 4)
  self._grad = grad
  self._x, self._t = x, t
  self._tshape = t.shape
  if self.reduce == 'no' then return { loss } end
  self._coeff = coeff_of(self, x, count)
  return { (T.sum(loss) * self._coeff):astype(x.dtype) }
end

-- gx = G * gy * coeff (mean) or G * gy[:, None, ...] (no); linear in gy.
local function grad_of(g, gy, reduce, coeff)
  if reduce == 'mean' then return g * (gy * coeff):astype(g.dtype) end
  local s = g.shape
  s[2] = 1
  return g * gy:reshape(s)
end

-- G = (softmax - onehot) * weight: from the forward pass when it was
-- computed there, else now.
local function unscaled_grad(self)
  local g = self._grad
  if not g then
    local _
    _, g = kernel(self._x, self._t, self.class_weight, self.ignore_label, true, 3)
  end
  return g
end

function SoftmaxCrossEntropy:backward(idx, gys)
  local g = unscaled_grad(self)
  local f = setmetatable({}, SoftmaxCrossEntropyGrad)
  f._g, f.reduce, f._coeff, f._tshape = g, self.reduce, self._coeff, self._tshape
  return { f:apply({ gys[1] })[1], nil }
end

-- On tensors: the gradient node's forward itself.
function SoftmaxCrossEntropy:backward_tensors(idx, gys, gxs)
  if idx[1] == 1 then gxs[1] = grad_of(unscaled_grad(self), gys[1], self.reduce, self._coeff) end
end

function SoftmaxCrossEntropyGrad:forward(inputs)
  return { grad_of(self._g, inputs[1], self.reduce, self._coeff) }
end

function SoftmaxCrossEntropyGrad:backward(idx, gys)
  local sum = U.F('sum')
  local prod = gys[1] * self._g
  if self.reduce == 'mean' then return { sum(prod) * self._coeff } end
  return { U.F('reshape')(sum(prod, { axis = 1 }), self._tshape) }
end

---------------------------------------------------------------------------
-- composed path (enable_double_backprop = true)
---------------------------------------------------------------------------
-- F.log_softmax (functions/activation) when present, else the family's own node
local log_softmax_fn
local function log_softmax(x)
  if log_softmax_fn == nil then
    local ok, mod = pcall(require, 'chainer.functions.activation.softmax')
    log_softmax_fn = ok and mod.log_softmax or U.log_softmax
  end
  if log_softmax_fn == U.log_softmax then return U.log_softmax(x) end
  return log_softmax_fn(x, { axis = 1 })
end

local function composed(x, xd, td, o)
  local nd, c = xd.ptr.nd, xd.shape[2]
  local log_y = log_softmax(x)
  if o.class_weight then log_y = log_y * o.class_weight:reshape(axis1_shape(nd, c)) end
  -- onehot(t) on axis 1, zero at ignored positions
  local tt = td:astype('int64')
  local valid = T.ne(tt, o.ignore_label)
  local ts = xd.shape
  ts[2] = 1
  local classes = T.arange(0, c, 1, 'int64'):reshape(axis1_shape(nd, c))
  local onehot = T.logical_and(T.eq(tt:reshape(ts), classes), valid:reshape(ts)):astype(xd.dtype)
  local per = -U.F('sum')(log_y * onehot, { axis = 1 })
  if o.reduce == 'no' then return per end
  local count = tonumber(T.sum(valid:astype('int64')):item())
  local n = o.normalize and count or xd.shape[1]
  return U.batch_mean(per, n)
end

---------------------------------------------------------------------------
-- wrapper
---------------------------------------------------------------------------
local function class_weight_arg(cw, xd)
  if cw == nil or cw == false then return nil end
  local c = xd.shape[2]
  local w
  if T.is_tensor(cw) then w = cw
  elseif type(cw) == 'table' and cw._is_variable then w = cw.array
  elseif type(cw) == 'table' then
    if #cw ~= c then
      error(string.format('%s: class_weight must have %d entries (one per class), got %d', FN, c, #cw), 3)
    end
    w = T.array(cw, xd.dtype)
  else
    error(string.format('%s: class_weight must be a tensor or a table of numbers (got %s)', FN, type(cw)), 3)
  end
  if w.ptr.nd ~= 1 or w.shape[1] ~= c then
    error(string.format('%s: class_weight must have shape (%d,) (one weight per class), got %s', FN, c,
      T.shape_str(w.shape)), 3)
  end
  return w:astype(xd.dtype)
end

function M.softmax_cross_entropy(x, t, opts)
  local xd, td = args.float_array(FN, 'x', x), args.int_array(FN, 'labels t', t)
  local o = args.options(FN, opts, OPTIONS)
  local ignore = o.ignore_label
  if ignore == nil then ignore = -1 end
  if type(ignore) ~= 'number' or ignore ~= math.floor(ignore) then
    error(string.format('%s: ignore_label must be an integer (got %s)', FN, tostring(ignore)), 2)
  end
  if xd.ptr.nd < 2 then
    error(string.format('%s: x must have at least 2 dimensions (N, C, ...), got shape %s', FN,
      T.shape_str(xd.shape)), 2)
  end
  local reduce = checks.reduce(FN, o.reduce, 'mean', { 'mean', 'no' })
  local cw = class_weight_arg(o.class_weight, xd)
  local normalize = o.normalize ~= false
  if o.enable_double_backprop then
    -- same checks as the kernel (shape, label range) before composing
    local ts = xd.shape
    table.remove(ts, 2)
    if not shape_equal(td, ts) then
      error(string.format('%s: labels t of shape %s do not fit x of shape %s (expected x\'s shape without axis 1)',
        FN, T.shape_str(td.shape), T.shape_str(xd.shape)), 2)
    end
    checks.labels(FN, 't', td, xd.shape[2], ignore)
    return composed(x, xd, td, { class_weight = cw, ignore_label = ignore, reduce = reduce, normalize = normalize })
  end
  local f = setmetatable({}, SoftmaxCrossEntropy)
  f.class_weight, f.ignore_label, f.reduce, f.normalize = cw, ignore, reduce, normalize
  f.want_grad = config.enable_backprop and type(x) == 'table' and x._requires_grad == true
  return f:apply({ x, t })[1]
end

return M
