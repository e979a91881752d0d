-- functions/math/average.lua: F.average(x, {axis =, weights =, returned =,
-- keepdims =}) and F.mean (the same function), composed of differentiable
-- functions as in Chainer.  A 1-D `weights` with an integer axis weights
-- that axis; otherwise weights must have x's shape.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'axis', 'weights', 'returned', 'keepdims' }

local function average(fn, x, opts)
  local F = H.F()
  local d = args.float_array(fn, 'x', x, 3)
  local axis, weights, returned, keepdims
  if type(opts) == 'number' or (type(opts) == 'table' and opts[1] ~= nil) then axis = opts -- Chainer's positional axis
  else
    opts = args.options(fn, opts, OPTIONS, 3)
    axis, weights, returned, keepdims = opts.axis, opts.weights, opts.returned, opts.keepdims
  end
  if axis == false then axis = nil end
  if weights == false then weights = nil end
  local nd = d.ptr.nd
  local axes = H.axes(axis, nd, fn, 3)
  local divider
  if weights ~= nil then
    local w = args.array(fn, 'weights', weights, 3)
    H.same_dtype(d, w, fn, 'x', 'weights', 3)
    if axis ~= nil and w.ptr.nd == 1 and nd ~= 1 then
      if #axes ~= 1 then error(fn .. ': 1-D weights need a single integer axis', 3) end
      local a = axes[1]
      if w.shape[1] ~= d.shape[a + 1] then
        error(string.format('%s: weights has length %d, expected x.shape[%d] = %d', fn, w.shape[1], a, d.shape[a + 1]), 3)
      end
      local s = {}
      for i = 1, nd do s[i] = 1 end
      s[a + 1] = w.shape[1]
      weights = F.broadcast_to(F.reshape(weights, s), d.shape)
    elseif not require('chainer.functions.math.sum_to').shape_equal(w, d.shape) then
      error(string.format('%s: weights has shape %s, expected the shape of x %s (or 1-D along axis)', fn,
        T.shape_str(w.shape), T.shape_str(d.shape)), 3)
    end
    x = x * weights
  end
  local s = F.sum(x, { axis = axes, keepdims = keepdims })
  if weights ~= nil then
    divider = F.sum(weights, { axis = axes, keepdims = keepdims })
    s = s / divider
  else
    local n = 1
    if axes == nil then n = tonumber(d.ptr.numel)
    else for k = 1, #axes do n = n * d.shape[axes[k] + 1] end end
    s = s * (1 / n)
    divider = n
  end
  if returned then
    if type(divider) == 'number' then
      divider = Variable.as_variable(T.full(s.shape, divider, d.dtype))
    end
    return s, divider
  end
  return s
end

function M.average(x, opts) return average('average', x, opts) end
function M.mean(x, opts) return average('mean', x, opts) end

return M
