-- gradient_check.lua: numerical gradients and the checks every function's
-- spec uses.
--
--   gradient_check.numerical_grad(f, inputs, grad_outputs, {eps = 1e-3,
--       detect_nondifferentiable = false, diff_atol = 0, diff_rtol = 1e-2})
--   gradient_check.check_backward(func, x_data, y_grad, params,
--       {eps =, atol =, rtol =, dtype =, no_grads =, detect_nondifferentiable =})
--   gradient_check.check_double_backward(func, x_data, y_grad, x_grad_grad,
--       params, {params_grad_grad =, eps =, atol =, rtol =, dtype =,
--       detect_nondifferentiable =})
--   gradient_check.NondifferentiableError (NondifferentiableError.is(err))
--
-- Finite differences are central and accumulated in float64; by default the
-- numerical pass also runs the function on float64 copies of the inputs and
-- parameters (opts.dtype = false keeps their own dtypes), so float32
-- functions are checked against an accurate reference.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local backprop = require 'chainer.backprop'
local testing = require 'chainer.testing'

local C, ffi = T.C, T.ffi
local M = {}

local dbox = ffi.new('double[1]')
local function get_flat(t, i)
  T.check(C.ch_get_flat(t.ptr, i, dbox), 3)
  return dbox[0]
end
local function set_flat(t, i, v)
  T.check(C.ch_set_flat(t.ptr, i, v), 3)
end

local function is_float(t) return T.is_float_code[t.ptr.dt] == true end

local function as_table(v)
  if v == nil then return {} end
  if T.is_tensor(v) or (type(v) == 'table' and v._is_variable) then return { v } end
  return v
end

local function data_of(v)
  if type(v) == 'table' and v._is_variable then return v._data end
  return v
end

-- Sum over outputs of <y_j(+eps) - y_j(-eps), gy_j>, in float64.
local function directional(ys1, ys2, gys)
  local s = 0
  for j = 1, math.max(#ys1, #ys2) do
    local gy = gys[j]
    if gy ~= nil then
      local d = T.sub(ys1[j], ys2[j])
      s = s + T.sum(T.mul(d, gy:astype('float64'))):item()
    end
  end
  return s
end

-- Evaluates f and returns float64 copies of its outputs (copies, because an
-- output may be a view of an input that is about to be perturbed).
local function eval_copies(f)
  local ys = f()
  if ys == nil then error('numerical_grad: f returned nothing (expected a table of tensors)', 3) end
  ys = as_table(ys)
  local out = {}
  for j = 1, #ys do
    local y = data_of(ys[j])
    if y ~= nil then out[j] = y:astype('float64') end
  end
  return out
end

-- NondifferentiableError: raised by numerical_grad with
-- detect_nondifferentiable when f is not differentiable at the inputs (a
-- table error; tostring gives the message).  testing's dodge_nondifferentiable
-- catches it and draws new inputs.
local NondifferentiableError = { __name = 'NondifferentiableError' }
NondifferentiableError.__index = NondifferentiableError
NondifferentiableError.__tostring = function(e) return 'NondifferentiableError: ' .. e.message end
M.NondifferentiableError = NondifferentiableError

-- Whether err (from pcall) is a NondifferentiableError.
function NondifferentiableError.is(err) return getmetatable(err) == NondifferentiableError end

local function nondifferentiable(message)
  error(setmetatable({ message = message }, NondifferentiableError), 0)
end

-- Chainer's check on the five samples y(x - eps), y(x - eps/2), y(x),
-- y(x + eps/2), y(x + eps) of each output: an element whose finiteness
-- changes, or that a quadratic does not fit (root-mean-square residual
-- above diff_atol + diff_rtol * its range), marks a non-differentiable point.
-- The residual of a least-squares quadratic through five equally spaced
-- points is its projection on the two higher orthogonal polynomials,
-- (-1, 2, 0, -2, 1) (norm^2 10) and (1, -4, 6, -4, 1) (norm^2 70).
local function check_differentiable(yss, where, eps, diff_atol, diff_rtol)
  for j = 1, #yss[1] do
    local y = {}
    for k = 1, 5 do y[k] = yss[k][j] end
    if y[1].size > 0 then
      local finite1 = T.isfinite(y[1])
      local all_finite = finite1:all():item()
      for k = 2, 5 do
        local fk = T.isfinite(y[k])
        if not T.equal(fk, finite1):all():item() then
          nondifferentiable(string.format('tried to compute the numerical gradient at a non-differentiable point ' ..
            '(%s, output %d, eps %g): the outputs are finite on one side only', where, j, eps))
        end
        all_finite = all_finite and fk:all():item()
      end
      if all_finite then
        local c3 = -y[1] + y[2] * 2 - y[4] * 2 + y[5]
        local c4 = y[1] - y[2] * 4 + y[3] * 6 - y[4] * 4 + y[5]
        local res = T.sqrt((c3 * c3 / 10 + c4 * c4 / 70) / 5)
        local ymax, ymin = y[1], y[1]
        for k = 2, 5 do ymax, ymin = T.maximum(ymax, y[k]), T.minimum(ymin, y[k]) end
        local bad = T.logical_and(T.greater(res, (ymax - ymin) * diff_rtol + diff_atol), T.not_equal(ymax, ymin))
        if bad:any():item() then
          nondifferentiable(string.format('tried to compute the numerical gradient at a non-differentiable point ' ..
            '(%s, output %d, eps %g): a quadratic does not fit y at x - eps, x - eps/2, x, x + eps/2, x + eps ' ..
            '(diff_atol %g, diff_rtol %g)', where, j, eps, diff_atol, diff_rtol))
        end
      end
    end
  end
end

-- Central-difference gradients of sum_j <f()_j, grad_outputs_j> with
-- respect to each input tensor (perturbed in place and restored).  Returns
-- a table of float64 tensors shaped like the inputs.  With
-- detect_nondifferentiable (Chainer's option), f is sampled at five points
-- per element, the gradient is the fourth-order difference
-- (y(-eps) - 8 y(-eps/2) + 8 y(+eps/2) - y(+eps)) / (6 eps), and a
-- non-differentiable point raises NondifferentiableError.
local NUMERICAL_SIGNATURE = args.signature({ 'eps' }, { 'detect_nondifferentiable', 'diff_atol', 'diff_rtol' })

function M.numerical_grad(f, inputs, grad_outputs, ...)
  local o = args.parse_at(2, 'numerical_grad', NUMERICAL_SIGNATURE, select('#', ...), ...)
  local eps = o.eps or 1e-3
  local detect = o.detect_nondifferentiable == true
  local diff_atol, diff_rtol = o.diff_atol or 0, o.diff_rtol or 1e-2
  inputs = as_table(inputs)
  grad_outputs = as_table(grad_outputs)
  local gys = {}
  for j, g in pairs(grad_outputs) do gys[j] = data_of(g) end
  local grads = {}
  for k = 1, #inputs do
    local x = data_of(inputs[k])
    if not T.is_tensor(x) then
      error(string.format('numerical_grad: inputs[%d] must be a tensor (got %s)', k, type(x)), 2)
    end
    local g = T.zeros(x.shape, 'float64')
    if is_float(x) then
      local n = tonumber(x.ptr.numel)
      local function at(i, orig, delta)
        set_flat(x, i, orig + delta)
        local ys = eval_copies(f)
        set_flat(x, i, orig)
        return ys
      end
      for i = 0, n - 1 do
        local orig = get_flat(x, i)
        if detect then
          local yss = { at(i, orig, -eps), at(i, orig, -eps / 2), at(i, orig, 0), at(i, orig, eps / 2),
            at(i, orig, eps) }
          check_differentiable(yss, string.format('input %d, flat index %d', k, i), eps, diff_atol, diff_rtol)
          -- (y(-eps) - 8 y(-eps/2) + 8 y(+eps/2) - y(+eps)) / (6 eps)
          local num = directional(yss[4], yss[2], gys) * 8 - directional(yss[5], yss[1], gys)
          set_flat(g, i, num / (6 * eps))
        else
          local ys1, ys2 = at(i, orig, eps), at(i, orig, -eps)
          set_flat(g, i, directional(ys1, ys2, gys) / (2 * eps))
        end
      end
    end
    grads[k] = g
  end
  return grads
end

local function pack(...) return { n = select('#', ...), ... } end

-- Output Variables of func applied to the input Variables, as a table.
local function call_func(func, xs)
  local r = pack(func(unpack(xs)))
  local ys = {}
  if r.n == 1 and type(r[1]) == 'table' and not r[1]._is_variable then r = r[1] end
  for i = 1, (r.n or #r) do
    local y = r[i]
    if y ~= nil then
      if T.is_tensor(y) then y = Variable.new_var(y, false) end
      ys[#ys + 1] = y
    end
  end
  return ys
end

local function fmt_err(prefix, err)
  return prefix .. '\n' .. tostring(err):gsub('^[^\n]*assert_allclose: ', '')
end

-- Checks func's backward against finite differences.
-- func(x1, x2, ...) takes Variables and returns Variable(s); x_data is a
-- tensor or a table of tensors; y_grad the upstream gradients (nil for a
-- one-element output, which gets 1); params Variables also checked.
-- Chainer's (func, x_data, y_grad, params, eps, atol, rtol, no_grads, dtype):
-- the ones after y_grad positional or by name, check_backward(f, x, gy, {atol = ...}).
local CHECK_SIGNATURE = args.signature { 'params', 'eps', 'atol', 'rtol', 'no_grads', 'dtype',
  'detect_nondifferentiable' }
local DOUBLE_SIGNATURE = args.signature { 'params', 'params_grad_grad', 'eps', 'atol', 'rtol', 'no_grads',
  'dtype', 'detect_nondifferentiable' }

function M.check_backward(func, x_data, y_grad, ...)
  local opts = args.parse_at(2, 'check_backward', CHECK_SIGNATURE, select('#', ...), ...)
  local params = opts.params
  local eps = opts.eps or 1e-3
  local atol, rtol = opts.atol or 1e-5, opts.rtol or 1e-4
  local num_dtype = opts.dtype
  if num_dtype == nil then num_dtype = 'float64' end
  x_data = as_table(x_data)
  params = as_table(params)
  local no_grads = opts.no_grads or {}
  local n = #x_data

  -- analytic gradients
  local xs = {}
  for i = 1, n do
    local d = data_of(x_data[i])
    if not T.is_tensor(d) then
      error(string.format('check_backward: x_data[%d] must be a tensor (got %s)', i, type(d)), 2)
    end
    local rg = is_float(d) and not no_grads[i]
    xs[i] = Variable.new_var(d, rg)
  end
  for j = 1, #params do params[j]:cleargrad() end
  local ys = call_func(func, xs)
  if #ys == 0 then error('check_backward: func returned no Variable', 2) end
  local gys = {}
  if y_grad == nil then
    if #ys ~= 1 or ys[1]._data.size ~= 1 then
      error('check_backward: y_grad is nil, so func must return one one-element Variable', 2)
    end
    gys[1] = T.ones_like(ys[1]._data)
  else
    local yg = as_table(y_grad)
    for j = 1, #ys do
      local g = data_of(yg[j])
      gys[j] = g ~= nil and g or T.zeros_like(ys[j]._data)
    end
  end
  backprop.backward(ys, gys)

  local analytic = {}
  for i = 1, n do
    if xs[i]._requires_grad then
      analytic[#analytic + 1] = { 'input ' .. i, xs[i].grad, x_data[i] }
    end
  end
  for j = 1, #params do
    local p = params[j]
    analytic[#analytic + 1] = { 'parameter ' .. (p.name or j), p.grad, p._data }
  end

  -- numerical gradients (on float64 copies unless dtype == false)
  local function cast(t)
    if num_dtype and is_float(t) then return t:astype(num_dtype) end
    return t:copy()
  end
  local nx = {}
  local nvars = {}
  for i = 1, n do
    nx[i] = cast(data_of(x_data[i]))
    nvars[i] = Variable.new_var(nx[i], is_float(nx[i]))
  end
  local saved = {}
  local targets = {}
  for i = 1, n do if xs[i]._requires_grad then targets[#targets + 1] = nx[i] end end
  for j = 1, #params do
    local p = params[j]
    saved[j] = p._data
    local c = cast(p._data)
    rawset(p, '_data', c)
    targets[#targets + 1] = c
  end
  local ngys = {}
  for j = 1, #gys do ngys[j] = gys[j]:astype('float64') end
  local function f()
    local out = call_func(func, nvars)
    local r = {}
    for j = 1, #out do r[j] = out[j]._data end
    return r
  end
  local ok, numeric = pcall(M.numerical_grad, f, targets, ngys,
    { eps = eps, detect_nondifferentiable = opts.detect_nondifferentiable, diff_rtol = rtol })
  for j = 1, #params do rawset(params[j], '_data', saved[j]) end
  if not ok then error(numeric, 0) end

  for k = 1, #analytic do
    local name, g, ref = analytic[k][1], analytic[k][2], analytic[k][3]
    if g == nil then g = T.zeros(data_of(ref).shape, 'float64') end
    local good, err = pcall(testing.assert_allclose, g, numeric[k], { atol = atol, rtol = rtol })
    if not good then
      error(fmt_err(string.format('check_backward: the gradient of %s differs from the numerical gradient ' ..
        '(x: backward, y: numerical)', name), err), 2)
    end
  end
  return true
end

-- Checks the second-order gradients: the gradients of
-- sum(gx * x_grad_grad) with respect to the inputs and y_grad.
function M.check_double_backward(func, x_data, y_grad, x_grad_grad, ...)
  local opts = args.parse_at(2, 'check_double_backward', DOUBLE_SIGNATURE, select('#', ...), ...)
  local params = opts.params
  x_data = as_table(x_data)
  params = as_table(params)
  local n = #x_data
  local ny = y_grad ~= nil and #as_table(y_grad) or 0
  local function first_order(...)
    local args = { ... }
    local xs, gys = {}, {}
    for i = 1, n do xs[i] = args[i] end
    for j = 1, ny do gys[j] = args[n + j] end
    local ys = call_func(func, xs)
    local wrt = {}
    for i = 1, n do wrt[i] = xs[i] end
    for j = 1, #params do wrt[n + j] = params[j] end
    local g = backprop.grad(ys, wrt, { grad_outputs = ny > 0 and gys or nil, enable_double_backprop = true })
    local out = {}
    for k = 1, #wrt do
      local gk = g[k]
      if gk == nil then gk = Variable.new_var(T.zeros_like(wrt[k]._data), false) end
      out[k] = gk
    end
    return unpack(out)
  end
  local inputs = {}
  for i = 1, n do inputs[i] = x_data[i] end
  local yg = as_table(y_grad)
  for j = 1, ny do inputs[n + j] = data_of(yg[j]) end
  local ggs = {}
  local xgg = as_table(x_grad_grad)
  for i = 1, n do ggs[i] = data_of(xgg[i]) end
  local pgg = as_table(opts.params_grad_grad)
  for j = 1, #params do ggs[n + j] = data_of(pgg[j]) or T.zeros_like(params[j]._data) end
  for k = 1, n + #params do
    if ggs[k] == nil then
      local ref = k <= n and data_of(x_data[k]) or params[k - n]._data
      ggs[k] = T.zeros_like(ref)
    end
  end
  local sub = { eps = opts.eps, no_grads = opts.no_grads, dtype = opts.dtype,
    atol = opts.atol or 1e-4, rtol = opts.rtol or 1e-3, detect_nondifferentiable = opts.detect_nondifferentiable }
  local ok, err = pcall(M.check_backward, first_order, inputs, ggs, params, sub)
  if not ok then
    if NondifferentiableError.is(err) then error(err, 0) end
    error((tostring(err):gsub('check_backward:', 'check_double_backward:')), 2)
  end
  return true
end

return M
