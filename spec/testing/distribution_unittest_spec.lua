-- chainer.testing.distribution_unittest on a user's own distribution (a
-- Rayleigh distribution written on chainer.distributions.Distribution), and
-- proof that its checks catch a wrong formula.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local testing = chainer.testing
local helpers = require 'helpers'
local err_of = helpers.err_of

-- Rayleigh(sigma): density x / s^2 exp(-x^2 / 2 s^2) on x > 0.
local Rayleigh = D.Distribution:extend('Rayleigh')
function Rayleigh:init(sigma) self.sigma = chainer.Variable(sigma) end
function Rayleigh:_get_batch_shape() return self.sigma.shape end
function Rayleigh:_get_support() return 'positive' end
function Rayleigh:_get_mean() return self.sigma * math.sqrt(math.pi / 2) end
function Rayleigh:_get_variance() return self.sigma * self.sigma * ((4 - math.pi) / 2) end
function Rayleigh:_get_entropy() return F.log(self.sigma / math.sqrt(2)) + (1 + 0.5772156649015329 / 2) end
function Rayleigh:log_prob(x)
  local s2 = self.sigma * self.sigma
  return F.log(x) - F.log(s2) - x * x / (s2 * 2)
end
function Rayleigh:cdf(x) return 1 - F.exp(-(x * x) / (self.sigma * self.sigma * 2)) end
function Rayleigh:icdf(u) return self.sigma * F.sqrt(-2 * F.log(1 - u)) end
function Rayleigh:sample_n(n)
  local s = self.sigma.array
  local shape = { n }
  for _, d in ipairs(s.shape) do shape[#shape + 1] = d end
  return self:icdf(T.random.uniform(0, 1, shape, s.dtype))
end

-- The reference: the same distribution written with Lua's math on numbers.
local REFERENCE = {
  logpdf = function(x, p) return math.log(x) - 2 * math.log(p.sigma) - x * x / (2 * p.sigma ^ 2) end,
  pdf = function(x, p) return x / p.sigma ^ 2 * math.exp(-x * x / (2 * p.sigma ^ 2)) end,
  cdf = function(x, p) return 1 - math.exp(-x * x / (2 * p.sigma ^ 2)) end,
  sf = function(x, p) return math.exp(-x * x / (2 * p.sigma ^ 2)) end,
  logsf = function(x, p) return -x * x / (2 * p.sigma ^ 2) end,
  ppf = function(u, p) return p.sigma * math.sqrt(-2 * math.log(1 - u)) end,
  mean = function(p) return p.sigma * math.sqrt(math.pi / 2) end,
  var = function(p) return (4 - math.pi) / 2 * p.sigma ^ 2 end,
  std = function(p) return math.sqrt((4 - math.pi) / 2) * p.sigma end,
  entropy = function(p) return 1 + math.log(p.sigma / math.sqrt(2)) + 0.5772156649015329 / 2 end,
}

local RayleighTest = testing.distribution_unittest:extend('RayleighTest')
function RayleighTest:setup_configure()
  self.dist = function(p) return Rayleigh(p.sigma) end
  self.params = { sigma = T.random.uniform(0.5, 2, self.shape, 'float64') }
  self.reference = REFERENCE
  self.support = 'positive'
  self.test_targets = { 'batch_shape', 'event_shape', 'support', 'log_prob', 'prob', 'cdf', 'icdf', 'log_cdf',
    'survival', 'log_survival', 'mean', 'variance', 'stddev', 'entropy', 'sample' }
end

testing.parameterize(testing.product{ shape = { { 3, 2 }, { 4 } }, sample_shape = { { 3, 2 }, {} } })(RayleighTest)

describe('testing.distribution_unittest', function()
  it('registers one test per target (15 for RayleighTest), each on a fresh instance', function()
    local names = {}
    local env = { it = function(name) names[#names + 1] = name end }
    RayleighTest._register_tests(RayleighTest, env, { shape = { 2 } })
    assert.are.equal(15, #names)
    assert.are.equal('test batch_shape', names[1])
  end)

  -- A distribution with one formula wrong: the check of that formula fails,
  -- and the message names it.
  local function broken(field, value, targets, reference)
    local Broken = Rayleigh:extend('Broken' .. field)
    Broken[field] = value
    local Test = testing.distribution_unittest:extend('BrokenTest')
    function Test:setup_configure()
      self.dist = function(p) return Broken(p.sigma) end
      self.params = { sigma = T.random.uniform(0.5, 2, self.shape, 'float64') }
      self.reference = reference
      self.support = 'positive'
      self.test_targets = targets
    end
    return Test()
  end

  it('catches a wrong variance from samples alone (no reference)', function()
    local t = broken('_get_variance', function(self) return self.sigma * self.sigma end, { 'variance' })
    T.random.seed(3)
    assert.matches('variance: sample variance%[0%] = .* within 10%%', err_of(function() t:run_test('variance') end))
  end)

  it('catches a density that is not the slope of its cdf', function()
    local t = broken('log_prob', function(self, x) return F.log(x) - F.log(self.sigma) end, { 'log_prob' })
    assert.matches('exp%(log_prob%) is not the slope of cdf', err_of(function() t:run_test('log_prob') end))
  end)

  it('catches an icdf that does not invert the cdf, and a disagreement with the reference', function()
    local t = broken('icdf', function(self, u) return self.sigma * F.sqrt(-F.log(1 - u)) end, { 'icdf' })
    assert.matches('cdf%(icdf%(u%)%) against u', err_of(function() t:run_test('icdf') end))
    t = broken('icdf', function(self, u) return self.sigma * F.sqrt(-F.log(1 - u)) end, { 'icdf' }, REFERENCE)
    assert.matches('icdf against the reference ppf', err_of(function() t:run_test('icdf') end))
  end)

  it('catches a wrong entropy by Monte Carlo', function()
    local t = broken('_get_entropy', function(self) return F.log(self.sigma) + 1 end, { 'entropy' })
    T.random.seed(5)
    assert.matches('entropy%[0%] = .*, Monte Carlo %-E%[log_prob%]', err_of(function() t:run_test('entropy') end))
  end)

  it('catches a wrong batch shape and support', function()
    local t = broken('_get_batch_shape', function() return { 7 } end, { 'batch_shape' })
    assert.matches('batch_shape is %(7,%), expected %(3, 2%)', err_of(function() t:run_test('batch_shape') end))
    t = broken('_get_support', function() return 'real' end, { 'support' })
    assert.matches("support is 'real', expected 'positive'", err_of(function() t:run_test('support') end))
  end)

  it('names invalid targets and a missing setup_configure', function()
    local t = broken('_get_support', function() return 'positive' end, { 'support', 'kurtosis' })
    assert.matches('invalid test target%(s%) kurtosis', err_of(function() t:run_test('support') end))
    local Empty = testing.distribution_unittest:extend('EmptyTest')
    assert.matches('EmptyTest: define setup_configure%(%)', err_of(function() Empty():run_test('mean') end))
    assert.matches('run_test: unknown target skew', err_of(function() Empty():run_test('skew') end))
  end)
end)
