-- functions/connection/embed_id.lua: F.embed_id(x, W, {ignore_label = nil}).
--
-- y[..., :] = W[x[...], :] for integer ids x (0-based), a C kernel; ids
-- equal to ignore_label give zero rows.  The gradient w.r.t. W is the
-- EmbedIDGrad node (a scatter-add kernel), which is linear in gy: its own
-- backward is embed_id again, so double backprop works.  x gets no gradient.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'

local C, check, box, wrap = T.C, T.check, T.box, T.wrap
local FLOAT32, FLOAT64, CPU = T.DT.float32, T.DT.float64, T.C.CH_CPU

local M = {}

local EmbedIDFunction = FunctionNode:extend('EmbedIDFunction')
M.EmbedIDFunction = EmbedIDFunction

local EmbedIDGrad = FunctionNode:extend('EmbedIDGrad')
M.EmbedIDGrad = EmbedIDGrad

-- The gradient w.r.t. W: the rows of gy added at the ids of x into a new
-- (n_vocab, n_units) tensor (the scatter kernel).
local function grad_W(x, gy, n_vocab, ignore_label)
  local il = ignore_label
  check(C.ch_embed_id_backward(x.ptr, gy.ptr, n_vocab, il and 1 or 0, il or 0, box), 3)
  return wrap(box[0])
end

function EmbedIDFunction:forward(inputs)
  local x, W = inputs[1], inputs[2]
  self:retain_inputs({ 1 })
  self._n_vocab = W.shape[1]
  local il = self.ignore_label
  check(C.ch_embed_id_forward(x.ptr, W.ptr, il and 1 or 0, il or 0, box), 2)
  return { wrap(box[0]) }
end

function EmbedIDFunction:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  local ret = {}
  for k = 1, #idx do
    if idx[k] == 2 then
      local g = setmetatable({}, EmbedIDGrad)
      g.n_vocab, g.ignore_label = self._n_vocab, self.ignore_label
      ret[2] = g:apply({ x, gys[1] })[1]
    end
  end
  return ret
end

-- On tensors: EmbedIDGrad's kernel, or, when backprop hands over W's
-- gradient sum (a table looked up at every step of a sequence), the rows
-- added into it directly.
function EmbedIDFunction:backward_tensors(idx, gys, gxs)
  if idx[#idx] ~= 2 then return end   -- x (integer ids) gets no gradient
  local x, gy = self.inputs[1].data, gys[1]
  local acc = gxs[2]
  local dt = gy.ptr.dt
  if acc ~= nil and self.ignore_label == nil and acc.ptr.dt == dt and acc.ptr.dev == CPU
    and (dt == FLOAT32 or dt == FLOAT64) then
    T.scatter_add(acc, 0, x, gy)
  else
    gxs[2] = grad_W(x, gy, self._n_vocab, self.ignore_label)
  end
end

function EmbedIDGrad:forward(inputs)
  self:retain_inputs({ 1 })
  return { grad_W(inputs[1], inputs[2], self.n_vocab, self.ignore_label) }
end

function EmbedIDGrad:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  local ret = {}
  for k = 1, #idx do
    if idx[k] == 2 then
      local f = setmetatable({}, EmbedIDFunction)
      f.ignore_label = self.ignore_label
      ret[2] = f:apply({ x, gys[1] })[1]
    end
  end
  return ret
end

local SIGNATURE = args.signature { 'ignore_label' }

function M.embed_id(x, W, ...)
  local fn = 'embed_id'
  local opts = args.parse(fn, SIGNATURE, select('#', ...), ...)
  local xd = args.array(fn, 'x', x)
  local Wd = args.array(fn, 'W', W)
  if T.is_float_dtype(xd.dtype) or xd.dtype == 'bool' then
    error('embed_id: x must hold integer ids (int32 or int64), got dtype ' .. xd.dtype, 2)
  end
  if Wd.ptr.nd ~= 2 then
    error('embed_id: W must be 2-d (n_vocab, n_units), got shape ' .. T.shape_str(Wd.shape), 2)
  end
  if not T.is_float_dtype(Wd.dtype) then
    error('embed_id: W must be floating point (got ' .. Wd.dtype .. ')', 2)
  end
  local il = opts.ignore_label
  if il == false then il = nil end
  if il ~= nil and (type(il) ~= 'number' or il ~= math.floor(il)) then
    error('embed_id: ignore_label must be an integer or nil (got ' .. tostring(il) .. ')', 2)
  end
  local f = setmetatable({}, EmbedIDFunction)
  f.ignore_label = il
  return f:apply({ x, W })[1]
end

return M
