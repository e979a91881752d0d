-- Specs for the tensor-level path of backprop (backward_tensors of the
-- arithmetic nodes, gradients travelling as bare tensors, in-place
-- accumulation into gradients a node owns).  Every case is checked against
-- hand-computed values and against the generic path (a function hook, even
-- one that does nothing, turns the fast path off).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local Variable = chainer.Variable

local vals = require('helpers').vals

local function close(a, b, tol)
  assert.are.equal(#b, #a)
  for i = 1, #b do
    assert(math.abs(a[i] - b[i]) <= (tol or 1e-12) * math.max(1, math.abs(b[i])),
      string.format('entry %d: %.17g vs %.17g', i, a[i], b[i]))
  end
end

-- Runs body() once plainly and once with a no-op hook (generic path).
local function both_paths(body)
  local fast = body()
  local Hook = chainer.FunctionHook:extend('NoopHook')
  local slow = Hook():scope(body)
  return fast, slow
end

describe('backprop fast path', function()
  it('h = h * a + b, 50 steps: gradients of x, a, b match the closed form and the generic path', function()
    local function run()
      local a = Variable(T.array({ 1.01, 0.99, 1.0 }, 'float64'))
      local b = Variable(T.array({ 0.5, -0.25, 2.0 }, 'float64'))
      local x = Variable(T.array({ 0.5, 1.5, -1.0 }, 'float64'))
      local h = x
      for _ = 1, 50 do h = h * a + b end
      F.sum(h):backward()
      return { vals(x.grad), vals(a.grad), vals(b.grad) }
    end
    local fast, slow = both_paths(run)
    -- closed form: h_n = a^n x + b (a^n - 1)/(a - 1); dh/dx = a^n,
    -- dh/db = sum_{k<n} a^k, dh/da = sum_k a^(n-1-k) * h_k
    local av, bv, xv = { 1.01, 0.99, 1.0 }, { 0.5, -0.25, 2.0 }, { 0.5, 1.5, -1.0 }
    local gx, ga, gb = {}, {}, {}
    for i = 1, 3 do
      local hs, h = {}, xv[i]
      for k = 0, 49 do hs[k] = h h = h * av[i] + bv[i] end
      gx[i] = av[i] ^ 50
      local sb, sa = 0, 0
      for k = 0, 49 do
        sb = sb + av[i] ^ k
        sa = sa + av[i] ^ (49 - k) * hs[k]
      end
      gb[i], ga[i] = sb, sa
    end
    close(fast[1], gx, 1e-12) close(fast[2], ga, 1e-12) close(fast[3], gb, 1e-12)
    for k = 1, 3 do assert.are.same(slow[k], fast[k]) end
  end)

  it('a reused leaf accumulates in place without touching other gradients', function()
    local x = Variable(T.array({ 1, 2 }, 'float64'))
    local w = Variable(T.array({ 3, 4 }, 'float64'))
    local y = x * w + x * w + x * 2 + w - x
    F.sum(y):backward()
    close(vals(x.grad), { 2 * 3 + 2 - 1, 2 * 4 + 2 - 1 })
    close(vals(w.grad), { 2 * 1 + 1, 2 * 2 + 1 })
    assert.is_false(x.grad == w.grad)
    -- a second backward adds to the existing gradients (new tensors)
    local old = x.grad
    F.sum(x * 10):backward()
    close(vals(x.grad), { 17, 19 })
    close(vals(old), { 7, 9 })
  end)

  it('no two leaves share a gradient tensor, nor a leaf and the seed', function()
    local a, b = Variable(T.array({ 1, 2 })), Variable(T.array({ 2, 3 }))
    local y = F.sum(a + b - 0 + 0)
    y:backward()
    assert.is_false(a.grad == b.grad)
    a.grad:fill_(7)
    assert.are.same({ 1, 1 }, vals(b.grad))
    local c = Variable(T.array({ 4 }))
    local z = c + 1
    z.grad = T.array({ 1 })
    z:backward()
    assert.is_false(c.grad == z.grad)
    c.grad:fill_(9)
    assert.are.same({ 1 }, vals(z.grad))
  end)

  it('sub, neg, div, constants and broadcasting match the generic path', function()
    local function run()
      local a = Variable(T.array({ { 1, 2, 3 }, { 4, 5, 6 } }, 'float64'))
      local b = Variable(T.array({ 2, 4, 8 }, 'float64'))
      local y = (a - b) / b * 3 - (-a) / 2 + 1 - b * b / a + (5 - a)
      F.sum(y * y):backward()
      return { vals(a.grad), vals(b.grad) }
    end
    local fast, slow = both_paths(run)
    for k = 1, 2 do close(fast[k], slow[k], 1e-14) end
    -- a finite-difference check of one entry of b's gradient
    local function f(bv)
      local a = T.array({ { 1, 2, 3 }, { 4, 5, 6 } }, 'float64')
      local b = T.array(bv, 'float64')
      local y = (a - b) / b * 3 - (-a) / 2 + 1 - b * b / a + (5 - a)
      return (y * y):sum():item()
    end
    local e = 1e-6
    local fd = (f({ 2, 4 + e, 8 }) - f({ 2, 4 - e, 8 })) / (2 * e)
    assert(math.abs(fd - fast[2][2]) < 1e-4 * math.abs(fd), string.format('%g vs %g', fd, fast[2][2]))
  end)

  it('gradients handed on as owned tensors (overwritten in place) never reach another node', function()
    -- x + y passes one tensor to both inputs; Mul, Neg, Div and constants
    -- overwrite a gradient they own.  Random graphs over a few leaves,
    -- with operands reused and broadcast, against the generic path.
    local ops = { 'add', 'sub', 'mul', 'div', 'neg', 'mulc', 'addc', 'csub' }
    local function run(seed)
      local rng = seed
      local function rnd(n) rng = (rng * 1103515245 + 12345) % 2147483648 return rng % n + 1 end
      local leaves = {
        Variable(T.array({ 0.5, 1.5, -1.0 }, 'float64')),
        Variable(T.array({ 1.25, -0.75, 2.0 }, 'float64')),
        Variable(T.array({ { 1.1, 0.9, 1.3 }, { 0.8, 1.2, 1.05 } }, 'float64')),
        Variable(T.array({ { 0.7 }, { 1.4 } }, 'float64')),
      }
      local pool = { leaves[1], leaves[2], leaves[3], leaves[4] }
      for _ = 1, 24 do
        local op = ops[rnd(#ops)]
        local a, b = pool[rnd(#pool)], pool[rnd(#pool)]
        local y
        if op == 'add' then y = a + b
        elseif op == 'sub' then y = a - b
        elseif op == 'mul' then y = a * b
        elseif op == 'div' then y = a / (b * b + 1)
        elseif op == 'neg' then y = -a
        elseif op == 'mulc' then y = a * 0.5
        elseif op == 'addc' then y = a + 2
        else y = 3 - a end
        pool[#pool + 1] = y
      end
      local loss = F.sum(pool[#pool]) + F.sum(pool[#pool - 1] * pool[#pool - 2])
      loss:backward()
      local out = {}
      for k = 1, #leaves do
        local g = leaves[k].grad
        out[k] = g and vals(g) or false
      end
      return out
    end
    for seed = 1, 40 do
      local fast, slow = both_paths(function() return run(seed) end)
      for k = 1, #slow do
        if slow[k] then close(fast[k], slow[k], 1e-12) else assert.is_false(fast[k]) end
      end
    end
  end)

  it('a gradient passed on to both inputs of x + y is not shared with an overwriting consumer', function()
    local function run()
      local x = Variable(T.array({ 1, 2, 3 }, 'float64'))
      local b = Variable(T.array({ 0.5, 0.5, 0.5 }, 'float64'))
      local c = Variable(T.array({ 2, 3, 4 }, 'float64'))
      -- b gets gy of (x * c + b) first as an alias, then sums
      local h = x * c + b
      local y = (h * c + b) * c + b * 2
      F.sum(y * h):backward()
      return { vals(x.grad), vals(b.grad), vals(c.grad) }
    end
    local fast, slow = both_paths(run)
    for k = 1, 3 do assert.are.same(slow[k], fast[k]) end
  end)

  it('chainer.grad of an intermediate variable keeps its gradient intact', function()
    local x = Variable(T.array({ 1, 2 }, 'float64'))
    local h = x * 3
    local y = h * x + h * 2
    local g = chainer.grad({ F.sum(y) }, { h, x })
    close(vals(g[1]), { 1 + 2, 2 + 2 })          -- x + 2
    close(vals(g[2]), { 3 + 3 * 3, 6 + 3 * 4 })  -- h + 3 (x + 2)
  end)

  it('retain_grad and double backprop still give Variables with graphs', function()
    local x = Variable(T.array({ 2 }, 'float64'))
    local h = x * x
    local y = h * x
    y:backward({ retain_grad = true })
    close(vals(h.grad), { 2 })
    close(vals(x.grad), { 12 })
    x:cleargrad()
    local z = x * x * x
    z:backward({ enable_double_backprop = true })
    local gx = x.grad_var
    x:cleargrad()
    gx:backward()
    close(vals(x.grad), { 12 })   -- d(3x^2)/dx
  end)

  describe('backward_tensors (the one tensor-level protocol)', function()
    -- Scale: y = w * x (w a 1-element tensor), with both protocols; every
    -- call of backward_tensors is counted, and the one on tensors adds w's
    -- gradient into the sum backprop hands over when there is one.
    local calls
    local Scale = chainer.FunctionNode:extend('Scale')
    function Scale:forward(inputs)
      self:retain_inputs({ 1, 2 })
      return { inputs[1] * inputs[2] }
    end
    function Scale:backward(idx, gys)
      calls.variables = calls.variables + 1
      local xs = self:get_retained_inputs()
      return { gys[1] * xs[2], F.sum(gys[1] * xs[1]):reshape(1) }
    end
    function Scale:backward_tensors(idx, gys, gxs, own)
      calls.tensors = calls.tensors + 1
      assert.is_true(T.is_tensor(gys[1]))
      local x, w = self.inputs[1].data, self.inputs[2].data
      for k = 1, #idx do
        local i = idx[k]
        if i == 1 then gxs[1] = gys[1] * w end
        if i == 2 then
          local gw = T.sum(gys[1] * x):reshape(1)
          if gxs[2] then
            calls.accumulated = calls.accumulated + 1
            gxs[2]:add_(gw)             -- into the sum, left in gxs[2]
          else
            gxs[2] = gw
          end
        end
      end
    end
    local function run(opts)
      calls = { tensors = 0, variables = 0, accumulated = 0 }
      local x = Variable(T.array({ 1, 2, 3 }, 'float64'))
      local w = Variable(T.array({ 2 }, 'float64'))
      local h = x
      for _ = 1, 4 do h = Scale():apply({ h, w })[1] end
      F.sum(h):backward(opts)
      return vals(x.grad), vals(w.grad), calls
    end

    it('is used when nothing records or observes backward, and adds into the sums it is given', function()
      local gx, gw, c = run()
      close(gx, { 16, 16, 16 })
      close(gw, { 4 * 8 * 6 })   -- d(w^4 sum x)/dw = 4 w^3 sum x
      assert.are.same({ tensors = 4, variables = 0 }, { tensors = c.tensors, variables = c.variables })
      -- w's first gradient is a new tensor, so its node owns it; the
      -- three later calls get it to add into
      assert.are.equal(3, c.accumulated)
    end)

    it('is not used with double backprop, retain_grad or a function hook, with the same results', function()
      local gx0, gw0 = run()
      for _, case in ipairs({ { enable_double_backprop = true }, { retain_grad = true } }) do
        local gx, gw, c = run(case)
        assert.are.same({ 0, 4 }, { c.tensors, c.variables })
        close(gx, gx0) close(gw, gw0)
      end
      local Hook = chainer.FunctionHook:extend('NoopHook2')
      local gx, gw, c
      Hook():scope(function() gx, gw, c = run() end)
      assert.are.same({ 0, 4 }, { c.tensors, c.variables })
      close(gx, gx0) close(gw, gw0)
    end)

    it('is not used for a node with a local hook', function()
      calls = { tensors = 0, variables = 0, accumulated = 0 }
      local x = Variable(T.array({ 1, 2 }, 'float64'))
      local w = Variable(T.array({ 3 }, 'float64'))
      local f = Scale()
      f:add_hook(chainer.FunctionHook:extend('LocalNoop')())
      F.sum(f:apply({ x, w })[1]):backward()
      assert.are.same({ 0, 1 }, { calls.tensors, calls.variables })
      close(vals(x.grad), { 3, 3 })
    end)
  end)
end)
