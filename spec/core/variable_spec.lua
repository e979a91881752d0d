-- Specs for chainer.Variable: the tutorial numbers (chainer-api-v2 §2.2),
-- properties, operators with every operand kind, grad handling and errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local Variable = chainer.Variable

local helpers = require 'helpers'
local err_of, vals = helpers.err_of, helpers.vals

describe('Variable tutorial (exact doctests)', function()
  it('y = x^2 - 2x + 1 at x = 5 gives 16 and x.grad = 8', function()
    local x = Variable(T.array({ 5 }))
    local y = x ^ 2 - 2 * x + 1
    assert.are.same({ 16 }, vals(y))
    y:backward()
    assert.are.same({ 8 }, vals(x.grad))
    assert.are.same({ 1 }, vals(y.grad))         -- the seed stays on y
  end)

  it('retain_grad keeps z.grad = -1 for z = 2x', function()
    local x = Variable(T.array({ 5 }))
    local z = 2 * x
    local y = x ^ 2 - z + 1
    y:backward({ retain_grad = true })
    assert.are.same({ -1 }, vals(z.grad))
    assert.are.same({ 8 }, vals(x.grad))
  end)

  it('a multi-element output takes its seed from y.grad', function()
    local x = Variable(T.array({ { 1, 2, 3 }, { 4, 5, 6 } }))
    local y = x ^ 2 - 2 * x + 1
    y.grad = T.ones({ 2, 3 })
    y:backward()
    assert.are.same({ 0, 2, 4, 6, 8, 10 }, vals(x.grad))
  end)

  it('double backprop: 3x^2 then 6x', function()
    local x = Variable(T.array({ { 0, 2, 3 }, { 4, 5, 6 } }))
    local y = x ^ 3
    y.grad = T.ones({ 2, 3 })
    y:backward({ enable_double_backprop = true })
    assert.are.same({ 0, 12, 27, 48, 75, 108 }, vals(x.grad_var))
    assert.is_true(x.grad_var.array == x.grad)
    local gx = x.grad_var
    x:cleargrad()
    gx.grad = T.ones({ 2, 3 })
    gx:backward()
    assert.are.same({ 0, 12, 18, 24, 30, 36 }, vals(x.grad))
  end)
end)

describe('Variable properties', function()
  it('array/data, shape, ndim, size, dtype, device, label, name', function()
    local t = T.array({ { 1, 2, 3 }, { 4, 5, 6 } })
    local x = Variable(t, { name = 'x' })
    assert.is_true(x.array == t)
    assert.is_true(x.data == t)
    assert.are.same({ 2, 3 }, x.shape)
    assert.are.equal(2, x.ndim)
    assert.are.equal(6, x.size)
    assert.are.equal('float32', x.dtype)
    assert.are.equal('cpu', x.device)
    assert.are.equal('(2, 3), float32', x.label)
    assert.are.equal('x', x.name)
    assert.are.equal(2, x:len())
    assert.are.equal('float32', Variable(T.array(1.5)).label)   -- 0-d: dtype only
    assert.are.equal('(3), float64', Variable(T.zeros({ 3 }, 'float64')).label)
    assert.are.equal('x', Variable(t, 'x').name)
  end)

  it('accepts nested Lua tables and rejects numbers', function()
    assert.are.same({ 1, 2 }, vals(Variable({ 1, 2 })))
    assert.truthy(err_of(Variable, 5):find('Variable: data must be a tensor', 1, true))
  end)

  it('requires_grad defaults to true and can be turned off', function()
    assert.is_true(Variable(T.zeros({ 2 })).requires_grad)
    local c = Variable(T.ones({ 2 }), { requires_grad = false })
    assert.is_false(c.requires_grad)
    local x = Variable(T.ones({ 2 }))
    local y = F.sum(x * c)
    y:backward()
    assert.is_nil(c.grad)
    assert.are.same({ 1, 1 }, vals(x.grad))
  end)

  it('creator and creator_node name the function; rank grows along the graph', function()
    local x = Variable(T.ones({ 2 }))
    assert.is_nil(x.creator)
    local y = F.exp(x)
    assert.are.equal('Exp', y.creator:label())
    assert.is_true(y.creator_node == y.creator)
    assert.are.equal(0, x.rank)
    assert.are.equal(1, y.rank)
    assert.are.equal(2, F.exp(y).rank)
    assert.are.equal(x.node, y.creator.inputs[1])
  end)

  it('item, tostring and debug_print', function()
    local x = Variable(T.array({ 2.5 }), 'w')
    assert.are.equal(2.5, x:item())
    assert.truthy(tostring(x):find('^variable w%(%[2%.5%]%)'))
    local s = x:debug_print()
    assert.truthy(s:find('variable w', 1, true))
    assert.truthy(s:find('- shape: (1,)', 1, true))
    assert.truthy(s:find('- dtype: float32', 1, true))
    assert.truthy(s:find('- grad: None', 1, true))
    assert.truthy(err_of(function() Variable(T.ones({ 2 })):item() end):find('item', 1, true))
  end)
  it('v[i] is an error that points to F.get_item, never nil (as t[i] for tensors)', function()
    local x = Variable(T.array({ 1, 2, 3 }, 'float64'))
    local msg = err_of(function() return x[1] end)
    assert.truthy(msg:find('Variable: v[1] is not supported', 1, true), msg)
    assert.truthy(msg:find('F.get_item', 1, true), msg)
    assert.truthy(err_of(function() return x[0] end):find('v[0] is not supported', 1, true))
    local p = chainer.Parameter(T.zeros({ 2 }, 'float64'))
    assert.truthy(err_of(function() return p[1] end):find('F.get_item', 1, true))
    -- the supported ways
    assert.are.equal(2, F.get_item(x, 1).array:item())
    assert.are.equal(2, x.array:get(1))
    -- unknown string keys still read as nil (fields are optional in Lua)
    assert.is_nil(x.no_such_field)
    -- lists of Variables are plain tables: their indexing is unchanged
    assert.are.equal(x, ({ x })[1])
  end)
end)

describe('Variable operators', function()
  local a = T.array({ 1, 2, 4 })
  local b = T.array({ 2, 4, 8 })

  it('work with Variables, tensors and numbers on either side', function()
    local x = Variable(a)
    assert.are.same({ 3, 6, 12 }, vals(x + b))
    assert.are.same({ 3, 6, 12 }, vals(b + x))
    assert.are.same({ 2, 3, 5 }, vals(x + 1))
    assert.are.same({ 2, 3, 5 }, vals(1 + x))
    assert.are.same({ -1, -2, -4 }, vals(x - b))
    assert.are.same({ 1, 2, 4 }, vals(b - x))
    assert.are.same({ 0, -1, -3 }, vals(1 - x))
    assert.are.same({ 2, 8, 32 }, vals(x * b))
    assert.are.same({ 2, 8, 32 }, vals(b * x))
    assert.are.same({ 0.5, 0.5, 0.5 }, vals(x / b))
    assert.are.same({ 2, 2, 2 }, vals(b / x))
    assert.are.same({ 4, 2, 1 }, vals(4 / x))
    assert.are.same({ 1, 4, 16 }, vals(x ^ 2))
    assert.are.same({ 2, 4, 16 }, vals(2 ^ x))
    assert.are.same({ 1, 4, 65536 }, vals(x ^ Variable(T.array({ 1, 2, 8 }))))
    assert.are.same({ -1, -2, -4 }, vals(-x))
    assert.are.same({ 1, 2, 1 }, vals(x % 3))
    assert.are.same({ 0, 1, 3 }, vals(7 % x))
    assert.is_true((x + b)._is_variable and (b + x)._is_variable)
  end)

  it('have the right gradients for every operand kind', function()
    local x = Variable(T.array({ 1, 2, 4 }))
    local y = Variable(T.array({ 2, 4, 8 }))
    local loss = F.sum(x * y + x / y - y ^ 2 + 2 / x - (3 - x) + 2 ^ x + x % 3)
    loss:backward()
    -- d/dx: y + 1/y - 2/x^2 + 1 + 2^x ln2 + 1
    local ln2 = math.log(2)
    local xs, ys = { 1, 2, 4 }, { 2, 4, 8 }
    local gx, gy = vals(x.grad), vals(y.grad)
    for i = 1, 3 do
      local ex = ys[i] + 1 / ys[i] - 2 / xs[i] ^ 2 + 1 + 2 ^ xs[i] * ln2 + 1
      local ey = xs[i] - xs[i] / ys[i] ^ 2 - 2 * ys[i]
      assert.is_true(math.abs(gx[i] - ex) < 1e-4 * math.max(1, math.abs(ex)), 'gx ' .. i)
      assert.is_true(math.abs(gy[i] - ey) < 1e-4 * math.max(1, math.abs(ey)), 'gy ' .. i)
    end
  end)

  it('broadcast and sum gradients back to the input shapes', function()
    local x = Variable(T.array({ { 1, 2, 3 }, { 4, 5, 6 } }))
    local b = Variable(T.array({ 10, 20, 30 }))
    local y = F.sum(x * b + b)
    y:backward()
    assert.are.same({ 10, 20, 30, 10, 20, 30 }, vals(x.grad))
    assert.are.same({ 7, 9, 11 }, vals(b.grad))          -- (1+4)+2, (2+5)+2, (3+6)+2
    assert.are.same({ 3 }, b.grad.shape)
  end)

  it('keep float32 with weak Lua scalars and refuse mixed dtypes', function()
    local x = Variable(T.array({ 1, 2 }))
    assert.are.equal('float32', (x * 2.5).dtype)
    local d = Variable(T.array({ 1, 2 }, 'float64'))
    assert.truthy(err_of(function() return x + d end):find('different dtypes', 1, true))
    assert.truthy(err_of(function() return x + 'a' end):find('add: operand 2', 1, true))
  end)

  it('unary minus, abs and matmul methods', function()
    local x = Variable(T.array({ { 1, -2 }, { 3, -4 } }))
    assert.are.same({ 1, 2, 3, 4 }, vals(x:abs()))
    local w = Variable(T.array({ { 1 }, { 1 } }))
    local y = x:matmul(w)
    assert.are.same({ -1, -1 }, vals(y))
    F.sum(y):backward()
    assert.are.same({ 1, 1, 1, 1 }, vals(x.grad))
    assert.are.same({ 4, -6 }, vals(w.grad))
  end)

  it('comparisons are methods giving bool tensors', function()
    local x = Variable(T.array({ 1, 2, 3 }))
    assert.are.same({ false, true, false }, vals(x:eq(2)))
    assert.are.same({ true, false, false }, vals(x:lt(2)))
    assert.are.same({ false, true, true }, vals(x:ge(T.array({ 2, 2, 2 }))))
    assert.are.same({ true, true, false }, vals(x:le(Variable(T.array({ 1, 2, 2 })))))
    assert.are.same({ false, false, true }, vals(x:gt(2)))
    assert.are.same({ true, false, true }, vals(x:ne(2)))
  end)
end)

describe('Variable reshape and transpose', function()
  it('reshape/transpose/T are differentiable views', function()
    local x = Variable(T.arange(0, 6, 1, 'float32'))
    local y = x:reshape({ 2, 3 })
    assert.are.same({ 2, 3 }, y.shape)
    local z = y.T
    assert.are.same({ 3, 2 }, z.shape)
    assert.are.same({ 0, 3, 1, 4, 2, 5 }, vals(z))
    local w = Variable(T.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } }))
    F.sum(z * w):backward()
    assert.are.same({ 1, 3, 5, 2, 4, 6 }, vals(x.grad))
    assert.are.same({ 3, 2, 1 }, x:reshape(2, 3, 1):transpose({ 1, 0, 2 }).shape)
  end)
end)

describe('Variable gradient handling', function()
  it('grad setter checks shape, dtype and device', function()
    local x = Variable(T.zeros({ 2, 3 }))
    assert.truthy(err_of(function() x.grad = T.zeros({ 3, 2 }) end):find('shape (3, 2) does not match the data shape (2, 3)', 1, true))
    assert.truthy(err_of(function() x.grad = T.zeros({ 2, 3 }, 'float64') end):find('dtype float64', 1, true))
    assert.truthy(err_of(function() x.grad = 3 end):find('Variable.grad: expected a tensor', 1, true))
    x.grad = T.ones({ 2, 3 })
    assert.are.same({ 1, 1, 1, 1, 1, 1 }, vals(x.grad))
    assert.are.same({ 1, 1, 1, 1, 1, 1 }, vals(x.grad_var))
    x.grad = nil
    assert.is_nil(x.grad)
    assert.is_nil(x.grad_var)
  end)

  it('cleargrad, zerograd and addgrad', function()
    local x = Variable(T.array({ 1, 2 }))
    x:zerograd()
    assert.are.same({ 0, 0 }, vals(x.grad))
    local y = Variable(T.array({ 5, 5 }))
    y.grad = T.array({ 3, 4 })
    x:addgrad(y)
    assert.are.same({ 3, 4 }, vals(x.grad))
    x:addgrad(y)
    assert.are.same({ 6, 8 }, vals(x.grad))
    assert.are.same({ 3, 4 }, vals(y.grad))           -- the source is untouched
    x:cleargrad()
    assert.is_nil(x.grad)
    local z = Variable(T.array({ 0, 0 }))
    z:addgrad(y)                                      -- no grad yet: a copy
    assert.are.same({ 3, 4 }, vals(z.grad))
    assert.is_false(z.grad == y.grad)
  end)

  it('copydata copies values in place', function()
    local x = Variable(T.zeros({ 2 }))
    local keep = x.array
    x:copydata(Variable(T.array({ 7, 8 })))
    assert.are.same({ 7, 8 }, vals(keep))
  end)

  it('to_cpu/to_device keep data and grad on the CPU', function()
    local x = Variable(T.array({ 1, 2 }))
    x.grad = T.array({ 3, 4 })
    assert.are.equal(x, x:to_cpu())
    assert.are.equal('cpu', x.device)
    assert.are.same({ 3, 4 }, vals(x:to_device('cpu').grad))
  end)

  it('a multi-element output without a grad is a clear error', function()
    local x = Variable(T.ones({ 3 }))
    local y = x * 2
    local e = err_of(function() y:backward() end)
    assert.truthy(e:find('Variable.backward: the output has shape (3,)', 1, true))
    assert.truthy(e:find('set y.grad', 1, true))
  end)

  it('loss_scale scales the initial gradient', function()
    local x = Variable(T.array({ 2 }))
    local y = x * 3
    y:backward({ loss_scale = 8 })
    assert.are.same({ 24 }, vals(x.grad))
    assert.are.same({ 1 }, vals(y.grad))
  end)
end)

describe('Variable.unchain and unchain_backward', function()
  it('unchain makes the variable a root', function()
    local x = Variable(T.array({ 1 }))
    local h = x * 2
    local y = h * 3
    h:unchain()
    assert.is_nil(h.creator)
    y:backward()
    assert.is_nil(x.grad)
  end)

  it('unchain_backward in the middle of a graph stops backprop there', function()
    local x = Variable(T.array({ 1, 2 }))
    local h = F.exp(x) * 2
    local y = F.sum(h * h)
    local h_creator = h.creator
    h:unchain_backward()
    assert.is_nil(h.creator)
    assert.falsy(h_creator.inputs)
    y:backward()
    assert.is_nil(x.grad)
    assert.is_not_nil(y.creator)
    -- the part after h still works: dy/dh = 2h
    local x2 = Variable(T.array({ 3 }))
    local h2 = x2 * 1
    local y2 = h2 * h2
    h2:unchain_backward()
    y2:backward({ retain_grad = true })
    assert.are.same({ 6 }, vals(h2.grad))
    assert.is_nil(x2.grad)
  end)
end)
