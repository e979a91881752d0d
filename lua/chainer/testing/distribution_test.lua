-- testing/distribution_test.lua: chainer.testing.distribution_unittest, a
-- test case class that checks a distribution (one of
-- chainer.distributions or a user's own Distribution subclass) on busted
-- (docs/testing.md).  Chainer's compares with scipy.stats; here the
-- reference is a table of scipy-named functions on numbers, and what needs
-- no reference is checked against the distribution's other methods.
--
--   local NormalTest = testing.distribution_unittest:extend('NormalTest')
--   function NormalTest:setup_configure()
--     self.dist = function(p) return D.Normal(p.loc, p.scale) end
--     local loc = T.random.uniform(-1, 1, self.shape, 'float64')
--     local scale = T.random.uniform(0.5, 2, self.shape, 'float64')
--     self.params = { loc = loc, scale = scale }
--     self.reference = { logpdf = function(x, p) ... end, mean = function(p) return p.loc end, ... }
--     self.test_targets = { 'batch_shape', 'log_prob', 'prob', 'cdf', 'icdf', 'mean', 'sample', ... }
--   end
--   testing.parameterize(testing.product{ shape = { {3, 2}, {} }, is_variable = { true, false } })(NormalTest)
--
-- Fields (set in setup_configure; Chainer's names):
--   dist           function(params) -> the distribution
--   params         its parameters by name (tensors; Variables when is_variable)
--   shape          the expected batch_shape (default {3, 2}); event_shape
--                  (default {}); sample_shape (default {3, 2}); support
--                  (default 'real'); continuous (default true)
--   test_targets   the checks to run, Chainer's names: batch_shape, cdf,
--                  entropy, event_shape, icdf, log_cdf, log_prob,
--                  log_survival, mean, prob, sample, stddev, support,
--                  survival, variance
--   reference      scipy-named functions of one point and one batch
--                  element's parameters (numbers; a list where an element
--                  has more dimensions): logpdf/pdf (logpmf/pmf when not
--                  continuous), cdf, logcdf, sf, logsf, ppf, and mean, var,
--                  std, entropy of the parameters alone
--   reference_params  the parameters the reference takes (default params)
--   check_options  {atol, rtol} of the comparisons (default 1e-5, 1e-4)
--   n_samples      draws for the checks from samples (default 20000);
--                  their bounds are k = 5 standard errors of the mean, and
--                  rel_var (default 0.1) of the variance
-- Methods: sample_for_test() (points in the support, shaped sample_shape ..
-- shape .. event_shape; defaults for 'real' and 'positive').
-- Checks without a reference: prob = exp(log_prob), log_cdf = log(cdf),
-- survival = 1 - cdf, log_survival = log(survival), stddev =
-- sqrt(variance), icdf(cdf(x)) = x and cdf(icdf(u)) = u, the density as the
-- slope of the cdf (one-dimensional continuous), sample moments against
-- mean and variance, entropy against the Monte Carlo -E[log_prob].
-- Each test runs on the CPU with the random stream seeded from its name.
local class = require 'chainer.class'
local T = require 'chainer.tensor'
local function_spec = require 'chainer.testing.function_spec'
local array = require 'chainer.testing'   -- assert_allclose

local M = {}

local TARGETS = { 'batch_shape', 'cdf', 'entropy', 'event_shape', 'icdf', 'log_cdf', 'log_prob', 'log_survival',
  'mean', 'prob', 'sample', 'stddev', 'support', 'survival', 'variance' }
local IS_TARGET = {}
for _, t in ipairs(TARGETS) do IS_TARGET[t] = true end

local DistributionTest = class.Object:extend('distribution_unittest')
M.distribution_unittest = DistributionTest

---------------------------------------------------------------------------
-- values
---------------------------------------------------------------------------
local function data(v)
  if type(v) == 'table' and v._is_variable then v = v.array end
  return v
end

local function f64(v) return data(v):astype('float64') end

local function concat(...)
  local out = {}
  for _, t in ipairs({ ... }) do for _, d in ipairs(t) do out[#out + 1] = d end end
  return out
end

local numel = require('chainer.utils.array').size_of_shape

local function shape_text(s) return T.shape_str(s) end

local function same_shape(a, b) return shape_text(a) == shape_text(b) end

-- Whether distribution d's class defines `method` itself (the base class's
-- cdf, icdf and sample_n only raise).
local function defines(d, method)
  local base = require('chainer.distributions.distribution').Distribution
  local m = getmetatable(d)[method]
  return m ~= nil and m ~= base[method]
end

---------------------------------------------------------------------------
-- setup
---------------------------------------------------------------------------
function DistributionTest:init()
  self.shape = { 3, 2 }
  self.event_shape = {}
  self.sample_shape = { 3, 2 }
  self.support = 'real'
  self.continuous = true
  self.is_variable = false
  self.test_targets = {}
  self.check_options = {}
  self.n_samples = 20000
  self.rel_var = 0.1
end

function DistributionTest:setup_configure()
  error(string.format('%s: define setup_configure() (it sets dist, params and test_targets)',
    tostring(getmetatable(self).__name)), 0)
end

-- Points in the support for log_prob, cdf, ...
function DistributionTest:sample_for_test()
  local shape = concat(self.sample_shape, self.shape, self.event_shape)
  if self.support == 'real' then return T.random.normal(0, 1, shape, 'float64') end
  if self.support == 'positive' then return T.random.uniform(0.1, 3, shape, 'float64') end
  error(string.format("%s: define sample_for_test() (no default for the support '%s')",
    tostring(getmetatable(self).__name), tostring(self.support)), 0)
end

-- Runs setup_configure and checks what it set.
function DistributionTest:_configure()
  self:setup_configure()
  local name = tostring(getmetatable(self).__name)
  if type(self.dist) ~= 'function' and not (type(self.dist) == 'table' and getmetatable(self.dist)) then
    error(name .. ': setup_configure must set self.dist, a function(params) returning the distribution', 0)
  end
  if type(self.params) ~= 'table' then error(name .. ': setup_configure must set self.params, a table', 0) end
  local bad = {}
  for _, t in ipairs(self.test_targets) do
    if not IS_TARGET[t] then bad[#bad + 1] = tostring(t) end
  end
  if #bad > 0 then
    error(string.format('%s: invalid test target(s) %s (expected among: %s)', name, table.concat(bad, ', '),
      table.concat(TARGETS, ', ')), 0)
  end
  if self.is_variable then
    local Variable = require('chainer.variable')
    for k, v in pairs(self.params) do
      if T.is_tensor(v) then self.params[k] = Variable(v) end
    end
  end
end

function DistributionTest:_dist() return self.dist(self.params) end

function DistributionTest:_close(got, want, what)
  local ok, err = pcall(array.assert_allclose, got, want, self.check_options)
  if not ok then error(string.format('%s: %s\n%s', tostring(getmetatable(self).__name), what, tostring(err)), 0) end
end

---------------------------------------------------------------------------
-- the reference, one batch element at a time
---------------------------------------------------------------------------
-- The reference parameters of each batch element: a list of tables of
-- numbers (or lists, for parameters with more dimensions than the batch).
function DistributionTest:_element_params()
  local b = numel(self.shape)
  local out = {}
  for i = 1, b do out[i] = {} end
  for k, v in pairs(self.reference_params or self.params) do
    if type(v) == 'number' then
      for i = 1, b do out[i][k] = v end
    else
      local t = f64(v)
      if t.size < b or t.size % b ~= 0 then t = t:broadcast_to(self.shape):contiguous() end
      local per = t.size / b
      local flat = t:reshape({ t.size }):tolist()
      for i = 1, b do
        if per == 1 then
          out[i][k] = flat[i]
        else
          local row = {}
          for j = 1, per do row[j] = flat[(i - 1) * per + j] end
          out[i][k] = row
        end
      end
    end
  end
  return out
end

-- ref(x, params) at each point of x (sample_shape .. shape .. event_shape)
-- and its batch element's parameters: a float64 tensor of sample_shape ..
-- shape.
function DistributionTest:_reference_at(ref, x)
  local ps = self:_element_params()
  local b, e = numel(self.shape), numel(self.event_shape)
  local flat = f64(x):contiguous():reshape({ data(x).size }):tolist()
  local s = #flat / (b * e)
  local out = {}
  for si = 0, s - 1 do
    for bi = 1, b do
      local at = (si * b + bi - 1) * e
      local point
      if #self.event_shape == 0 then
        point = flat[at + 1]
      else
        point = {}
        for j = 1, e do point[j] = flat[at + j] end
      end
      out[#out + 1] = ref(point, ps[bi])
    end
  end
  return T.array(out, 'float64'):reshape(concat(self.sample_shape, self.shape))
end

-- ref(params) for each batch element: a float64 tensor of shape .. its
-- own dimensions (a list from ref).
function DistributionTest:_reference_of(ref, like)
  local ps = self:_element_params()
  local out = {}
  for _, p in ipairs(ps) do
    local v = ref(p)
    if type(v) == 'table' then
      for _, x in ipairs(v) do out[#out + 1] = x end
    else
      out[#out + 1] = v
    end
  end
  return T.array(out, 'float64'):reshape(data(like).shape)
end

---------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------
local checks = {}

local function expect_shape(self, v, shape, what)
  local got = data(v).shape
  if not same_shape(got, shape) then
    error(string.format('%s: %s has shape %s, expected %s', tostring(getmetatable(self).__name), what,
      shape_text(got), shape_text(shape)), 0)
  end
end

-- The distribution's field `name` (a shape) against the expected one.
local function check_shape_field(self, name, expected)
  local got = self:_dist()[name]
  if not same_shape(got, expected) then
    error(string.format('%s: %s is %s, expected %s', tostring(getmetatable(self).__name), name,
      shape_text(got), shape_text(expected)), 0)
  end
end

function checks.batch_shape(self) check_shape_field(self, 'batch_shape', self.shape) end
function checks.event_shape(self) check_shape_field(self, 'event_shape', self.event_shape) end

function checks.support(self)
  local got = self:_dist().support
  if got ~= self.support then
    error(string.format("%s: support is '%s', expected '%s'", tostring(getmetatable(self).__name), tostring(got),
      tostring(self.support)), 0)
  end
end

-- A method of points (log_prob, cdf, ...) against the reference `ref_name`.
local function check_points(self, method, ref_name, x)
  local d = self:_dist()
  x = x or self:sample_for_test()
  local got = d[method](d, x)
  expect_shape(self, got, concat(self.sample_shape, self.shape), method)
  local ref = self.reference and self.reference[ref_name]
  if ref then self:_close(got, self:_reference_at(ref, x), method .. ' against the reference ' .. ref_name) end
  return d, x, got
end

function checks.log_prob(self)
  local d, x, lp = check_points(self, 'log_prob', self.continuous and 'logpdf' or 'logpmf')
  -- the density is the slope of the cdf (one-dimensional, continuous)
  if self.continuous and #self.event_shape == 0 and defines(d, 'cdf') then
    local h = 1e-4
    local up, down = d:cdf(f64(x) + h), d:cdf(f64(x) - h)
    local slope = (f64(up) - f64(down)) / (2 * h)
    local ok, err = pcall(array.assert_allclose, T.exp(f64(lp)), slope, { atol = 1e-4, rtol = 1e-3 })
    if not ok then
      error(string.format('%s: exp(log_prob) is not the slope of cdf\n%s', tostring(getmetatable(self).__name),
        tostring(err)), 0)
    end
  end
end

function checks.prob(self)
  local d, x, p = check_points(self, 'prob', self.continuous and 'pdf' or 'pmf')
  self:_close(p, T.exp(f64(d:log_prob(x))), 'prob against exp(log_prob)')
end

function checks.cdf(self)
  local d, x, c = check_points(self, 'cdf', 'cdf')
  local v = f64(c)
  if T.any(T.lt(v, 0)):item() or T.any(T.gt(v, 1)):item() then
    error(tostring(getmetatable(self).__name) .. ': cdf outside [0, 1]: ' .. tostring(v), 0)
  end
  if defines(d, 'icdf') and self.continuous then
    -- round trip where the cdf is not flat at 0 or 1
    local inner = T.logical_and(T.gt(v, 1e-4), T.lt(v, 1 - 1e-4))
    local back = f64(d:icdf(c))
    self:_close(T.where(inner, back, f64(x)), f64(x), 'icdf(cdf(x)) against x')
  end
end

function checks.icdf(self)
  local d = self:_dist()
  local u = T.random.uniform(1e-5, 1 - 1e-5, concat(self.sample_shape, self.shape), 'float64')
  local _, _, q = check_points(self, 'icdf', 'ppf', u)
  if defines(d, 'cdf') then self:_close(d:cdf(q), u, 'cdf(icdf(u)) against u') end
end

function checks.log_cdf(self)
  local d, x, lc = check_points(self, 'log_cdf', 'logcdf')
  self:_close(lc, T.log(f64(d:cdf(x))), 'log_cdf against log(cdf)')
end

function checks.survival(self)
  local d, x, s = check_points(self, 'survival_function', 'sf')
  self:_close(s, 1 - f64(d:cdf(x)), 'survival_function against 1 - cdf')
end

function checks.log_survival(self)
  local d, x, ls = check_points(self, 'log_survival_function', 'logsf')
  self:_close(ls, T.log(f64(d:survival_function(x))), 'log_survival_function against log(survival_function)')
end

-- A property (mean, variance, ...) against the reference `ref_name`.
local function check_property(self, name, ref_name)
  local d = self:_dist()
  local got = d[name]
  expect_shape(self, got, concat(self.shape, self.event_shape), name)
  local ref = self.reference and self.reference[ref_name]
  if ref then self:_close(got, self:_reference_of(ref, got), name .. ' against the reference ' .. ref_name) end
  return d, got
end

-- Draws n_samples (n, sample_shape .. shape .. event_shape) as float64.
local function draws(self, d)
  local x = d:sample(concat({ self.n_samples }, self.sample_shape))
  expect_shape(self, x, concat({ self.n_samples }, self.sample_shape, self.shape, self.event_shape), 'sample')
  return f64(x)
end

-- Sample mean within k standard errors of `mean`, sample variance within
-- rel_var of `var` (elementwise; both broadcast over the sample shape).
local function check_moments(self, x, mean, var, what)
  local n = x.shape[1]
  local m = T.mean(x, { axis = 0 })
  local v = T.var(x, { axis = 0 })
  mean, var = f64(mean):broadcast_to(m.shape), f64(var):broadcast_to(m.shape)
  local me, ve = m:reshape({ m.size }):tolist(), v:reshape({ v.size }):tolist()
  local mu, s2 = mean:contiguous():reshape({ m.size }):tolist(), var:contiguous():reshape({ m.size }):tolist()
  for i = 1, #me do
    local bound = 5 * math.sqrt(s2[i] / n)
    if math.abs(me[i] - mu[i]) > bound then
      error(string.format('%s: %s: sample mean[%d] = %.6g, expected %.6g within %.3g (5 standard errors)',
        tostring(getmetatable(self).__name), what, i - 1, me[i], mu[i], bound), 0)
    end
    if math.abs(ve[i] - s2[i]) > self.rel_var * s2[i] then
      error(string.format('%s: %s: sample variance[%d] = %.6g, expected %.6g within %g%%',
        tostring(getmetatable(self).__name), what, i - 1, ve[i], s2[i], self.rel_var * 100), 0)
    end
  end
end

function checks.mean(self)
  local d, mean = check_property(self, 'mean', 'mean')
  if defines(d, 'sample_n') then check_moments(self, draws(self, d), mean, d.variance, 'mean') end
end

function checks.variance(self)
  local d, var = check_property(self, 'variance', 'var')
  if defines(d, 'sample_n') then check_moments(self, draws(self, d), d.mean, var, 'variance') end
end

function checks.stddev(self)
  local d, sd = check_property(self, 'stddev', 'std')
  self:_close(sd, T.sqrt(f64(d.variance)), 'stddev against sqrt(variance)')
end

function checks.entropy(self)
  local d = self:_dist()
  local ent = d.entropy
  expect_shape(self, ent, self.shape, 'entropy')
  local ref = self.reference and self.reference.entropy
  if ref then self:_close(ent, self:_reference_of(ref, ent), 'entropy against the reference entropy') end
  -- Monte Carlo: -E[log p(X)], within 5 standard errors
  if defines(d, 'sample_n') then
    local x = d:sample(self.n_samples)
    local nlp = -f64(d:log_prob(x))
    local sd = T.std(nlp, { axis = 0 })
    local var = sd * sd
    local xs = nlp:reshape(concat({ self.n_samples }, self.shape))
    local n = self.n_samples
    local m = T.mean(xs, { axis = 0 }):reshape({ -1 }):tolist()
    local want = f64(ent):contiguous():reshape({ -1 }):tolist()
    local se = var:reshape({ -1 }):tolist()
    for i = 1, #m do
      local bound = 5 * math.sqrt(se[i] / n) + 1e-9
      if math.abs(m[i] - want[i]) > bound then
        error(string.format('%s: entropy[%d] = %.6g, Monte Carlo -E[log_prob] %.6g (bound %.3g)',
          tostring(getmetatable(self).__name), i - 1, want[i], m[i], bound), 0)
      end
    end
  end
end

function checks.sample(self)
  local d = self:_dist()
  local x = draws(self, d)
  local ref = self.reference or {}
  local mean = ref.mean and self:_reference_of(ref.mean, d.mean) or d.mean
  local var
  if ref.var then var = self:_reference_of(ref.var, d.mean)
  elseif ref.std then var = self:_reference_of(ref.std, d.mean) ^ 2
  else var = d.variance end
  check_moments(self, x, mean, var, 'sample')
end

-- t:run_test(target): configures t and runs one check (what each
-- registered test does; also for running a check outside busted).
function DistributionTest:run_test(target)
  if not IS_TARGET[target] then
    error(string.format('distribution_unittest:run_test: unknown target %s (expected among: %s)', tostring(target),
      table.concat(TARGETS, ', ')), 2)
  end
  self:_configure()
  checks[target](self)
end

---------------------------------------------------------------------------
-- registration
---------------------------------------------------------------------------
local function param_text(param)
  return require('chainer.testing.parameterized').show(param or {})
end

local function instance(cls, param)
  local self = cls()
  for k, v in pairs(param or {}) do self[k] = v end
  return self
end

-- One busted test per target the class names (read from an instance made
-- at registration, seeded as the tests are).
function DistributionTest._register_tests(cls, env, param)
  local name = tostring(rawget(cls, '__name'))
  local seed = function_spec.seed_for(name .. param_text(param))
  T.random.seed(seed)
  local probe = instance(cls, param)
  probe:_configure()
  for _, target in ipairs(probe.test_targets) do
    env.it('test ' .. target, function()
      T.random.seed(function_spec.seed_for(name .. param_text(param) .. target))
      instance(cls, param):run_test(target)
    end)
  end
end

-- Class:describe(title): the tests without parameters, in a describe block.
function DistributionTest.describe(cls, title)
  local env = getfenv(2)
  if type(env.describe) ~= 'function' then
    error('distribution_unittest: call describe from a busted spec file (describe is not defined here)', 2)
  end
  env.describe(title or tostring(rawget(cls, '__name')), function() cls._register_tests(cls, env, nil) end)
end

M.TARGETS = TARGETS
return M
