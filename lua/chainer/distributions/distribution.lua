-- distributions/distribution.lua: the Distribution base class, the KL
-- registry (register_kl, kl_divergence, cross_entropy) and the helpers every
-- distribution uses to read and check its parameters.
--
-- Chainer's properties (mean, variance, stddev, entropy, mode, batch_shape,
-- event_shape, params, support and each parameter) are fields here: reading
-- `d.mean` calls the class's `_get_mean(self)` once and caches the result on
-- the instance, as Chainer's cached_property does, so that `d.scale` is the
-- same Variable every time and gradients flow back to the parameters.
local class = require 'chainer.class'
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local F = require 'chainer.functions'

local Distribution = class.Object:extend('Distribution')

local getter_names = setmetatable({}, {
  __index = function(t, k)
    local name = '_get_' .. tostring(k)
    rawset(t, k, name)
    return name
  end,
})

local function name_of(self) return rawget(getmetatable(self), '__name') end

-- The methods that take a point x check it (and their self) before the
-- formula runs, so that a bad x is named here rather than deep inside an op.
local POINT_METHODS = {
  log_prob = true, prob = true, cdf = true, icdf = true, log_cdf = true, survival_function = true,
  log_survival_function = true, perplexity = true,
}
local checked = setmetatable({}, { __mode = 'k' })   -- method -> its checking wrapper

local function checking(name, method)
  local w = checked[method]
  if w then return w end
  w = function(self, x, ...)
    if not class.isinstance(self, Distribution) then
      args.fail(string.format("Distribution:%s: call it with ':' (d:%s(x))", name, name), 2)
    end
    if not (T.is_tensor(x) or type(x) == 'number' or (type(x) == 'table' and x._is_variable)) then
      args.fail(string.format('%s:%s: x must be a Variable, a tensor or a number (got %s)', name_of(self), name,
        type(x)), 2)
    end
    -- a Lua number becomes a 0-d tensor of the parameters' dtype, so that
    -- every formula can read x's shape
    if type(x) == 'number' then x = T.array(x, self:_dtype()) end
    return method(self, x, ...)
  end
  checked[method] = w
  return w
end

-- Methods first (through the class chain), then a computed, cached field.
Distribution.__index = function(self, k)
  local cls = getmetatable(self)
  local m = cls[k]
  if m ~= nil then
    if POINT_METHODS[k] and type(m) == 'function' then return checking(k, m) end
    return m
  end
  if type(k) ~= 'string' then return nil end
  local getter = cls[getter_names[k]]
  if getter == nil then return nil end
  local v = getter(self)
  if v ~= nil then rawset(self, k, v) end
  return v
end

local function missing(self, what)
  args.fail(string.format('%s: %s is not defined for this distribution',
    name_of(self), what), 3)
end

---------------------------------------------------------------------------
-- what every distribution inherits
---------------------------------------------------------------------------
function Distribution:_get_event_shape() return {} end

-- Chainer's properties a distribution does not define are errors, not nil.
for _, name in ipairs({ 'batch_shape', 'mean', 'variance', 'mode', 'entropy', 'covariance', 'params', 'support' }) do
  Distribution[getter_names[name]] = function(self) missing(self, name) end
end

-- Chainer's defaults are NotImplementedError; these follow from the
-- definitions wherever the distribution has the ingredient.
function Distribution:_get_stddev() return F.sqrt(self.variance) end

-- Chainer's xp, the array module of the parameters: chainer.tensor on every
-- device.
function Distribution:_get_xp() return T end

-- The float dtype of the parameters: that of the first Variable among the
-- instance's fields (or those of a distribution it wraps).
function Distribution:_dtype()
  for _, v in pairs(self) do
    if type(v) == 'table' and v._is_variable then return v.dtype end
  end
  for _, v in pairs(self) do
    if class.isinstance(v, Distribution) then return v:_dtype() end
  end
  return T.default_float
end

function Distribution:log_prob() missing(self, 'log_prob') end
function Distribution:prob(x) return F.exp(self:log_prob(x)) end
function Distribution:cdf() missing(self, 'cdf') end
function Distribution:icdf() missing(self, 'icdf') end
function Distribution:log_cdf(x) return F.log(self:cdf(x)) end
function Distribution:survival_function(x) return 1 - self:cdf(x) end
function Distribution:log_survival_function(x) return F.log(self:survival_function(x)) end
function Distribution:sample_n() missing(self, 'sample_n') end
function Distribution:perplexity(x) return F.exp(-self:log_prob(x)) end

-- sample(shape): sample_n(prod(shape)) reshaped to shape .. batch .. event.
-- shape is nil (one draw, no leading axis), a number n or a table of sizes.
function Distribution:sample(sample_shape)
  local final = {}
  local n = 1
  if type(sample_shape) == 'number' then
    if sample_shape < 0 or sample_shape % 1 ~= 0 then
      args.fail(string.format('%s:sample: the sample shape must be a non-negative integer (got %s)',
        name_of(self), tostring(sample_shape)), 2)
    end
    n = sample_shape
    final[1] = n
  elseif type(sample_shape) == 'table' then
    for i, s in ipairs(sample_shape) do
      if type(s) ~= 'number' or s < 0 or s % 1 ~= 0 then
        args.fail(string.format('%s:sample: the sample shape must hold non-negative integers (got %s at %d)',
          name_of(self), tostring(s), i), 2)
      end
      n = n * s
      final[#final + 1] = s
    end
  elseif sample_shape ~= nil then
    args.fail(string.format('%s:sample: the sample shape must be nil, a number or a table (got %s)',
      name_of(self), type(sample_shape)), 2)
  end
  for _, s in ipairs(self.batch_shape) do final[#final + 1] = s end
  for _, s in ipairs(self.event_shape) do final[#final + 1] = s end
  return F.reshape(self:sample_n(n), final)
end

function Distribution:__tostring()
  return string.format('%s(batch_shape=%s, event_shape=%s)', name_of(self), T.shape_str(self.batch_shape),
    T.shape_str(self.event_shape))
end

---------------------------------------------------------------------------
-- helpers for the distributions' constructors
---------------------------------------------------------------------------
local H = {}


-- A parameter as a float Variable: Variables stay as they are (so gradients
-- reach them), tensors are wrapped, Lua numbers and nested lists become
-- tensors of the default float dtype.
function H.param(fn, name, v)
  if type(v) == 'number' or (type(v) == 'table' and not T.is_tensor(v) and not v._is_variable
      and getmetatable(v) == nil and v[1] ~= nil) then
    v = T.array(v, T.default_float)
  end
  if v == nil then
    args.fail(string.format('%s: %s is required', fn, name), 4)
  end
  local d = args.float_array(fn, name, v, 4)
  if type(v) == 'table' and v._is_variable then return v end
  return Variable(d)
end

-- Broadcasts parameters (Variables) to one shape, with the constructor's name
-- in the error.
function H.broadcast(fn, names, ...)
  local vs = { ... }
  local shape = {}
  for k, v in ipairs(vs) do
    local s = v.shape
    local n = math.max(#s, #shape)
    local r = {}
    for i = 1, n do
      local a = s[#s - n + i] or 1
      local b = shape[#shape - n + i] or 1
      if a ~= b and a ~= 1 and b ~= 1 then
        args.fail(string.format('%s: the shapes of %s do not broadcast (%s has shape %s, the others %s)',
          fn, table.concat(names, ', '), names[k], T.shape_str(s), T.shape_str(shape)), 4)
      end
      r[i] = a == 1 and b or a
    end
    shape = r
  end
  for k, v in ipairs(vs) do
    local same = #v.shape == #shape
    if same then for i = 1, #shape do if v.shape[i] ~= shape[i] then same = false end end end
    if not same then vs[k] = F.broadcast_to(v, shape) end
  end
  return unpack(vs, 1, #vs)
end

-- validate_args checks: each reads the parameter's values (a device sync),
-- so {validate_args = false} skips them.
local function check(fn, name, v, ok, what)
  local d = v.array
  if not T.all(ok(d)):item() then
    args.fail(string.format('%s: %s must be %s (got values from %g to %g)', fn, name, what,
      T.min(d):item(), T.max(d):item()), 4)
  end
end
function H.positive(fn, name, v)
  check(fn, name, v, function(d) return T.gt(d, 0) end, 'positive')
end
function H.finite(fn, name, v)
  check(fn, name, v, function(d) return T.isfinite(d) end, 'finite')
end
function H.in_unit(fn, name, v)
  check(fn, name, v, function(d) return T.logical_and(T.ge(d, 0), T.le(d, 1)) end, 'in [0, 1]')
end

-- Probabilities along the last axis: in [0, 1] and summing to 1 (within
-- 1e-3 in float32 and float16, 1e-8 in float64).
function H.simplex(fn, name, v)
  H.in_unit(fn, name, v)
  local sums = T.sum(v.array:astype('float64'), { axis = -1 })
  local tol = v.dtype == 'float64' and 1e-8 or 1e-3
  local err = T.max(T.abs(sums - 1)):item()
  if err > tol then
    args.fail(string.format('%s: %s must sum to 1 along its last axis (off by up to %g)', fn, name, err), 4)
  end
end

-- The options every constructor reads; `extra` names its own options.
function H.options(fn, opts, accepted)
  opts = args.options(fn, opts, accepted, 3)
  local validate = opts.validate_args
  if validate ~= nil and type(validate) ~= 'boolean' then
    args.fail(string.format('%s: validate_args must be a boolean (got %s)', fn, type(validate)), 3)
  end
  return opts, validate ~= false
end

-- A shape without its last `drop` axes (1 by default): the batch shape of
-- a parameter whose trailing axes are the event.
function H.leading_shape(shape, drop)
  local s = {}
  for i = 1, #shape - (drop or 1) do s[i] = shape[i] end
  return s
end

-- A sample-shaped tensor {n, batch...} of the parameter's dtype and device.
function H.sample_shape(n, v)
  if v.shape then v = v.shape end
  local s = { n }
  for _, d in ipairs(v) do s[#s + 1] = d end
  return s
end

-- x log x, with 0 log 0 = 0 (and a zero gradient there, as Chainer's
-- _modified_xlogx).
function H.xlogx(x)
  local positive = T.gt(x.array, 0)
  local safe = F.where(positive, x, T.ones(x.shape, x.dtype))
  return F.where(positive, x * F.log(safe), T.zeros(x.shape, x.dtype))
end

-- A standard exponential draw -log(1 - u), u in [0, 1): always finite.
function H.standard_exponential(shape, like)
  local u = T.random.uniform(0, 1, shape, like.dtype, like.device)
  return -T.log1p(-u)
end

-- Where the mask (a bool tensor) holds, y; elsewhere the constant c.
-- The mask may broadcast to y's shape (x and the parameters broadcast in y).
function H.where_const(mask, y, c)
  if T.shape_str(mask.shape) ~= T.shape_str(y.shape) then mask = T.logical_or(mask, T.zeros(y.shape, 'bool')) end
  return F.where(mask, y, T.full(y.shape, c, y.dtype))
end

-- The array of a Variable-or-tensor value (x in log_prob etc.).
function H.data(x)
  if type(x) == 'table' and x._is_variable then return x.array end
  if type(x) == 'number' then return T.array(x, T.default_float) end
  return x
end

---------------------------------------------------------------------------
-- KL divergence registry
---------------------------------------------------------------------------
local registry = {}   -- Dist1 -> Dist2 -> function(p, q)

local function check_class(fn, name, c)
  if type(c) ~= 'table' or not class.issubclass(c, Distribution) then
    args.fail(string.format('%s: %s must be a Distribution class (got %s)', fn, name, type(c)), 3)
  end
end

-- register_kl(Dist1, Dist2, fn) registers fn; register_kl(Dist1, Dist2)
-- returns a function taking fn, the form of Chainer's decorator.
local function register_kl(Dist1, Dist2, fn)
  check_class('register_kl', 'Dist1', Dist1)
  check_class('register_kl', 'Dist2', Dist2)
  local function register(f)
    if type(f) ~= 'function' then
      args.fail(string.format('register_kl: the KL function must be a function (got %s)', type(f)), 2)
    end
    registry[Dist1] = registry[Dist1] or {}
    registry[Dist1][Dist2] = f
    return f
  end
  if fn ~= nil then return register(fn) end
  return register
end

local function kl_divergence(p, q)
  for i, d in ipairs({ p, q }) do
    if not class.isinstance(d, Distribution) then
      args.fail(string.format('kl_divergence: argument %d must be a Distribution (got %s)', i, type(d)), 2)
    end
  end
  local f = registry[getmetatable(p)] and registry[getmetatable(p)][getmetatable(q)]
  if f == nil then
    args.fail(string.format('kl_divergence: no KL divergence is registered for (%s, %s); see register_kl',
      name_of(p), name_of(q)), 2)
  end
  return f(p, q)
end

-- H(p, q) = H(p) + KL(p || q)
local function cross_entropy(p, q)
  local kl = kl_divergence(p, q)
  return p.entropy + kl
end

return {
  Distribution = Distribution,
  register_kl = register_kl,
  kl_divergence = kl_divergence,
  cross_entropy = cross_entropy,
  helpers = H,
}
