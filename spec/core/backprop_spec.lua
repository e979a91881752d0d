-- Specs for backprop: traversal order, accumulation, retain_grad, modes,
-- chainer.grad / chainer.backward, deep graphs and memory.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local Variable = chainer.Variable

local helpers = require 'helpers'
local vals, err_of = helpers.vals, helpers.err_of

describe('backprop', function()
  it('accumulates at branches and for a reused variable', function()
    -- y = x*x + exp(x) + x  ->  dy/dx = 2x + exp(x) + 1
    local x = Variable(T.array({ 0, 1 }, 'float64'))
    local y = F.sum(x * x + F.exp(x) + x)
    y:backward()
    local g = vals(x.grad)
    assert.is_true(math.abs(g[1] - 2) < 1e-12)
    assert.is_true(math.abs(g[2] - (3 + math.exp(1))) < 1e-12)
  end)

  it('runs a function only after all consumers of its outputs (diamond)', function()
    local x = Variable(T.array({ 2 }, 'float64'))
    local h = x * 3                 -- used by two branches of different depth
    local a = F.exp(h * 0.1) * 2
    local b = h * h
    local y = a + b                 -- dy/dh = 0.2 exp(0.1 h) + 2h
    local order = {}
    local Rec = chainer.FunctionHook:extend('Rec')
    function Rec:backward_preprocess(f) order[#order + 1] = f end
    local hc = h.creator
    Rec():scope(function() y:backward() end)
    local hv = 6
    local expect = 3 * (0.2 * math.exp(0.1 * hv) + 2 * hv)
    assert.is_true(math.abs(vals(x.grad)[1] - expect) < 1e-10)
    -- h's creator runs last and once, after both branches
    assert.are.equal(hc, order[#order])
    assert.are.equal(6, #order)     -- +, *2, exp, *0.1, h*h, x*3
  end)

  it('retain_grad off frees intermediate gradients; leaves keep theirs', function()
    local x = Variable(T.array({ 1, 2 }))
    local h = x * 2
    local y = F.sum(h * h)
    y:backward()
    assert.is_nil(h.grad)
    assert.is_nil(h.node._grad or nil)
    assert.are.same({ 8, 16 }, vals(x.grad))
    local x2 = Variable(T.array({ 1, 2 }))
    local h2 = x2 * 2
    F.sum(h2 * h2):backward({ retain_grad = true })
    assert.are.same({ 4, 8 }, vals(h2.grad))
  end)

  it('accumulates leaf gradients across two backward calls', function()
    local x = Variable(T.array({ 1, 2 }))
    F.sum(x * 3):backward()
    F.sum(x * x):backward()
    assert.are.same({ 5, 7 }, vals(x.grad))  -- 3 + 2x
    x:cleargrad()
    F.sum(x * 3):backward()
    assert.are.same({ 3, 3 }, vals(x.grad))
  end)

  it('never hands the same gradient tensor to two variables', function()
    local a, b = Variable(T.array({ 1 })), Variable(T.array({ 2 }))
    local y = a + b
    y:backward()
    assert.are.same({ 1 }, vals(a.grad))
    assert.is_false(a.grad == b.grad)
    assert.is_false(a.grad == y.grad)
    a.grad:fill_(5)
    assert.are.same({ 1 }, vals(b.grad))
    assert.are.same({ 1 }, vals(y.grad))
  end)

  it('a 10,000-node-deep chain backpropagates without stack overflow', function()
    local x = Variable(T.array({ 1, 2 }, 'float64'))
    local h = x
    for _ = 1, 10000 do h = h * 1.0001 end
    assert.are.equal(10000, h.rank)
    F.sum(h):backward()
    local e = 1.0001 ^ 10000
    local g = vals(x.grad)
    assert.is_true(math.abs(g[1] - e) < 1e-9 * e and math.abs(g[2] - e) < 1e-9 * e)
    h:unchain_backward()          -- iterative as well
    assert.is_nil(h.creator)
  end)

  it('an unrolled RNN of 2,000 steps (matmul + tanh-like ops) backpropagates', function()
    local W = Variable(T.full({ 3, 3 }, 0.1))
    local h = Variable(T.ones({ 1, 3 }), { requires_grad = false })
    local loss = 0
    for _ = 1, 2000 do
      h = F.exp(F.matmul(h, W) * -1)     -- stays bounded in (0, 1)
      loss = loss + F.sum(h)
    end
    loss:backward()
    assert.are.same({ 3, 3 }, W.grad.shape)
    for _, v in ipairs(vals(W.grad)) do assert.is_true(v == v) end
  end)

  it('no_backprop_mode creates no graph', function()
    local x = Variable(T.array({ 1, 2 }))
    local y = chainer.no_backprop_mode(function() return F.exp(x * 2) + 1 end)
    assert.is_nil(y.creator)
    assert.falsy(rawget(x, '_node'))
    y.grad = T.ones({ 2 })
    y:backward()                              -- nothing to do
    assert.is_nil(x.grad)
    assert.is_true(chainer.config.enable_backprop)
    -- force_backprop_mode inside no_backprop_mode records again
    local z = chainer.no_backprop_mode(function()
      return chainer.force_backprop_mode(function() return x * 2 end)
    end)
    assert.is_not_nil(z.creator)
  end)

  it('a frozen feature extractor stops backprop at its output', function()
    local x = Variable(T.array({ 1, 2 }))
    local w = Variable(T.array({ 3, 4 }))
    local feat = chainer.no_backprop_mode(function() return x * 2 end)
    F.sum(feat * w):backward()
    assert.is_nil(x.grad)
    assert.are.same({ 2, 4 }, vals(w.grad))
  end)

  it('memory returns to its baseline after a forward/backward loop', function()
    collectgarbage('collect')
    collectgarbage('collect')
    local base = tonumber(T.C.ch_live_bytes(-1))
    do
      local W = Variable(T.full({ 64, 64 }, 0.01))
      for _ = 1, 20 do
        local x = Variable(T.ones({ 8, 64 }))
        local h = x
        for _ = 1, 5 do h = F.exp(F.matmul(h, W) * -1) end
        F.sum(h):backward({ retain_grad = true })
        W:cleargrad()
      end
    end
    collectgarbage('collect')
    collectgarbage('collect')
    assert.are.equal(base, tonumber(T.C.ch_live_bytes(-1)))
  end)
end)

describe('chainer.grad and chainer.backward', function()
  it('grad returns gradients without touching .grad', function()
    local x = Variable(T.array({ 1, 2 }))
    local w = Variable(T.array({ 3, 4 }))
    local y = F.sum(x * w)
    local g = chainer.grad({ y }, { x })
    assert.are.same({ 3, 4 }, vals(g[1]))
    assert.are.equal(1, g.n)
    assert.is_nil(x.grad)
    assert.is_nil(w.grad)
    local g2 = chainer.grad(y, { w, x }, { set_grad = true })
    assert.are.same({ 1, 2 }, vals(g2[1]))
    assert.are.same({ 1, 2 }, vals(w.grad))
  end)

  it('grad with respect to an intermediate variable', function()
    local x = Variable(T.array({ 1, 2 }))
    local h = x * 3
    local y = F.sum(h * h)
    local g = chainer.grad({ y }, { h, x })
    assert.are.same({ 6, 12 }, vals(g[1]))    -- 2h
    assert.are.same({ 18, 36 }, vals(g[2]))   -- 18x
  end)

  it('grad gives nil for an input that does not influence the output', function()
    local x, z = Variable(T.array({ 1 })), Variable(T.array({ 2 }))
    local g = chainer.grad({ x * 2 }, { x, z })
    assert.are.same({ 2 }, vals(g[1]))
    assert.is_nil(g[2])
  end)

  it('grad with grad_outputs, grad_inputs and double backprop', function()
    local x = Variable(T.array({ 1, 2 }, 'float64'))
    local y = x ^ 3
    local gx = chainer.grad({ y }, { x }, { grad_outputs = { T.ones({ 2 }, 'float64') }, enable_double_backprop = true })[1]
    assert.are.same({ 3, 12 }, vals(gx))
    local ggx = chainer.grad({ gx }, { x }, { grad_outputs = { T.ones({ 2 }, 'float64') } })[1]
    assert.are.same({ 6, 12 }, vals(ggx))
    local gi = chainer.grad({ y }, { x }, { grad_outputs = { T.ones({ 2 }, 'float64') },
      grad_inputs = { T.array({ 10, 10 }, 'float64') } })[1]
    assert.are.same({ 13, 22 }, vals(gi))
  end)

  it('backward from several outputs at once', function()
    local x = Variable(T.array({ 1, 2 }))
    local a, b = x * 2, x * x
    chainer.backward({ a, b }, { T.ones({ 2 }), T.array({ 1, 1 }) })
    assert.are.same({ 4, 6 }, vals(x.grad))
    local err = err_of(chainer.backward, { x * 2 })
    assert.truthy(err:find('backward: the output has shape (2,)', 1, true))
  end)

  it('a traversal that fails mid-way, or runs inside another, leaves later ones intact', function()
    -- (each traversal keeps its heap and scratch tables to itself)
    local Fail = chainer.FunctionNode:extend('FailsInBackward')
    function Fail:forward(xs) return { xs[1] * 2 } end
    function Fail:backward() error('boom') end
    local z = Variable(T.array({ 2 }, 'float64'))
    local zzz = z * z * z
    local Nested = chainer.FunctionNode:extend('GradInsideBackward')
    function Nested:forward(xs) return { xs[1] * 3 } end
    function Nested:backward(idx, gys)
      local gz = chainer.grad({ zzz }, { z })[1]   -- 3 z^2 = 12
      return { gys[1] * 3 * gz / 12 }
    end
    local a = Variable(T.array({ 1, 2 }, 'float64'))
    local b = Variable(T.array({ 3, 4 }, 'float64'))
    -- the failure strikes after the heap and the scratch tables were filled
    local y = Fail():apply({ a * b })[1] + a * b
    assert.truthy(err_of(function() F.sum(y):backward() end):find('boom', 1, true))
    a:cleargrad() b:cleargrad()
    for _ = 1, 3 do
      local h = Nested():apply({ a * b })[1] + a
      F.sum(h * b):backward()
    end
    -- d/da sum((3ab + a) b) = 3b^2 + b, d/db = 6ab + a; three calls
    assert.are.same({ 3 * 30, 3 * 52 }, vals(a.grad))
    assert.are.same({ 3 * 19, 3 * 50 }, vals(b.grad))
  end)

  it('gradients are checked against the input (node named in the error)', function()
    local Bad = chainer.FunctionNode:extend('BadShape')
    function Bad:forward(xs) return { xs[1] * 2 } end
    function Bad:backward(idx, gys) return { Variable(T.ones({ 3 })) } end
    local x = Variable(T.ones({ 2 }))
    local y = Bad():apply({ x })[1]
    y.grad = T.ones({ 2 })
    local e = err_of(function() y:backward() end)
    assert.truthy(e:find('BadShape (backward): the gradient of input 1 has shape (3,) but the input has shape (2,)', 1, true))
    local BadT = chainer.FunctionNode:extend('BadDtype')
    function BadT:forward(xs) return { xs[1] * 2 } end
    function BadT:backward(idx, gys) return { Variable(T.ones({ 2 }, 'float64')) } end
    y = BadT():apply({ x })[1]
    y.grad = T.ones({ 2 })
    e = err_of(function() y:backward() end)
    assert.truthy(e:find('BadDtype (backward): the gradient of input 1 has dtype float64 but the input has dtype float32', 1, true))
    assert.is_true(chainer.config.enable_backprop)   -- restored after the error
  end)
end)
