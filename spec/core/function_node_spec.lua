-- Specs for FunctionNode, old-style Function, hooks, type checks and debug mode.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local Variable = chainer.Variable
local tc = require 'chainer.utils.type_check'
local gradient_check = chainer.gradient_check

local helpers = require 'helpers'
local err_of, vals = helpers.err_of, helpers.vals

-- the seed's MulAdd: w = x*y + z (new style, retains x and y)
local MulAdd = chainer.FunctionNode:extend('MulAdd')
function MulAdd:forward(inputs)
  self:retain_inputs({ 1, 2 })
  local x, y, z = inputs[1], inputs[2], inputs[3]
  return { x * y + z }
end
function MulAdd:backward(indexes, grad_outputs)
  local xs = self:get_retained_inputs()
  local x, y = xs[1], xs[2]
  local gw = grad_outputs[1]
  return { y * gw, x * gw, gw }
end
local function muladd(x, y, z) return MulAdd():apply({ x, y, z })[1] end

-- ExpAdd: z = exp(x) + exp(y)
local ExpAdd = chainer.FunctionNode:extend('ExpAdd')
function ExpAdd:forward(inputs)
  self:retain_inputs({ 1, 2 })
  return { T.exp(inputs[1]) + T.exp(inputs[2]) }
end
function ExpAdd:backward(indexes, gys)
  local xs = self:get_retained_inputs()
  local gz = gys[1]
  return { gz * F.exp(xs[1]), gz * F.exp(xs[2]) }
end

describe('FunctionNode', function()
  local x = T.array({ { 0.1, -0.5 }, { 0.7, 0.2 }, { -0.9, 0.4 } }, 'float64')
  local y = T.array({ { 0.3, 0.8 }, { -0.2, 0.6 }, { 0.5, -0.7 } }, 'float64')
  local z = T.array({ { 0.0, 0.1 }, { 0.2, 0.3 }, { 0.4, 0.5 } }, 'float64')
  local gw = T.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, 'float64')

  it('MulAdd forward and backward', function()
    local vx, vy, vz = Variable(x), Variable(y), Variable(z)
    local w = muladd(vx, vy, vz)
    assert.are.equal('MulAdd', w.creator:label())
    chainer.testing.assert_allclose(w, x * y + z)
    w.grad = gw
    w:backward()
    chainer.testing.assert_allclose(vx.grad, y * gw)
    chainer.testing.assert_allclose(vy.grad, x * gw)
    chainer.testing.assert_allclose(vz.grad, gw)
    gradient_check.check_backward(muladd, { x, y, z }, gw)
    gradient_check.check_double_backward(muladd, { x, y, z }, gw, { gw, gw, gw })
  end)

  it('ExpAdd passes the gradient checks, first and second order', function()
    local gz = T.array({ 1, -1, 2 }, 'float64'):reshape({ 3, 1 }) * T.ones({ 3, 2 }, 'float64')
    local f = function(a, b) return ExpAdd():apply({ a, b })[1] end
    gradient_check.check_backward(f, { x, y }, gz)
    gradient_check.check_double_backward(f, { x, y }, gz, { gz, gz })
  end)

  it('inputs, outputs, rank and tensors as inputs', function()
    local a = Variable(T.ones({ 2 }))
    local f = MulAdd()
    local w = f:apply({ a, T.ones({ 2 }), T.zeros({ 2 }) })[1]
    assert.are.equal(3, #f.inputs)
    assert.are.equal(1, #f.outputs)
    assert.are.equal(a.node, f.inputs[1])
    assert.is_false(f.inputs[2].requires_grad)
    assert.are.equal(0, f.rank)
    assert.are.equal(1, w.rank)
    F.sum(w):backward()
    assert.are.same({ 1, 1 }, vals(a.grad))
  end)

  it('may be applied only once', function()
    local f = MulAdd()
    local a = Variable(T.ones({ 1 }))
    f:apply({ a, a, a })
    assert.truthy(err_of(function() f:apply({ a, a, a }) end):find('MulAdd: this FunctionNode has already been applied', 1, true))
  end)

  it('reports bad inputs and bad forward results', function()
    assert.truthy(err_of(function() MulAdd():apply({ 1, 2, 3 }) end):find('MulAdd: input 1 must be a Variable or a tensor (got number)', 1, true))
    local Bad = chainer.FunctionNode:extend('Bad')
    function Bad:forward(xs) return xs[1] end
    assert.truthy(err_of(function() Bad():apply({ T.ones({ 1 }) }) end):find('Bad: forward must return a table of tensors', 1, true))
    local NoFwd = chainer.FunctionNode:extend('NoFwd')
    assert.truthy(err_of(function() NoFwd():apply({ T.ones({ 1 }) }) end):find('NoFwd: implement forward', 1, true))
  end)

  it('get_retained_outputs rebuilds a collected output Variable on the same node', function()
    local x1 = Variable(T.array({ 1, 2 }, 'float64'))
    local f = F.exp(x1).creator      -- the output Variable is dropped at once
    collectgarbage('collect')
    local ys = f:get_retained_outputs()
    assert.are.equal(f.outputs[1], ys[1].node)
    chainer.testing.assert_allclose(ys[1], { math.exp(1), math.exp(2) })
  end)

  it('forward_cpu is used when forward is not overridden', function()
    local Twice = chainer.FunctionNode:extend('Twice')
    function Twice:forward_cpu(xs) return { xs[1] * 2 } end
    function Twice:backward(idx, gys) return { gys[1] * 2 } end
    local a = Variable(T.array({ 1, 2 }))
    local w = Twice():apply({ a })[1]
    assert.are.same({ 2, 4 }, vals(w))
  end)
end)

describe('type checking', function()
  local Linear = chainer.FunctionNode:extend('Linear')
  function Linear:check_type_forward(in_types)
    tc.expect(in_types:size():eq(2))          -- before indexing, as in Chainer
    tc.argname(in_types, { 'x', 'W' })
    local x, W = in_types[1], in_types[2]
    tc.expect(x.ndim:eq(2), W.ndim:eq(2), x.dtype.kind:eq('f'), x.shape[1]:eq(W.shape[1]))
  end
  function Linear:forward(xs) return { T.matmul(xs[1], xs[2], { transb = true }) } end

  it('gives Chainer-style messages', function()
    local e = err_of(function() Linear():apply({ T.ones({ 2, 3 }), T.ones({ 5, 4 }) }) end)
    assert.are.equal('Invalid operation is performed in: Linear (Forward)\nExpect: x.shape[1] == W.shape[1]\nActual: 3 != 4', e)
    e = err_of(function() Linear():apply({ T.ones({ 3 }), T.ones({ 5, 4 }) }) end)
    assert.truthy(e:find('Expect: x.ndim == 2\nActual: 1 != 2', 1, true))
    e = err_of(function() Linear():apply({ T.ones({ 2, 4 }, 'int32'), T.ones({ 5, 4 }) }) end)
    assert.truthy(e:find("Expect: x.dtype.kind == f\nActual: i != f", 1, true))
    e = err_of(function() Linear():apply({ T.ones({ 2, 4 }) }) end)
    assert.truthy(e:find('Expect: in_types.size() == 2\nActual: 1 != 2', 1, true))
    assert.are.same({ 2, 5 }, Linear():apply({ T.ones({ 2, 4 }), T.ones({ 5, 4 }) })[1].shape)
  end)

  it('expressions: arithmetic, negative axes, named constants, other comparisons', function()
    local types = tc.get_types({ T.ones({ 2, 3 }), T.ones({ 6 }) }, 'in_types')
    local a, b = types[1], types[2]
    tc.expect((a.shape[0] * a.shape[1]):eq(b.shape[0]), a.shape[-1]:eq(3), b.size:ge(6))
    local e = err_of(tc.expect, (a.shape[0] + 1):lt(tc.Variable(2, 'limit')))
    assert.are.equal('Expect: in_types[1].shape[0] + 1 < limit\nActual: 3 >= 2', e)
    e = err_of(tc.expect, a.shape:eq({ 3, 2 }))
    assert.truthy(e:find('Actual: (2, 3) != (3, 2)', 1, true))
    assert.are.same({ 2, 3 }, a.shape:eval())
  end)

  it('is skipped when config.type_check is false', function()
    chainer.using_config('type_check', false, function()
      local ok = pcall(function() Linear():apply({ T.ones({ 2, 3 }), T.ones({ 5, 3 }) }) end)
      assert.is_true(ok)
      -- the wrong shapes then reach the kernel, which still reports them
      local e = err_of(function() Linear():apply({ T.ones({ 2, 3 }), T.ones({ 5, 4 }) }) end)
      assert.falsy(e:find('Invalid operation', 1, true))
    end)
  end)
end)

describe('debug mode', function()
  it('catches a NaN in forward, naming the function', function()
    local x = Variable(T.array({ -1, 1 }))
    chainer.using_config('debug', true, function()
      local e = err_of(function() return F.log(x) end)
      assert.truthy(e:find('NaN is detected on forward computation of Log', 1, true))
    end)
    assert.is_false(chainer.config.debug)
    F.log(x)      -- no check outside debug mode
  end)

  it('catches a NaN in backward, with the creation stack of the node', function()
    local NaNGrad = chainer.FunctionNode:extend('NaNGrad')
    function NaNGrad:forward(xs) return { xs[1] * 1 } end
    function NaNGrad:backward(idx, gys) return { Variable(T.full({ 2 }, 0 / 0)) } end
    chainer.using_config('debug', true, function()
      local x = Variable(T.array({ 1, 2 }))
      local y = F.sum(NaNGrad():apply({ x })[1])
      local e = err_of(function() y:backward() end)
      assert.truthy(e:find('NaN is detected on backward computation of NaNGrad', 1, true))
      assert.truthy(e:find('Stack trace of the function', 1, true))
      assert.truthy(e:find('function_node_spec.lua', 1, true))
    end)
  end)
end)

describe('FunctionNode members', function()
  -- Two outputs, 2x and 3x; retains the second.
  local Two = chainer.FunctionNode:extend('Two')
  function Two:forward(inputs)
    self:retain_outputs({ 2 })
    return { inputs[1] * 2, inputs[1] * 3 }
  end

  it('output_data gives the retained outputs by position, and refuses when none was retained', function()
    local node = Two()
    node:apply({ Variable(T.array({ 1, 2 })) })
    local od = node:output_data()
    assert.is_nil(od[1])
    assert.are.same({ 3, 6 }, od[2]:tolist())
    assert.truthy(err_of(function() return MulAdd():output_data() end)
      :find('MulAdd: output_data: retained output data is gone', 1, true))
    -- a node applied without recording a graph keeps nothing
    local plain = Two()
    plain:apply({ T.array({ 1, 2 }) })
    assert.truthy(err_of(function() return plain:output_data() end):find('retained output data is gone', 1, true))
  end)

  it('is_elementwise is false by default; when true, outputs of different shapes are refused', function()
    assert.is_false(Two().is_elementwise)
    local Bad = chainer.FunctionNode:extend('Bad')
    Bad.is_elementwise = true
    function Bad:forward(inputs) return { inputs[1], inputs[1]:reshape({ 1, 2 }) } end
    assert.truthy(err_of(function() return Bad():apply({ T.array({ 1, 2 }) }) end)
      :find('Bad: an elementwise function returned outputs with different shapes ((2,), (1, 2))', 1, true))
    local Good = chainer.FunctionNode:extend('Good')
    Good.is_elementwise = true
    function Good:forward(inputs) return { inputs[1] * 2, inputs[1] * 3 } end
    assert.are.equal(2, #Good():apply({ T.array({ 1, 2 }) }))
  end)

  it('stack is the traceback of where the node was applied in debug mode, nil otherwise', function()
    local x = Variable(T.array({ 1, 2 }))
    local node = Two()
    node:apply({ x })
    assert.is_nil(node.stack)
    local debug_node = Two()
    chainer.using_config('debug', true, function() debug_node:apply({ x }) end)
    assert.are.equal('string', type(debug_node.stack))
    assert.truthy(debug_node.stack:find('function_node_spec.lua', 1, true))
  end)
end)

describe('function hooks', function()
  it('a global hook sees every node, forward and backward', function()
    local Count = chainer.FunctionHook:extend('Count')
    function Count:init() self.fwd, self.bwd = {}, {} end
    function Count:forward_postprocess(f, in_data) self.fwd[#self.fwd + 1] = f:label() end
    function Count:backward_postprocess(f, in_data, out_grad) self.bwd[#self.bwd + 1] = f:label() end
    local hook = Count()
    local x = Variable(T.array({ 1, 2 }))
    hook:scope(function()
      local y = F.sum(F.exp(x) * x + 1)
      y:backward()
    end)
    assert.are.same({ 'Exp', '_ * _', '_ + const', 'Sum' }, { hook.fwd[1], hook.fwd[2], hook.fwd[3], hook.fwd[4] })
    assert.are.same({ 'Sum', '_ + const', '_ * _', 'Exp' }, { hook.bwd[1], hook.bwd[2], hook.bwd[3], hook.bwd[4] })
    assert.are.equal(4, #hook.bwd)
    -- unregistered after the scope, even on error
    assert.are.same({}, chainer.get_function_hooks())
    pcall(hook.scope, hook, function() error('boom') end)
    assert.are.same({}, chainer.get_function_hooks())
  end)

  it('a local hook sees only its node', function()
    local seen = {}
    local H = chainer.FunctionHook:extend('H')
    function H:forward_preprocess(f) seen[#seen + 1] = 'fwd ' .. f:label() end
    function H:backward_preprocess(f) seen[#seen + 1] = 'bwd ' .. f:label() end
    function H:added(f) seen[#seen + 1] = 'added' end
    local f = MulAdd()
    f:add_hook(H())
    local a = Variable(T.ones({ 2 }))
    local w = f:apply({ a, a, a })[1]
    F.sum(F.exp(w)):backward()
    assert.are.same({ 'added', 'fwd MulAdd', 'bwd MulAdd' }, seen)
    f:delete_hook('H')
    assert.truthy(err_of(function() f:delete_hook('H') end):find("no hook named 'H'", 1, true))
  end)

  it('TimerHook totals and reports', function()
    local hook = chainer.function_hooks.TimerHook()
    local x = Variable(T.ones({ 4 }))
    hook:scope(function()
      for _ = 1, 3 do F.sum(F.exp(x)):backward() x:cleargrad() end
    end)
    -- per iteration: Exp and Sum forward and backward, plus the nodes their
    -- backward passes apply (BroadcastTo, Mul)
    assert.are.equal(18, #hook.call_history)
    assert.is_true(hook:total_time() > 0)
    local s = hook:summary()
    assert.are.equal(6, s.Exp.occurrence)
    local report = hook:print_report(nil, false)
    assert.truthy(report:find('FunctionName', 1, true))
    assert.truthy(report:find('Exp%s+[%d.]+[mu]?s'))
  end)

  it('PrintHook writes each function with its inputs', function()
    local lines = {}
    local file = { write = function(_, ...) for _, s in ipairs({ ... }) do lines[#lines + 1] = s end end }
    local hook = chainer.function_hooks.PrintHook({ file = file })
    hook:scope(function() F.exp(Variable(T.array({ 1, 2 }))) end)
    local text = table.concat(lines)
    assert.truthy(text:find('function\tExp', 1, true))
    assert.truthy(text:find('- shape: (2,)', 1, true))
  end)

  it('duplicate hook names are refused', function()
    local hook = chainer.function_hooks.TimerHook()
    local e = err_of(function()
      hook:scope(function() chainer.function_hooks.TimerHook():register() end)
    end)
    assert.truthy(e:find("a hook named 'TimerHook' is already registered", 1, true))
  end)
end)

describe('old-style Function', function()
  local MulAddOld = chainer.Function:extend('MulAddOld')
  function MulAddOld:forward(inputs)
    return { inputs[1] * inputs[2] + inputs[3] }
  end
  function MulAddOld:backward(inputs, grad_outputs)
    local gw = grad_outputs[1]
    return { inputs[2] * gw, inputs[1] * gw, gw }
  end

  it('runs forward/backward on tensors and returns Variables', function()
    local x, y, z = Variable(T.array({ 1, 2 })), Variable(T.array({ 3, 4 })), Variable(T.array({ 5, 6 }))
    local f = MulAddOld()
    local w = f(x, y, z)
    assert.are.same({ 8, 14 }, vals(w))
    assert.are.equal(f, w.creator)
    assert.are.equal(3, #f.inputs)
    F.sum(w):backward()
    assert.are.same({ 3, 4 }, vals(x.grad))
    assert.are.same({ 1, 2 }, vals(y.grad))
    assert.are.same({ 1, 1 }, vals(z.grad))
    gradient_check.check_backward(function(a, b, c) return MulAddOld()(a, b, c) end,
      { T.array({ 0.5, 2 }, 'float64'), T.array({ 3, -1 }, 'float64'), T.array({ 1, 1 }, 'float64') },
      T.array({ 1, 2 }, 'float64'))
  end)

  it('enforces single use', function()
    local f = MulAddOld()
    local a = Variable(T.ones({ 1 }))
    f(a, a, a)
    assert.truthy(err_of(function() f(a, a, a) end):find('MulAddOld: this Function instance has already been called', 1, true))
  end)

  it('uses forward_cpu/backward_cpu when forward/backward are not given', function()
    local Sq = chainer.Function:extend('Sq')
    function Sq:forward_cpu(xs) return { xs[1] * xs[1] } end
    function Sq:backward_cpu(xs, gys) return { xs[1] * 2 * gys[1] } end
    local a = Variable(T.array({ 3 }))
    local y = Sq()(a)
    y:backward()
    assert.are.same({ 9 }, vals(y))
    assert.are.same({ 6 }, vals(a.grad))
  end)

  it('supports multiple outputs and local hooks', function()
    local Split = chainer.Function:extend('Split')
    function Split:forward(xs) return { xs[1] * 2, xs[1] * 3 } end
    function Split:backward(xs, gys)
      local g = T.zeros_like(xs[1])
      if gys[1] then g = g + gys[1] * 2 end
      if gys[2] then g = g + gys[2] * 3 end
      return { g }
    end
    local seen = 0
    local H = chainer.FunctionHook:extend('H2')
    function H:forward_preprocess() seen = seen + 1 end
    local f = Split()
    f:add_hook(H())
    local a = Variable(T.array({ 1 }))
    local p, q = f(a)
    assert.are.equal(1, seen)
    F.sum(q):backward()       -- only the second output has a gradient
    assert.are.same({ 3 }, vals(a.grad))
    assert.are.same({ 2 }, vals(p))
  end)
end)
