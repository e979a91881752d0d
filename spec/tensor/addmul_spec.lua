-- Specs for T.addmul (runtime/cpu/addmul.c): acc += x * y in place, and its
-- use by Mul's backward for inputs that already own a gradient sum.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local helpers = require 'helpers'
local err_of = helpers.err_of

local function same_bits(a, b)
  local fa, fb = a:reshape(-1):totable(), b:reshape(-1):totable()
  assert.are.equal(#fa, #fb)
  for i = 1, #fa do assert.are.equal(fa[i], fb[i]) end
end

describe('T.addmul', function()
  for _, dt in ipairs({ 'float32', 'float64' }) do
    it('gives the values of the separate product and add (' .. dt .. ')', function()
      T.random.seed(3)
      for _, n in ipairs({ 1, 7, 64, 40000 }) do   -- 40000: the parallel loop
        local acc, x, y = T.random.randn({ n }, dt), T.random.randn({ n }, dt), T.random.randn({ n }, dt)
        local want = T.add(acc, T.mul(x, y))
        assert.are.equal(acc, T.addmul(acc, x, y))
        same_bits(acc, want)
      end
    end)
  end

  it('broadcasts, reads non-contiguous operands and takes acc as an operand', function()
    local acc = T.full({ 2, 3 }, 1.0)
    T.addmul(acc, T.full({ 3 }, 2.0), T.array({ { 3 }, { 4 } }))
    assert.are.same({ { 7, 7, 7 }, { 9, 9, 9 } }, acc:totable())
    local t = T.arange(6):reshape(3, 2):transpose()          -- (2, 3), strided
    local acc2 = T.zeros({ 2, 3 })
    T.addmul(acc2, t, t)
    assert.are.same({ { 0, 4, 16 }, { 1, 9, 25 } }, acc2:totable())
    local a = T.array({ 1, 2, 3 })
    T.addmul(a, a, a)                                        -- a + a * a
    assert.are.same({ 2, 6, 12 }, a:totable())
  end)

  it('names itself in errors', function()
    local acc = T.zeros({ 2, 3 })
    assert.matches('addmul: acc, x and y must be tensors', err_of(T.addmul, acc, 1, T.zeros({ 3 })))
    assert.matches('addmul: shapes %(3,%) and %(4,%) cannot be broadcast', err_of(T.addmul, T.zeros({ 3 }),
      T.ones({ 4 }), T.ones({ 4 })))
    assert.matches("addmul: x %* y has shape %(2, 1, 3%), which does not fit acc's shape %(2, 3%)",
      err_of(T.addmul, acc, T.ones({ 2, 1, 1 }), T.ones({ 3 })))
  end)
end)

describe('Mul backward into an owned gradient sum', function()
  local function grads(opts)
    local a = chainer.Variable(T.array({ 1.001, 0.9, 1.2 }))
    local b = chainer.Variable(T.array({ 0.001, -0.5, 0.25 }))
    local x = chainer.Variable(T.array({ 0.5, 0.25, -1 }))
    local h = x
    for _ = 1, 20 do h = h * a + b + x * x + a * h end
    F.sum(h * a):backward(opts)
    return a.grad, b.grad, x.grad
  end

  it('gives the gradients of the generic path, and leaves tensors users hold alone', function()
    local a1, b1, x1 = grads()
    local a2, b2, x2 = grads({ retain_grad = true })   -- retain_grad takes the generic path
    same_bits(a1, a2)
    same_bits(b1, b2)
    same_bits(x1, x2)
    local a = chainer.Variable(T.array({ 2, 3 }))
    local xs = T.array({ 1, 1 })
    local y = a * xs + a * xs + a * xs
    F.sum(y):backward()
    assert.are.same({ 3, 3 }, a.grad:totable())
    assert.are.same({ 1, 1 }, xs:totable())
  end)
end)
