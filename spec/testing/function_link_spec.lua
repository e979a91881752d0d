-- chainer.testing for users' specs: parameterize / product / product_dict,
-- FunctionTestCase, LinkTestCase, LinkInitializersTestCase run on real
-- functions and links, and shown to fail on wrong ones.
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local L = chainer.links
local I = chainer.initializers
local testing = require 'chainer.testing'

describe('product / product_dict', function()
  it('makes every combination, names in sorted order as Chainer', function()
    local p = testing.product({ b = { 1, 2 }, a = { 'x', 'y' } })
    assert.are.same({ { a = 'x', b = 1 }, { a = 'x', b = 2 }, { a = 'y', b = 1 }, { a = 'y', b = 2 } }, p)
    assert.are.same({ { a = 1, b = 'u' }, { a = 2, b = 'v' } }, testing.product({ ['a,b'] = { { 1, 'u' }, { 2, 'v' } } }))
    assert.are.same({ { a = 1, c = 3 }, { a = 1, c = 4 }, { a = 2, c = 3 }, { a = 2, c = 4 } },
      testing.product_dict({ { a = 1 }, { a = 2 } }, { { c = 3 }, { c = 4 } }))
    assert.are.same(testing.product_dict({ { a = 1 } }, { { c = 3 } }), testing.product({ { { a = 1 } }, { { c = 3 } } }))
    assert.has_error(function() testing.product(3) end)
    assert.has_error(function() testing.product({ ['a,b'] = { { 1 } } }) end)
  end)
end)

-- parameterize with a body: one describe per parameter table
local seen = {}
testing.parameterize({ n = 1 }, { n = 2 }, { n = 3 })('parameterize', function(p)
  it('hands each table to the body', function() seen[#seen + 1] = p.n end)
end)
describe('parameterize', function()
  it('ran the body once per parameter table, in order', function() assert.are.same({ 1, 2, 3 }, seen) end)
  it('refuses what is not a list of named tables', function()
    assert.has_error(function() testing.parameterize() end)
    assert.has_error(function() testing.parameterize({ 1, 2 }) end)
  end)
end)

-- A FunctionTestCase over dtypes and shapes, as in Chainer's docs.
local ReLUTest = testing.FunctionTestCase:extend('ReLUTest')
function ReLUTest:setup()
  if self.dtype == 'float16' then
    self.check_forward_options = { atol = 1e-3, rtol = 1e-3 }
    self.check_backward_options = { atol = 5e-2, rtol = 5e-2 }
    self.check_double_backward_options = { atol = 5e-2, rtol = 5e-2 }
  end
end
function ReLUTest:generate_inputs()
  local x = T.random.uniform(-1, 1, self.shape, self.dtype)
  -- keep away from the kink at 0, where the finite differences break down
  x = T.where(T.less(T.abs(x), 0.1), T.full(self.shape, 0.5, self.dtype), x)
  return { x }
end
function ReLUTest:forward(inputs) return { F.relu(inputs[1]) } end
function ReLUTest:forward_expected(inputs) return { T.maximum(inputs[1], 0):astype(self.dtype) } end
testing.parameterize(testing.product({ dtype = { 'float16', 'float32', 'float64' }, shape = { { 3, 2 }, { 4 } } }))(ReLUTest)

-- dodge_nondifferentiable: abs drawn right at its kink is drawn again
local AbsTest = testing.FunctionTestCase:extend('AbsTest')
AbsTest.dodge_nondifferentiable = true
AbsTest.skip_double_backward_test = true
local draws = 0
function AbsTest:setup() draws = 0 end
function AbsTest:generate_inputs()
  draws = draws + 1
  -- each test's first draw is the kink itself (unless always_kink: every draw)
  if draws == 1 or self.always_kink then return { T.zeros({ 2 }, 'float64') } end
  return { T.array({ 0.5, -0.25 }, 'float64') }
end
function AbsTest:forward(inputs) return { F.absolute(inputs[1]) } end
function AbsTest:forward_expected(inputs) return { T.abs(inputs[1]) } end
AbsTest:describe()

describe('FunctionTestCase', function()
  -- runs one test method on a fresh instance, as the registered tests do
  local function run(cls, method, fields)
    local self = cls()
    for k, v in pairs(fields or {}) do self[k] = v end
    if self.setup then self:setup() end
    return pcall(self[method], self, 'cpu')
  end

  it('reports a wrong forward, a wrong backward and a wrong output dtype', function()
    local Wrong = testing.FunctionTestCase:extend('Wrong')
    function Wrong:generate_inputs() return { T.array({ 1, 2 }, 'float64') } end
    function Wrong:forward(inputs) return { inputs[1] * 2 } end
    function Wrong:forward_expected(inputs) return { inputs[1] * 3 } end
    local ok, err = run(Wrong, 'run_test_forward')
    assert.is_false(ok)
    assert.truthy(tostring(err):find('FunctionTestError: forward is not implemented correctly', 1, true), err)

    -- a node whose backward is off by a factor 2
    local Bad = chainer.FunctionNode:extend('Bad')
    function Bad:forward(inputs) return { inputs[1] * 3 } end
    function Bad:backward(_, gys) return { gys[1] * 6 } end
    local BadTest = testing.FunctionTestCase:extend('BadTest')
    function BadTest:generate_inputs() return { T.array({ 1, 2 }, 'float64') } end
    function BadTest:forward(inputs) return Bad():apply(inputs) end
    function BadTest:forward_expected(inputs) return { inputs[1] * 3 } end
    assert.is_true((run(BadTest, 'run_test_forward')))
    ok, err = run(BadTest, 'run_test_backward')
    assert.is_false(ok)
    assert.truthy(tostring(err):find('FunctionTestError: backward is not implemented correctly', 1, true), err)

    local DtypeTest = testing.FunctionTestCase:extend('DtypeTest')
    function DtypeTest:generate_inputs() return { T.array({ 1, 2 }, 'float64') } end
    function DtypeTest:forward(inputs) return { F.cast(inputs[1], 'float32') } end
    function DtypeTest:forward_expected(inputs) return { inputs[1] } end
    ok, err = run(DtypeTest, 'run_test_forward')
    assert.is_false(ok)
    assert.truthy(tostring(err):find('output 1 has dtype float32, float64 expected', 1, true), err)
  end)

  it('dodges a non-differentiable draw (NondifferentiableError) and gives up after 100', function()
    local ok = run(AbsTest, 'run_test_backward')
    assert.is_true(ok)
    assert.are.equal(2, draws)   -- the kink, then a good draw
    local err
    ok, err = run(AbsTest, 'run_test_backward', { always_kink = true })
    assert.is_false(ok)
    assert.truthy(tostring(err):find('100 draws in a row were non-differentiable points', 1, true), err)
    -- without dodging, the check itself reports the kink
    ok, err = pcall(chainer.gradient_check.check_backward, F.absolute, { T.zeros({ 2 }, 'float64') },
      { T.ones({ 2 }, 'float64') }, { detect_nondifferentiable = true })
    assert.is_false(ok)
    assert.is_true(chainer.gradient_check.NondifferentiableError.is(err))
  end)

  it('catches a forward that changes its input in place', function()
    local InPlace = testing.FunctionTestCase:extend('InPlace')
    function InPlace:generate_inputs() return { T.array({ 1, 2 }, 'float64') } end
    function InPlace:forward(inputs)
      inputs[1].array:fill_(0)
      return { inputs[1] * 1 }
    end
    function InPlace:forward_expected() return { T.zeros({ 2 }, 'float64') } end
    local ok, err = run(InPlace, 'run_test_forward')
    assert.is_false(ok)
    assert.truthy(tostring(err):find('modified its inputs in place', 1, true), err)
  end)

  it('hands forward non-contiguous inputs unless contiguous is C', function()
    local flags = {}
    local Probe = testing.FunctionTestCase:extend('Probe')
    function Probe:generate_inputs() return { T.array({ { 1, 2 }, { 3, 4 } }, 'float64') } end
    function Probe:forward(inputs)
      flags[#flags + 1] = inputs[1].array.is_contiguous
      return { inputs[1] * 1 }
    end
    function Probe:forward_expected(inputs) return { inputs[1] } end
    assert.is_true((run(Probe, 'run_test_forward')))
    assert.is_true((run(Probe, 'run_test_forward', { contiguous = 'C' })))
    assert.are.same({ false, true }, flags)
  end)
end)

-- LinkTestCase: Linear with its W and b checked too (float32: the link
-- makes float32 parameters from any initial array, as Chainer's)
local LinearTest = testing.LinkTestCase:extend('LinearTest')
LinearTest.param_names = { 'W', 'b' }
function LinearTest:generate_params()
  return { T.random.uniform(-1, 1, { 3, 2 }, 'float32'), T.random.uniform(-1, 1, { 3 }, 'float32') }
end
function LinearTest:generate_inputs() return { T.random.uniform(-1, 1, { self.batch or 4, 2 }, 'float32') } end
function LinearTest:create_link(inits)
  return L.Linear(2, 3, { initialW = inits[1], initial_bias = inits[2] })
end
function LinearTest:forward_expected(link, inputs)
  return { T.matmul(inputs[1], link.W.array:transpose()) + link.b.array }
end
testing.parameterize({ batch = 1 }, { batch = 4 })(LinearTest)

-- LinkInitializersTestCase: the initializers Linear is given end up in W and b
local LinearInitTest = testing.LinkInitializersTestCase:extend('LinearInitTest')
LinearInitTest.param_names = { 'W', 'b' }
LinearInitTest.generate_params = LinearTest.generate_params
LinearInitTest.generate_inputs = LinearTest.generate_inputs
LinearInitTest.create_link = LinearTest.create_link
function LinearInitTest:get_initializers()
  return {
    { I.Constant(1), 2 },
    { I.Constant(2), 3, testing.InitializerArgument(nil, 0) },
  }
end
LinearInitTest:describe()

describe('LinkInitializersTestCase', function()
  it('fails when the link does not use the initializer it is given', function()
    local Ignores = testing.LinkInitializersTestCase:extend('Ignores')
    Ignores.param_names = { 'W' }
    function Ignores:generate_params() return { 0 } end
    function Ignores:generate_inputs() return { T.ones({ 1, 2 }, 'float32') } end
    function Ignores:create_link() return L.Linear(2, 3, { initialW = 5 }) end
    function Ignores:get_initializers() return { { I.Constant(1) } } end
    local self = Ignores()
    local ok, err = pcall(self.run_test_initializers, self, 'cpu')
    assert.is_false(ok)
    assert.truthy(tostring(err):find("LinkTestError: parameter 'W' is not initialized", 1, true), err)
  end)
end)
