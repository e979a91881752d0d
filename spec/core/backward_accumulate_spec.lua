-- Specs for FunctionNode:backward_accumulate: backprop calls a class's own
-- (and only then), with the gradients the inputs have received so far.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local Variable = chainer.Variable
local testing = chainer.testing

local helpers = require 'helpers'
local err_of = helpers.err_of

-- Cube: y = c * x^3, gx = 3c x^2 gy; the reference node, with backward only.
local Cube = chainer.FunctionNode:extend('Cube')
function Cube:init(c) self.c = c end
function Cube:forward(inputs)
  self:retain_inputs({ 1 })
  return { inputs[1] * inputs[1] * inputs[1] * self.c }
end
function Cube:backward(indexes, gys)
  local x = self:get_retained_inputs()[1]
  return { gys[1] * x * x * (3 * self.c) }
end

-- FusedCube: the same function with its own backward_accumulate, which
-- folds the sum received so far into its own expression (one node for
-- gx + sum, none for backprop to add afterwards).  It records what it
-- received.
local FusedCube = Cube:extend('FusedCube')
FusedCube.received = {}
function FusedCube:backward_accumulate(indexes, gys, grad_inputs)
  local log = FusedCube.received
  log[#log + 1] = { indexes = indexes, grad_input = grad_inputs[1] and grad_inputs[1].array:copy() or false }
  local x = self:get_retained_inputs()[1]
  local gx = gys[1] * x * x * (3 * self.c)
  if grad_inputs[1] == nil then return { gx } end
  return { F.sum(F.stack({ gx, grad_inputs[1] }), 0) }
end

local function two_paths(node_class, x)
  local a = node_class(2):apply({ x })[1]
  local b = node_class(-0.5):apply({ x })[1]
  return F.sum(a + b * b)
end

describe('FunctionNode:backward_accumulate', function()
  local x0 = T.array({ 0.3, -1.2, 0.7, 2.0 }, 'float64')
  before_each(function() FusedCube.received = {} end)

  it('the default adds backward\'s gradient to the ones received, per target', function()
    local x, y = Variable(T.array({ 1, 2 }, 'float64')), Variable(T.array({ 3, 4 }, 'float64'))
    local node = Cube(1)
    node:apply({ x })
    local gy = Variable(T.array({ 1, 1 }, 'float64'))
    local out = node:backward_accumulate({ 1 }, { gy }, { nil })
    testing.assert_allclose(out[1], { 3, 12 })
    out = node:backward_accumulate({ 1 }, { gy }, { y })
    testing.assert_allclose(out[1], { 6, 16 })
    assert.are.equal(1, out.n)
  end)

  it('an override gives the grads of the default and is called with the sums so far', function()
    local xr, xf = Variable(x0:copy()), Variable(x0:copy())
    two_paths(Cube, xr):backward()
    two_paths(FusedCube, xf):backward()
    testing.assert_allclose(xf.grad, xr.grad, { atol = 1e-12, rtol = 1e-12 })
    -- two calls: the first node run sees no gradient yet, the second the first's
    local log = FusedCube.received
    assert.are.equal(2, #log)
    assert.are.same({ 1 }, log[1].indexes)
    assert.is_false(log[1].grad_input)
    assert.is_truthy(log[2].grad_input)
    local xv = x0:tolist()
    local firsts = {}
    for i, v in ipairs(xv) do
      firsts[i] = 6 * v * v   -- a = 2 x^3 runs first (pushed first, same rank as b's node)
    end
    testing.assert_allclose(log[2].grad_input, firsts, { atol = 1e-12, rtol = 1e-12 })
  end)

  it('is called on the fast tensor path too, for a subclass of a built-in op', function()
    local ReLU = getmetatable(F.relu(Variable(x0)).creator)
    assert.is_function(ReLU.backward_tensors)
    local calls = {}
    local MyReLU = ReLU:extend('MyReLU')
    function MyReLU:backward_accumulate(indexes, gys, grad_inputs)
      calls[#calls + 1] = grad_inputs[1] ~= nil
      return chainer.FunctionNode.backward_accumulate(self, indexes, gys, grad_inputs)
    end
    assert.is_false(MyReLU.backward_tensors)
    assert.is_function(ReLU.backward_tensors)   -- the parent keeps its own
    local x = Variable(x0:copy())
    x.grad = T.ones({ 4 }, 'float64')   -- backward adds to an existing grad: received as the sum so far
    local y = MyReLU():apply({ x })[1]
    F.sum(y):backward()
    assert.are.same({ true }, calls)
    testing.assert_allclose(x.grad, { 2, 1, 2, 2 })
  end)

  it('receives the sum at the first of two positions of one input only', function()
    local seen
    local Mul = chainer.FunctionNode:extend('FusedMul')
    function Mul:forward(inputs)
      self:retain_inputs({ 1, 2 })
      return { inputs[1] * inputs[2] }
    end
    function Mul:backward(indexes, gys)
      local a, b = self:get_retained_inputs()[1], self:get_retained_inputs()[2]
      return { gys[1] * b, gys[1] * a }
    end
    function Mul:backward_accumulate(indexes, gys, grad_inputs)
      seen = { grad_inputs[1] ~= nil, grad_inputs[2] ~= nil, grad_inputs.n }
      return chainer.FunctionNode.backward_accumulate(self, indexes, gys, grad_inputs)
    end
    local x = Variable(x0:copy())
    x.grad = T.full({ 4 }, 3, 'float64')   -- the sum so far, at position 1 only
    F.sum(Mul():apply({ x, x })[1]):backward()
    assert.are.same({ true, false, 2 }, seen)
    testing.assert_allclose(x.grad, x0 * 2 + 3)
  end)

  it('works under double backprop, and the gradient checks pass through it', function()
    local x = Variable(x0:copy())
    local loss = two_paths(FusedCube, x)
    local gx = chainer.grad({ loss }, { x }, { enable_double_backprop = true })[1]
    local ggx = chainer.grad({ F.sum(gx) }, { x })[1]
    local xr = Variable(x0:copy())
    local gr = chainer.grad({ two_paths(Cube, xr) }, { xr }, { enable_double_backprop = true })[1]
    local ggr = chainer.grad({ F.sum(gr) }, { xr })[1]
    testing.assert_allclose(gx, gr, { atol = 1e-12, rtol = 1e-12 })
    testing.assert_allclose(ggx, ggr, { atol = 1e-10, rtol = 1e-10 })
    -- against finite differences as well
    local f = function(v) return two_paths(FusedCube, v) end
    chainer.gradient_check.check_backward(f, { x0 }, T.array(1, 'float64'))
    chainer.gradient_check.check_double_backward(f, { x0 }, T.array(1, 'float64'), { T.ones({ 4 }, 'float64') })
  end)

  it('runs inside the function hooks', function()
    local order = {}
    local Hook = chainer.FunctionHook:extend('OrderHook')
    function Hook:backward_preprocess() order[#order + 1] = 'pre' end
    function Hook:backward_postprocess() order[#order + 1] = 'post' end
    local Node = Cube:extend('LoggedCube')
    function Node:backward_accumulate(indexes, gys, grad_inputs)
      order[#order + 1] = 'accumulate'
      return chainer.FunctionNode.backward_accumulate(self, indexes, gys, grad_inputs)
    end
    local x = Variable(x0:copy())
    local y = Node(1):apply({ x })[1]
    local hook = Hook()
    y.creator:add_hook(hook, 'order')
    F.sum(y):backward()
    assert.are.same({ 'pre', 'accumulate', 'post' }, order)
  end)

  it('an override returning more gradients than targets is an error naming the node', function()
    local Bad = Cube:extend('BadAccumulate')
    function Bad:backward_accumulate(indexes, gys) return { gys[1], gys[1] } end
    local x = Variable(x0:copy())
    local e = err_of(function() F.sum(Bad(1):apply({ x })[1]):backward() end)
    assert.matches('BadAccumulate: backward_accumulate must return one gradient per target input %(1; got 2%)', e)
  end)
end)
