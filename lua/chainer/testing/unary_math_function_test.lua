-- testing/unary_math_function_test.lua: Chainer's
-- unary_math_function_unittest: forward, backward and double backward of a
-- one-input elementwise function over float16/32/64 and the shapes {3, 2}
-- and {} (a FunctionTestCase under parameterize).
--
--   testing.unary_math_function_unittest('sin')()          -- F.sin against T.sin
--   testing.unary_math_function_unittest(F.sqrt, T.sqrt, {make_data = positive})('F.sqrt')
--
-- func: a function of F or its name (then func_expected defaults to the
-- tensor function of that name, as Chainer picks NumPy's).  Options, after
-- Chainer's order (func, func_expected, label_expected, make_data,
-- is_linear, forward_options, backward_options, double_backward_options):
--   make_data(shape, dtype) -> x, gy, ggx   (default: uniform in [-1, 1])
--   is_linear: test the double backward of func(x)^2 (kept for Chainer's
--   callers; the double backward of a linear function is checked anyway)
--   *_options: assert_allclose / check_backward tolerances (by default the
--   dtype's, as function_spec's)
-- label_expected is accepted and ignored: Lua functions carry no label.
-- Returns a function(title = 'F.<name>') that registers the tests.
local T = require 'chainer.tensor'
local args = require 'chainer._args'

local M = {}

local SIGNATURE = args.signature { 'func_expected', 'label_expected', 'make_data', 'is_linear', 'forward_options',
  'backward_options', 'double_backward_options' }

local function default_data(shape, dtype)
  return T.random.uniform(-1, 1, shape, dtype), T.random.uniform(-1, 1, shape, dtype),
    T.random.uniform(-1, 1, shape, dtype)
end

function M.unary_math_function_unittest(func, ...)
  local o = args.parse('unary_math_function_unittest', SIGNATURE, select('#', ...), ...)
  local name
  if type(func) == 'string' then
    name = func
    func = require('chainer.functions')[name]
    if func == nil then error("unary_math_function_unittest: chainer.functions has no '" .. name .. "'", 2) end
  end
  local expected = o.func_expected
  if expected == nil then
    expected = name and T[name]
    if expected == nil then
      error('unary_math_function_unittest: give func_expected (a tensor function), or func by name ' ..
        "(e.g. 'sin') where chainer.tensor has the same function", 2)
    end
  end
  local make_data = o.make_data or default_data
  local forward = func
  if o.is_linear then forward = function(x) local y = func(x) return y * y end end
  local testing = require 'chainer.testing'
  local function_spec = require 'chainer.testing.function_spec'

  local Case = testing.FunctionTestCase:extend('F.' .. (name or 'function'))
  function Case:setup()
    local ftol = function_spec.forward_tol(self.dtype)
    local btol = function_spec.backward_tol(self.dtype)
    self.check_forward_options = o.forward_options or ftol
    self.check_backward_options = o.backward_options or btol
    self.check_double_backward_options = o.double_backward_options or btol
  end
  function Case:generate_inputs()
    local x, gy, ggx = make_data(self.shape, self.dtype)
    self._gy, self._ggx = gy, ggx
    return { x }
  end
  function Case:generate_grad_outputs() return { self._gy } end
  function Case:generate_grad_grad_inputs() return { self._ggx } end
  function Case:forward(inputs) return { forward(inputs[1]) } end
  -- the expected values in float64, rounded to the test's dtype
  function Case:forward_expected(inputs)
    local y = expected(inputs[1]:astype('float64'))
    if o.is_linear then y = y * y end
    return { y:astype(self.dtype) }
  end

  local params = testing.product({ shape = { { 3, 2 }, {} }, dtype = { 'float16', 'float32', 'float64' } })
  return function(title)
    if title ~= nil then rawset(Case, '__name', title) end
    require('chainer.testing.parameterized')._register(params, getfenv(2), Case, nil, 3)
  end, Case
end

return M
