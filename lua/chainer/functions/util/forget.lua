-- functions/util/forget.lua: F.forget(func, x1, x2, ...), Chainer's
-- memory-saving wrapper.  The forward calls func without recording its
-- graph (only the inputs are kept); backward calls func again on fresh
-- copies of the inputs, with the graph, and backpropagates through that.
-- func's intermediate values thus live only during backward.  As in
-- Chainer, the gradient is not differentiable again (double backprop
-- through forget is an error), and tensor inputs become Variables that
-- require a gradient.
local chainer = require 'chainer'
local config = require('chainer.config').config
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local T = require 'chainer.tensor'

local M = {}

local function is_variable(v) return type(v) == 'table' and v._is_variable == true end

-- func's results as a list of Variables (a Variable or several).
local function call_func(func, xs)
  local outs = { func(unpack(xs, 1, #xs)) }
  if #outs == 0 then
    error('forget: func returned nothing; it must return one or more Variables', 0)
  end
  for k = 1, #outs do
    if not is_variable(outs[k]) then
      error(string.format('forget: func must return Variables, but its result %d is %s', k,
        T.is_tensor(outs[k]) and 'a tensor' or type(outs[k])), 0)
    end
  end
  return outs
end

local Forget = FunctionNode:extend('Forget')
M.Forget = Forget

function Forget:forward(inputs)
  local all = {}
  for k = 1, #inputs do all[k] = k end
  self:retain_inputs(all)
  local outs = chainer.no_backprop_mode(function()
    local xs = {}
    for k = 1, #inputs do xs[k] = Variable(inputs[k]) end
    return call_func(self.func, xs)
  end)
  local ys = {}
  for k = 1, #outs do ys[k] = outs[k].array end
  return ys
end

function Forget:backward(idx, gys)
  if config.enable_backprop then
    error('forget: double backpropagation through F.forget is not supported (as in Chainer)', 0)
  end
  local inputs = self:get_retained_inputs()
  -- new Variables without creators: the recomputed graph starts here
  local fresh = {}
  for k = 1, #inputs do fresh[k] = Variable(inputs[k].array) end
  local outs = chainer.force_backprop_mode(function() return call_func(self.func, fresh) end)
  return require('chainer.backprop').recomputed_grads(outs, gys, fresh)
end

-- F.forget(func, x1, x2, ...) -> func's outputs (Variables)
function M.forget(func, ...)
  if type(func) ~= 'function' and not (type(func) == 'table' and getmetatable(func)
      and getmetatable(func).__call) then
    error(string.format('forget: func must be a function (got %s)', type(func)), 2)
  end
  local xs = { ... }
  local n = select('#', ...)
  if n == 0 then error('forget: give at least one input after func', 2) end
  for k = 1, n do
    local x = xs[k]
    if T.is_tensor(x) then
      xs[k] = Variable(x, { requires_grad = true })
    elseif not is_variable(x) then
      error(string.format('forget: input %d must be a Variable or a tensor (got %s)', k, type(x)), 2)
    end
  end
  local node = setmetatable({ func = func }, Forget)
  return unpack(node:apply(xs))
end

return M
