-- chainer.testing: helpers for specs (docs/testing.md).
--   testing.assert_allclose(x, y, {atol = 1e-5, rtol = 1e-4, verbose = true})
--   testing.parameterize / product / product_dict       (parameterized.lua)
--   testing.FunctionTestCase / LinkTestCase / LinkInitializersTestCase,
--   InitializerArgument, FunctionTestError, LinkTestError (function_link.lua)
--   testing.save_and_load / _npz / _hdf5                 (serializer.lua)
--   testing.get_trainer_with_mock_updater                (training.lua)
--   testing.unary_math_function_unittest                 (unary_math_function_test.lua)
--   testing.fix_random / generate_seed                   (random.lua)
--   testing.generate_matrix                              (matrix.lua)
--   testing.assert_warns / with_requires / without_requires (helper.lua)
--   testing.patch (patch.lua; its mock: mock.lua)
--   testing.run_module                                   (run_module.lua)
--   testing.distribution_unittest                        (distribution_test.lua)
-- x and y may be tensors, Variables, numbers or nested Lua tables; they
-- must have the same shape (a number or 1-element y is broadcast).  Passes
-- when |x - y| <= atol + rtol * |y| everywhere (NaN equals NaN).
local T = require 'chainer.tensor'

local M = {}

local function as_float64(v, what)
  if type(v) == 'table' and v._is_variable then v = v._data end
  if type(v) == 'number' or type(v) == 'boolean' then return T.array(v, 'float64') end
  if type(v) == 'table' then return T.array(v, 'float64') end
  if T.is_tensor(v) then
    if v.ptr.dev ~= -1 then v = v:to_cpu() end
    return v:astype('float64')
  end
  error(string.format('assert_allclose: %s must be a tensor, a Variable, a number or a table (got %s)', what,
    type(v)), 3)
end

local function index_of(shape, flat)
  local idx = {}
  for d = #shape, 1, -1 do
    idx[d] = flat % shape[d]
    flat = (flat - idx[d]) / shape[d]
  end
  return '(' .. table.concat(idx, ', ') .. ')'
end

function M.assert_allclose(x, y, opts, rtol_arg)
  local atol, rtol, verbose = 1e-5, 1e-4, true
  if type(opts) == 'number' then
    atol, rtol = opts, rtol_arg or rtol
  elseif type(opts) == 'table' then
    if opts.atol then atol = opts.atol end
    if opts.rtol then rtol = opts.rtol end
    if opts.verbose == false then verbose = false end
  end
  local a, b = as_float64(x, 'x'), as_float64(y, 'y')
  local sa, sb = a.shape, b.shape
  local same = #sa == #sb
  if same then for i = 1, #sa do if sa[i] ~= sb[i] then same = false end end end
  if not same then
    if b.size == 1 then
      b = b:reshape({}):broadcast_to(sa)
    else
      error(string.format('assert_allclose: shapes differ: x %s, y %s', T.shape_str(sa), T.shape_str(sb)), 2)
    end
  end
  local xa, ya = a:tolist(), b:tolist()
  local bad, worst, worst_i = 0, -1, nil
  for i = 1, #xa do
    local p, q = xa[i], ya[i]
    local ok
    if p ~= p or q ~= q then ok = (p ~= p) and (q ~= q)
    elseif p == q then ok = true
    else ok = math.abs(p - q) <= atol + rtol * math.abs(q) end
    if not ok then
      bad = bad + 1
      local err = math.abs(p - q)
      if err ~= err then err = math.huge end
      if err > worst then worst, worst_i = err, i end
    end
  end
  if bad == 0 then return true end
  local msg = string.format('assert_allclose: not close (atol=%g, rtol=%g)\nshape: %s\n' ..
    'mismatch: %d of %d elements; max absolute error %.6g at index %s: x = %.9g, y = %.9g',
    atol, rtol, T.shape_str(sa), bad, #xa, worst, index_of(sa, worst_i - 1), xa[worst_i], ya[worst_i])
  if verbose then msg = msg .. '\nx: ' .. tostring(a) .. '\ny: ' .. tostring(b) end
  error(msg, 2)
end

-- Loaded on first use (they need the rest of chainer, which loads this
-- module): parameterize/product/product_dict, the test case classes, and
-- the oracle runner (shared/oracle vectors).
local LAZY = {
  parameterize = 'chainer.testing.parameterized', product = 'chainer.testing.parameterized',
  product_dict = 'chainer.testing.parameterized', from_pytest_parameterize = 'chainer.testing.parameterized',
  parameterize_pytest = 'chainer.testing.parameterized',
  save_and_load = 'chainer.testing.serializer', save_and_load_npz = 'chainer.testing.serializer',
  save_and_load_hdf5 = 'chainer.testing.serializer',
  get_trainer_with_mock_updater = 'chainer.testing.training',
  unary_math_function_unittest = 'chainer.testing.unary_math_function_test',
  FunctionTestCase = 'chainer.testing.function_link', LinkTestCase = 'chainer.testing.function_link',
  LinkInitializersTestCase = 'chainer.testing.function_link',
  InitializerArgument = 'chainer.testing.function_link', FunctionTestError = 'chainer.testing.function_link',
  LinkTestError = 'chainer.testing.function_link',
  fix_random = 'chainer.testing.random', generate_seed = 'chainer.testing.random',
  generate_matrix = 'chainer.testing.matrix',
  assert_warns = 'chainer.testing.helper', with_requires = 'chainer.testing.helper',
  without_requires = 'chainer.testing.helper',
  patch = 'chainer.testing.patch', run_module = 'chainer.testing.run_module',
  distribution_unittest = 'chainer.testing.distribution_test',
}
require('chainer._lazy')(M, { oracle = 'chainer.testing.oracle' }, LAZY)

return M
