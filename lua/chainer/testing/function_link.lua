-- testing/function_link.lua: Chainer's FunctionTestCase, LinkTestCase and
-- LinkInitializersTestCase for specs on busted, built on function_spec's
-- checks (the project's own function specs use the same ones).
--
--   local testing = require 'chainer.testing'
--   local ReLUTest = testing.FunctionTestCase:extend('ReLUTest')
--   function ReLUTest:generate_inputs()
--     return { T.random.uniform(-1, 1, self.shape, self.dtype) }
--   end
--   function ReLUTest:forward(inputs, device) return { F.relu(inputs[1]) } end
--   function ReLUTest:forward_expected(inputs) return { T.maximum(inputs[1], 0) } end
--   testing.parameterize(testing.product{dtype = {'float32', 'float64'}, shape = {{3, 2}}})(ReLUTest)
--   -- or ReLUTest:describe() for one set of tests without parameters
--
-- Each test gets a fresh instance with the parameters set as fields, then
-- setup() (when defined) runs: it may set check_forward_options,
-- check_backward_options, check_double_backward_options, skip_*_test,
-- dodge_nondifferentiable, numerical_grad_dtype, contiguous.  Lists take
-- the place of Chainer's tuples; a single tensor or Variable may be
-- returned where a list of one is expected.  Tests run on the CPU and, when
-- there is a GPU, again on 'cuda:0' (tagged #gpu).
local chainer = require 'chainer'
local T = chainer.tensor
local class = require 'chainer.class'
local function_spec = require 'chainer.testing.function_spec'
local array = require 'chainer.testing'   -- assert_allclose

local M = {}

local MAX_DODGES = 100   -- new draws before dodge_nondifferentiable gives up

---------------------------------------------------------------------------
-- errors
---------------------------------------------------------------------------
-- FunctionTestError / LinkTestError: raised as 'FunctionTestError: <what>
-- is not implemented correctly' followed by the check's own message.
local function test_error(name)
  return {
    name = name,
    fail = function(message) error(name .. ': ' .. message, 0) end,
  }
end
M.FunctionTestError = test_error('FunctionTestError')
M.LinkTestError = test_error('LinkTestError')

-- Runs f; a failure becomes `cls`'s error with `what` in front.
local function raise_if_fail(cls, what, f, ...)
  local ok, err = pcall(f, ...)
  if ok then return end
  local gc = require 'chainer.gradient_check'
  if gc.NondifferentiableError.is(err) then error(err, 0) end
  cls.fail(what .. '\n' .. tostring(err))
end

local function gradient_check() return require 'chainer.gradient_check' end

---------------------------------------------------------------------------
-- shared helpers
---------------------------------------------------------------------------
local function as_list(v) return function_spec.as_list(v) end

local function tensors(list)
  local out = {}
  for i, v in ipairs(as_list(list)) do out[i] = T.is_tensor(v) and v or v.array end
  return out
end

-- The same values in a non-contiguous tensor (every other element of a
-- buffer twice as long along the last axis); 0-d and empty tensors as they
-- are.
local function noncontiguous(t)
  if #t.shape == 0 or t.size == 0 then return t end
  local shape = {}
  for i, n in ipairs(t.shape) do shape[i] = n end
  shape[#shape] = shape[#shape] * 2
  local view = T.zeros(shape, t.dtype, t.ptr.dev):slice('..., ::2')
  view:copy_(t)
  return view
end

local function as_contiguity(self, list)
  if self.contiguous == 'C' then return list end
  if self.contiguous ~= nil then
    error(string.format("%s: contiguous must be nil or 'C' (got %s)", tostring(getmetatable(self).__name),
      tostring(self.contiguous)), 0)
  end
  local out = {}
  for i, t in ipairs(list) do out[i] = T.is_tensor(t) and noncontiguous(t) or t end
  return out
end

local function to_device(list, device)
  if device == 'cpu' then return list end
  local out = {}
  for i, t in ipairs(list) do out[i] = T.is_tensor(t) and t:to_device(device) or t end
  return out
end

local function uniform_like(list)
  local out = {}
  for i, a in ipairs(list) do out[i] = T.random.uniform(-1, 1, a.shape, a.dtype) end
  return out
end

-- Chainer's forward check: as many outputs as expected, each of the
-- expected dtype and shape, and close (assert_allclose with `options`).
local function check_outputs_equal(cls, outputs, expected, options)
  outputs, expected = tensors(outputs), tensors(expected)
  if #outputs ~= #expected then
    cls.fail(string.format('the forward returned %d outputs, %d expected', #outputs, #expected))
  end
  for i = 1, #outputs do
    local y, e = outputs[i], expected[i]
    if y.dtype ~= e.dtype then
      cls.fail(string.format('output %d has dtype %s, %s expected', i, y.dtype, e.dtype))
    end
    if T.shape_str(y.shape) ~= T.shape_str(e.shape) then
      cls.fail(string.format('output %d has shape %s, %s expected', i, T.shape_str(y.shape), T.shape_str(e.shape)))
    end
    local ok, err = pcall(array.assert_allclose, y, e, options or {})
    if not ok then cls.fail(string.format('forward is not implemented correctly (output %d)\n%s', i, tostring(err))) end
  end
end

local function param_text(param)
  return require('chainer.testing.parameterized').show(param or {})
end

-- Registers 'forward', 'backward', ... (each on every device) in `env`'s
-- busted, each on a fresh instance of cls with `param` set.
local function register(cls, env, param, tests)
  local it = env.it
  for _, dev in ipairs(function_spec.devices()) do
    for _, t in ipairs(tests) do
      it(t.name .. ' on ' .. dev.name .. dev.tag, function()
        local self = cls()
        for k, v in pairs(param or {}) do self[k] = v end
        if self.setup then self:setup() end
        if self[t.skip] then
          if env.pending then env.pending(t.skip .. ' is set') end
          return
        end
        if self.before_test then self:before_test(t.method) end
        local seed = function_spec.seed_for(tostring(cls.__name) .. param_text(param) .. t.name)
        T.random.seed(seed)
        self[t.method](self, dev.name)
      end)
    end
  end
end

-- Retries check(self) with new draws while it meets a non-differentiable
-- point, when dodge_nondifferentiable is set.
local function dodging(self, check)
  if not self.dodge_nondifferentiable then return check() end
  local NE = gradient_check().NondifferentiableError
  for _ = 1, MAX_DODGES do
    local ok, err = pcall(check)
    if ok then return end
    if not NE.is(err) then error(err, 0) end
  end
  error(string.format('dodge_nondifferentiable: %d draws in a row were non-differentiable points', MAX_DODGES), 0)
end

local function backward_options(self, base)
  local o = {}
  for k, v in pairs(base or {}) do o[k] = v end
  o.dtype = self.numerical_grad_dtype or 'float64'
  o.detect_nondifferentiable = self.dodge_nondifferentiable and true or nil
  return o
end

---------------------------------------------------------------------------
-- FunctionTestCase
---------------------------------------------------------------------------
-- What the function and link test cases share: Chainer's flags and their
-- defaults, and the registration of the tests in `_tests`.
local TestCase = class.Object:extend('_TestCase')
TestCase.skip_forward_test = false
TestCase.skip_backward_test = false
TestCase.dodge_nondifferentiable = false
TestCase.numerical_grad_dtype = 'float64'

function TestCase:init()
  self.check_forward_options = {}
  self.check_backward_options = {}
end

function TestCase._register_tests(cls, env, param) register(cls, env, param, cls._tests) end

-- Class:describe(title): the tests without parameters, in a describe block.
function TestCase.describe(cls, title)
  local env = getfenv(2)
  env.describe(title or tostring(rawget(cls, '__name')), function() cls._register_tests(cls, env, nil) end)
end

local FunctionTestCase = TestCase:extend('FunctionTestCase')
M.FunctionTestCase = FunctionTestCase
FunctionTestCase.skip_double_backward_test = false

function FunctionTestCase:init()
  TestCase.init(self)
  self.check_double_backward_options = {}
end

local function must(self, name)
  error(string.format('%s: define %s', tostring(getmetatable(self).__name), name), 0)
end
function FunctionTestCase:generate_inputs() must(self, 'generate_inputs()') end
function FunctionTestCase:forward() must(self, 'forward(inputs, device)') end
function FunctionTestCase:forward_expected() must(self, 'forward_expected(inputs)') end
function FunctionTestCase:generate_grad_outputs(outputs_template) return uniform_like(outputs_template) end
function FunctionTestCase:generate_grad_grad_inputs(inputs_template) return uniform_like(inputs_template) end
function FunctionTestCase:check_forward_outputs(outputs, expected)
  check_outputs_equal(M.FunctionTestError, outputs, expected, self.check_forward_options)
end

function FunctionTestCase:_inputs() return tensors(self:generate_inputs()) end

function FunctionTestCase:_fn(device)
  return function(...) return as_list(self:forward({ ... }, device)) end
end

function FunctionTestCase:run_test_forward(device)
  local inputs = as_contiguity(self, self:_inputs())
  local expected = tensors(self:forward_expected(inputs))
  local xs = as_contiguity(self, to_device(inputs, device))
  local outputs
  raise_if_fail(M.FunctionTestError, 'the forward failed', function() outputs = function_spec.run_forward(self:_fn(device), xs) end)
  self:check_forward_outputs(outputs, expected)
end

function FunctionTestCase:run_test_backward(device)
  dodging(self, function()
    local inputs = self:_inputs()
    local gys = tensors(self:generate_grad_outputs(tensors(self:forward_expected(inputs))))
    local xs = as_contiguity(self, to_device(inputs, device))
    gys = as_contiguity(self, to_device(gys, device))
    raise_if_fail(M.FunctionTestError, 'backward is not implemented correctly', function_spec.run_backward,
      self:_fn(device), xs, gys, backward_options(self, self.check_backward_options))
  end)
end

function FunctionTestCase:run_test_double_backward(device)
  dodging(self, function()
    local inputs = self:_inputs()
    local gys = tensors(self:generate_grad_outputs(tensors(self:forward_expected(inputs))))
    local ggxs = {}
    for _, g in ipairs(tensors(self:generate_grad_grad_inputs(inputs))) do
      if function_spec.is_float(g) then ggxs[#ggxs + 1] = g end   -- only the float inputs have gradients
    end
    local xs = as_contiguity(self, to_device(inputs, device))
    gys = as_contiguity(self, to_device(gys, device))
    ggxs = as_contiguity(self, to_device(ggxs, device))
    raise_if_fail(M.FunctionTestError, 'double backward is not implemented correctly', function_spec.run_double_backward,
      self:_fn(device), xs, gys, ggxs, backward_options(self, self.check_double_backward_options))
  end)
end

FunctionTestCase._tests = {
  { name = 'forward', method = 'run_test_forward', skip = 'skip_forward_test' },
  { name = 'backward', method = 'run_test_backward', skip = 'skip_backward_test' },
  { name = 'double backward', method = 'run_test_double_backward', skip = 'skip_double_backward_test' },
}

---------------------------------------------------------------------------
-- LinkTestCase and LinkInitializersTestCase
---------------------------------------------------------------------------
-- InitializerArgument(argument_value, expected_initializer): what the link
-- is given and the initializer it is expected to use (for nil and other
-- arguments that mean a default).
local InitializerArgument = class.Object:extend('InitializerArgument')
M.InitializerArgument = InitializerArgument
function InitializerArgument:init(argument_value, expected_initializer)
  if expected_initializer == nil then
    error('InitializerArgument: the expected initializer cannot be nil', 3)
  end
  self.argument_value = argument_value
  self.expected_initializer = expected_initializer
end

local LinkTestBase = TestCase:extend('_LinkTestBase')
LinkTestBase.param_names = {}

function LinkTestBase:init()
  TestCase.init(self)
  self.check_initializers_options = {}
end
function LinkTestBase:generate_params() must(self, 'generate_params()') end
function LinkTestBase:generate_inputs() must(self, 'generate_inputs()') end
function LinkTestBase:create_link() must(self, 'create_link(initializers)') end
-- The default forward: the link called on the inputs.
function LinkTestBase:forward(link, inputs) return link(unpack(inputs)) end

function LinkTestBase:_params(link)
  local out = {}
  for i, name in ipairs(self.param_names) do
    local p = link[name]
    if p == nil then M.LinkTestError.fail("the link has no parameter named '" .. tostring(name) .. "'") end
    out[i] = p
  end
  return out
end

-- The link made from `inits`, on `device`, after one forward on fresh
-- inputs (which initializes lazy parameters); also returns those inputs.
function LinkTestBase:_initialized_link(inits, device)
  local link = self:create_link(inits)
  if device ~= 'cpu' then link:to_device(device) end
  local inputs = as_contiguity(self, to_device(tensors(self:generate_inputs()), device))
  local vars = {}
  for i, x in ipairs(inputs) do vars[i] = chainer.Variable(x) end
  local outputs = as_list(self:forward(link, vars, device))
  return link, inputs, outputs
end

local LinkTestCase = LinkTestBase:extend('LinkTestCase')
M.LinkTestCase = LinkTestCase

function LinkTestCase:forward_expected() must(self, 'forward_expected(link, inputs)') end
function LinkTestCase:generate_grad_outputs(outputs_template) return uniform_like(outputs_template) end
function LinkTestCase:check_forward_outputs(outputs, expected)
  check_outputs_equal(M.LinkTestError, outputs, expected, self.check_forward_options)
end

function LinkTestCase:run_test_forward(device)
  local link = self:create_link(self:generate_params())
  if device ~= 'cpu' then link:to_device(device) end
  local inputs = tensors(self:generate_inputs())
  local xs = as_contiguity(self, to_device(inputs, device))
  local outputs
  raise_if_fail(M.LinkTestError, 'the forward failed', function()
    outputs = function_spec.run_forward(function(...) return as_list(self:forward(link, { ... }, device)) end, xs)
  end)
  if device ~= 'cpu' then link:to_device('cpu') end
  self:check_forward_outputs(outputs, tensors(self:forward_expected(link, inputs)))
end

function LinkTestCase:run_test_backward(device)
  dodging(self, function()
    local inits = self:generate_params()
    local link, inputs, outputs = self:_initialized_link(inits, device)
    local gys = {}
    for i, y in ipairs(tensors(self:generate_grad_outputs(tensors(outputs)))) do gys[i] = y end
    gys = as_contiguity(self, to_device(gys, device))
    local params = self:_params(link)
    local o = backward_options(self, self.check_backward_options)
    raise_if_fail(M.LinkTestError, 'backward is not implemented correctly', function()
      local f = function(...) return as_list(self:forward(link, { ... }, device)) end
      local gc = gradient_check()
      local tol = function_spec.backward_tol(inputs[1] and inputs[1].dtype or 'float64')
      gc.check_backward(f, inputs, gys, params, { eps = o.eps or 1e-3, atol = o.atol or tol.atol,
        rtol = o.rtol or tol.rtol, no_grads = o.no_grads, dtype = o.dtype,
        detect_nondifferentiable = o.detect_nondifferentiable })
    end)
  end)
end

LinkTestCase._tests = {
  { name = 'forward', method = 'run_test_forward', skip = 'skip_forward_test' },
  { name = 'backward', method = 'run_test_backward', skip = 'skip_backward_test' },
}

local LinkInitializersTestCase = LinkTestBase:extend('LinkInitializersTestCase')
M.LinkInitializersTestCase = LinkInitializersTestCase
function LinkInitializersTestCase:get_initializers() must(self, 'get_initializers()') end

local function argument_value(init)
  if class.isinstance(init, InitializerArgument) then return init.argument_value end
  return init
end

local function expected_initializer(init)
  if class.isinstance(init, InitializerArgument) then init = init.expected_initializer end
  return require('chainer.initializers')._get_initializer(init, 'LinkInitializersTestCase')
end

-- For each parameter and each of its initializers: the link made with it
-- (the other parameters from generate_params) holds what the initializer
-- (or InitializerArgument's expected one) fills an array of its shape with.
function LinkInitializersTestCase:run_test_initializers(device)
  local all = self:get_initializers()
  if type(all) ~= 'table' then error('get_initializers must return a list (one list of initializers per parameter)', 0) end
  for i, inits_of_param in ipairs(all) do
    if type(inits_of_param) ~= 'table' then
      error(string.format('get_initializers: entry %d must be a list of initializers', i), 0)
    end
    for _, init in ipairs(inits_of_param) do
      local inits = {}
      for k, v in pairs(self:generate_params()) do inits[k] = v end
      inits[i] = argument_value(init)
      local link = self:_initialized_link(inits, device)
      local actual = self:_params(link)[i].array:to_cpu()
      local expected = T.empty(actual.shape, actual.dtype)
      expected_initializer(init)(expected)
      local ok, err = pcall(array.assert_allclose, actual, expected, self.check_initializers_options)
      if not ok then
        M.LinkTestError.fail(string.format("parameter '%s' is not initialized as its initializer %d says\n%s",
          self.param_names[i], i, tostring(err)))
      end
    end
  end
end
LinkInitializersTestCase._tests = {
  { name = 'initializers', method = 'run_test_initializers', skip = 'skip_initializers_test' },
}

return M
