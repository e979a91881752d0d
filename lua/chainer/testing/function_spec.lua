-- testing/function_spec.lua: one declarative table per function becomes a
-- set of busted tests (forward against a reference, backward and double
-- backward against finite differences), for each dtype and each device.
--
--   local function_spec = require 'chainer.testing.function_spec'
--   function_spec.describe('F.relu', {
--     fn = function(x) return F.relu(x) end,          -- Variables in, Variable(s) out
--     inputs = function(dtype) return { T.random.uniform(-1, 1, {3, 4}, dtype) } end,
--     reference = function(x) return T.maximum(x, 0) end,   -- tensors in, tensor(s) out
--     dtypes = { 'float32', 'float64' },              -- default: both
--     forward_tol = { float32 = { atol = 1e-6, rtol = 1e-5 } },
--     backward = true,                                -- default true
--     double_backward = true,                         -- default false
--     backward_tol = { float32 = { atol = 1e-3, rtol = 1e-2 } },
--     eps = 1e-3,                                     -- finite-difference step
--     no_grads = { false, true },                     -- inputs without gradients
--     cases = { {name = 'axis1', opts = {axis = 1}}, ... },  -- optional variants:
--                                                     -- fn/inputs/reference receive case.opts last
--   })
--
-- Inputs that are not floating point (labels, indices) are never
-- differentiated.  Random inputs come from a fixed seed per test, so a
-- failure reproduces.  Devices: the CPU, plus 'cuda:0' (tagged #gpu) when
-- the CUDA backend has a GPU, where the forward result is also compared
-- with the CPU's.
local chainer = require 'chainer'
local T = chainer.tensor
local gradient_check = require 'chainer.gradient_check'
local testing = require 'chainer.testing'

local M = {}

local default_forward_tol = {
  float16 = { atol = 1e-3, rtol = 1e-2 },
  float32 = { atol = 1e-5, rtol = 1e-4 },
  float64 = { atol = 1e-10, rtol = 1e-8 },
}
local default_backward_tol = {
  float16 = { atol = 5e-2, rtol = 5e-2 },
  float32 = { atol = 1e-3, rtol = 1e-2 },
  float64 = { atol = 1e-6, rtol = 1e-5 },
}

local function pick(tbl, default, dtype)
  return (tbl and tbl[dtype]) or default[dtype]
end

-- The default tolerances by dtype (forward against a reference; gradients
-- against finite differences), shared with chainer.testing's test cases.
M.default_forward_tol = default_forward_tol
M.default_backward_tol = default_backward_tol
function M.forward_tol(dtype, given) return pick(given, default_forward_tol, dtype) end
function M.backward_tol(dtype, given) return pick(given, default_backward_tol, dtype) end

local function as_list(v)
  if v == nil then return {} end
  if T.is_tensor(v) or (type(v) == 'table' and v.array ~= nil) then return { v } end
  return v
end
M.as_list = as_list

local function to_tensor(v)
  if T.is_tensor(v) then return v end
  return v.array
end

local function is_float(t) return T.is_tensor(t) and (t.dtype == 'float32' or t.dtype == 'float64' or t.dtype == 'float16') end
M.is_float = is_float

local function with_opts(fn, opts)
  if opts == nil then return fn end
  return function(...)
    local args = { ... }
    args[#args + 1] = opts
    return fn(unpack(args, 1, #args))
  end
end

local function seed_for(name)
  local h = 0
  for i = 1, #name do h = (h * 31 + name:byte(i)) % 2147483647 end
  return h
end
M.seed_for = seed_for

-- Upstream gradients shaped like the outputs (uniform in [-1, 1], each in
-- its output's dtype; nil for outputs that are not floating point).
local function random_grads(outs)
  local gys = {}
  for i, y in ipairs(outs) do
    local t = to_tensor(y)
    if is_float(t) then
      gys[i] = T.random.uniform(-1, 1, t.shape, t.dtype)
    end
  end
  return gys
end
M.random_grads = random_grads

local function gpu_available()
  local ok, cuda = pcall(require, 'chainer.cuda')
  return ok and cuda.available
end

-- The devices the tests run on: the CPU, plus 'cuda:0' (its tests tagged
-- #gpu) when the CUDA backend has a GPU.
function M.devices()
  local devices = { { name = 'cpu', tag = '' } }
  if gpu_available() then devices[#devices + 1] = { name = 'cuda:0', tag = ' #gpu' } end
  return devices
end

-- Runs fn on Variables of xs (already on the device) and returns its
-- outputs as CPU tensors; an input that fn changed in place is an error.
function M.run_forward(fn, xs)
  local before = {}
  for i, x in ipairs(xs) do before[i] = x:to_cpu():copy() end
  local vars = {}
  for i, x in ipairs(xs) do vars[i] = chainer.Variable(x) end
  local ys = as_list(fn(unpack(vars, 1, #vars)))
  if #ys == 0 then error('the forward returned no output', 2) end
  local changed = {}
  for i, x in ipairs(xs) do
    local ok = pcall(testing.assert_allclose, x:to_cpu(), before[i], { atol = 0, rtol = 0, verbose = false })
    if not ok then changed[#changed + 1] = tostring(i) end
  end
  if #changed > 0 then
    error('the forward modified its inputs in place (inputs ' .. table.concat(changed, ', ') .. ')', 2)
  end
  local out = {}
  for i, y in ipairs(ys) do out[i] = to_tensor(y):to_cpu() end
  return out
end

-- gradient_check.check_backward / check_double_backward with the default
-- eps and tolerances of the inputs' dtype; opts: eps, atol, rtol,
-- no_grads, dtype (the numerical gradients' dtype), detect_nondifferentiable.
local function check_options(xs, opts)
  local dtype = 'float64'
  for _, x in ipairs(xs) do if is_float(x) then dtype = x.dtype break end end
  local tol = M.backward_tol(dtype)
  local o = { eps = opts.eps or 1e-3, atol = opts.atol or tol.atol, rtol = opts.rtol or tol.rtol,
    no_grads = opts.no_grads, dtype = opts.dtype, detect_nondifferentiable = opts.detect_nondifferentiable }
  return o
end

function M.run_backward(fn, xs, gys, opts)
  gradient_check.check_backward(fn, xs, #gys > 0 and gys or nil, nil, check_options(xs, opts or {}))
end

function M.run_double_backward(fn, xs, gys, ggxs, opts)
  gradient_check.check_double_backward(fn, xs, gys, ggxs, nil, check_options(xs, opts or {}))
end

-- Registers the busted tests for one function.
function M.describe(title, spec)
  -- busted defines describe/it in the spec file's environment, not in _G
  local env = getfenv(2)
  local describe, it, assert = env.describe, env.it, env.assert
  local dtypes = spec.dtypes or { 'float32', 'float64' }
  local cases = spec.cases or { { name = 'default' } }

  describe(title, function()
    for _, case in ipairs(cases) do
      for _, dtype in ipairs(dtypes) do
        for _, dev in ipairs(M.devices()) do
          local device = dev.name
          local label = string.format('%s %s on %s%s', case.name, dtype, device, dev.tag)
          local fn = with_opts(spec.fn, case.opts)
          local function make_inputs()
            T.random.seed(seed_for(title .. label))
            local xs = as_list(spec.inputs(dtype, case.opts))
            if device ~= 'cpu' then
              for i, x in ipairs(xs) do xs[i] = x:to_device(device) end
            end
            return xs
          end

          it('forward ' .. label, function()
            local xs = make_inputs()
            local ys = M.run_forward(fn, xs)
            if spec.reference then
              local cpu_xs = {}
              for i, x in ipairs(xs) do cpu_xs[i] = x:to_cpu() end
              local refs = as_list(with_opts(spec.reference, case.opts)(unpack(cpu_xs, 1, #cpu_xs)))
              assert.are.equal(#refs, #ys, 'number of outputs')
              local tol = M.forward_tol(dtype, spec.forward_tol)
              for i = 1, #ys do testing.assert_allclose(ys[i], refs[i], tol) end
            end
          end)

          local function no_grads_of(xs)
            local no_grads = {}
            for i, x in ipairs(xs) do
              no_grads[i] = (spec.no_grads and spec.no_grads[i]) or not is_float(x)
            end
            return no_grads
          end

          if spec.backward ~= false then
            it('backward ' .. label, function()
              local xs = make_inputs()
              local probe = {}
              for i, x in ipairs(xs) do probe[i] = chainer.Variable(x) end
              local gys = random_grads(as_list(fn(unpack(probe, 1, #probe))))
              local tol = M.backward_tol(dtype, spec.backward_tol)
              M.run_backward(fn, xs, gys, { eps = spec.eps, atol = tol.atol, rtol = tol.rtol, no_grads = no_grads_of(xs) })
            end)
          end

          if spec.double_backward then
            it('double backward ' .. label, function()
              local xs = make_inputs()
              local probe = {}
              for i, x in ipairs(xs) do probe[i] = chainer.Variable(x) end
              local gys = random_grads(as_list(fn(unpack(probe, 1, #probe))))
              local ggxs = {}
              for i, x in ipairs(xs) do
                if is_float(x) and not (spec.no_grads and spec.no_grads[i]) then
                  ggxs[#ggxs + 1] = T.random.uniform(-1, 1, x.shape, x.dtype)
                end
              end
              local tol = M.backward_tol(dtype, spec.backward_tol)
              M.run_double_backward(fn, xs, gys, ggxs, { eps = spec.eps, atol = tol.atol, rtol = tol.rtol })
            end)
          end
        end
      end
    end
  end)
end

return M
