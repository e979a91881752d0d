-- functions/math/bias_scale.lua: F.bias(x, y, {axis = 1}) and
-- F.scale(x, y, {axis = 1}): y's shape must equal x.shape[axis : axis +
-- y.ndim]; y is broadcast over the other axes and added to / multiplied
-- with x.  Composed of differentiable functions (reshape, broadcast_to, +, *).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'axis' }

local function broadcast(fn, x, y, opts)
  local F = H.F()
  local dx, dy = H.float_pair(fn, 'x', x, 'y', y, 3)
  local axis = H.number_or_option(fn, opts, OPTIONS, 'axis', 1, 3)
  local xs, ys = dx.shape, dy.shape
  local nx, ny = #xs, #ys
  if type(axis) ~= 'number' or axis ~= math.floor(axis) then
    error(string.format('%s: axis must be an integer (got %s)', fn, tostring(axis)), 3)
  end
  if axis < 0 then axis = axis + nx end
  local ok = axis >= 0 and axis + ny <= nx
  if ok then
    for i = 1, ny do if ys[i] ~= xs[axis + i] then ok = false end end
  end
  if not ok then
    error(string.format('%s: y has shape %s, which must equal x.shape[%d:%d] for x of shape %s', fn,
      T.shape_str(ys), axis, axis + ny, T.shape_str(xs)), 3)
  end
  local s = {}
  for i = 1, nx do s[i] = 1 end
  for i = 1, ny do s[axis + i] = ys[i] end
  return F.broadcast_to(F.reshape(y, s), xs)
end

function M.bias(x, y, opts) return x + broadcast('bias', x, y, opts) end
function M.scale(x, y, opts) return x * broadcast('scale', x, y, opts) end

return M
