-- Specs for the optimizer machinery: Hyperparameter inheritance, mutable
-- hyperparameters, per-parameter rules (overrides, enabled flag), t/epoch,
-- update(lossfun, ...) vs update(), zero-grad reallocation, hooks (order,
-- timing, names, removal), serialization round trips, options and errors,
-- and a small regression trained to a low loss.
local chainer = require 'chainer'
local T = chainer.tensor
local F = require 'chainer.functions'
local O = require 'chainer.optimizers'
local H = require 'chainer.optimizer_hooks'
local optimizer = require 'chainer.optimizer'
local Link = chainer.Link or require('chainer.link').Link
local Variable = chainer.Variable

local helpers = require 'helpers'
local err_of = helpers.err_of

local function close(a, b, tol) return math.abs(a - b) <= (tol or 1e-12) * (1 + math.abs(b)) end

local function assert_list(got, want, tol)
  if T.is_tensor(got) then got = got:tolist() end
  assert.are.equal(#want, #got)
  for i = 1, #want do
    assert(close(got[i], want[i], tol), string.format('element %d: %.17g, expected %.17g', i, got[i], want[i]))
  end
end

-- a link with params a = {1, 2} and b = {3}, float64
local function two_params()
  local m = Link()
  local a = chainer.Parameter(T.array({ 1, 2 }, 'float64'))
  local b = chainer.Parameter(T.array({ 3 }, 'float64'))
  m:add_param('a', a)
  m:add_param('b', b)
  return m, a, b
end

describe('Hyperparameter', function()
  it('falls back to its parent and lists every visible entry', function()
    local parent = optimizer.Hyperparameter()
    parent.lr = 0.1
    parent.momentum = 0.9
    local child = optimizer.Hyperparameter(parent)
    assert.are.equal(0.1, child.lr)
    child.lr = 0.5
    assert.are.equal(0.5, child.lr)
    assert.are.equal(0.1, parent.lr)
    parent.momentum = 0.8
    assert.are.equal(0.8, child.momentum)
    assert.are.same({ lr = 0.5, momentum = 0.8 }, child:get_dict())
    assert.are.equal('Hyperparameter(lr=0.5, momentum=0.8)', tostring(child))
    assert.is_nil(child.nothing)
    assert.matches('parent must be a Hyperparameter', err_of(optimizer.Hyperparameter, 3))
  end)
end)

describe('Optimizer', function()
  it('takes options tables, positional arguments and defaults with Chainer names', function()
    local a = O.Adam()
    assert.are.same({ alpha = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, eta = 1, weight_decay_rate = 0,
      amsgrad = false, adabound = false, final_lr = 0.1, gamma = 1e-3 }, a.hyperparam:get_dict())
    local b = O.Adam(0.0002, 0.5)
    assert.are.equal(0.0002, b.alpha)
    assert.are.equal(0.5, b.beta1)
    assert.are.equal(0.01, O.SGD().lr)
    assert.are.equal(0.5, O.SGD(0.5).lr)
    assert.are.same({ lr = 0.05, momentum = 0.8 }, O.MomentumSGD{ lr = 0.05, momentum = 0.8 }.hyperparam:get_dict())
    assert.is_true(O.AMSGrad().amsgrad)
    assert.is_true(O.AdaBound().adabound)
    assert.are.equal(0.25, O.AdamW{ weight_decay_rate = 0.25 }.weight_decay_rate)
    assert.are.equal(1e-4, O.RMSpropGraves().lr)
    assert.are.equal(1e-16, O.SMORMS3().eps)
    assert.are.equal(0.1, O.MSVAG().lr)
    assert.are.equal(0.95, O.AdaDelta().rho)
  end)

  it('rejects unknown options, extra arguments and non-numbers', function()
    assert.matches("Adam: unknown option 'lr' %(accepted: alpha, beta1", err_of(O.Adam, { lr = 0.1 }))
    assert.matches('SGD: too many positional arguments', err_of(O.SGD, 0.1, 0.2))
    assert.matches('SGD: lr must be a number %(got string%)', err_of(O.SGD, { lr = 'x' }))
    assert.matches("AdamW: unknown option 'amsgrad'", err_of(O.AdamW, { amsgrad = true }))
  end)

  it('setup returns the optimizer, requires a Link and resets t, epoch and hooks', function()
    local m = two_params()
    local opt = O.SGD()
    assert.are.equal(opt, opt:setup(m))
    assert.are.equal(m, opt.target)
    assert.matches('Optimizer.setup: the target must be a chainer.Link', err_of(opt.setup, opt, {}))
    assert.matches('call setup before add_hook', err_of(O.SGD().add_hook, O.SGD(), H.WeightDecay(0.1)))
    opt:add_hook(H.WeightDecay(0.1))
    opt.t, opt.epoch = 3, 2
    opt:setup(m)
    assert.are.equal(0, opt.t)
    assert.are.equal(0, opt.epoch)
    assert.are.same({}, opt:hooks())
  end)

  it('changes to hyperparameters on the optimizer reach every later update', function()
    local m, a = two_params()
    local opt = O.SGD{ lr = 0.5 }:setup(m)
    a.grad = T.array({ 1, 1 }, 'float64')
    opt:update()
    assert_list(a.array, { 0.5, 1.5 })
    opt.lr = opt.lr * 0.1                 -- what ExponentialShift does
    assert.are.equal(0.05, opt.hyperparam.lr)
    assert.are.equal(0.05, a.update_rule.hyperparam.lr)
    a.grad = T.array({ 1, 1 }, 'float64')
    opt:update()
    assert_list(a.array, { 0.45, 1.45 })
    assert.matches('hyperparameter lr must be a number', err_of(function() opt.lr = 'fast' end))
    -- a non-hyperparameter field is a plain field
    opt.note = 'x'
    assert.are.equal('x', opt.note)
    assert.is_nil(opt.hyperparam.note)
  end)

  it('gives each parameter its own rule whose hyperparameters can be overridden', function()
    local m, a, b = two_params()
    local opt = O.SGD{ lr = 1 }:setup(m)
    assert.are_not.equal(a.update_rule, b.update_rule)
    b.update_rule.hyperparam.lr = 0.25
    a.grad = T.array({ 1, 1 }, 'float64')
    b.grad = T.array({ 1 }, 'float64')
    opt:update()
    assert_list(a.array, { 0, 1 })
    assert_list(b.array, { 2.75 })
    opt.lr = 2                              -- b keeps its override
    a.grad = T.array({ 1, 1 }, 'float64')
    b.grad = T.array({ 1 }, 'float64')
    opt:update()
    assert_list(a.array, { -2, -1 })
    assert_list(b.array, { 2.5 })
    -- a rule made by hand with its own options
    b.update_rule = O.MomentumSGDRule(opt.hyperparam, { lr = 0.5, momentum = 0 })
    b.grad = T.array({ 1 }, 'float64')
    a.grad = T.array({ 0, 0 }, 'float64')
    opt:update()
    assert_list(b.array, { 2.0 })
    assert.are.equal(0.5, O.AdamRule{ alpha = 0.5 }.hyperparam.alpha)
    assert.are.equal(0.9, O.AdamRule{ alpha = 0.5 }.hyperparam.beta1)
  end)

  it('skips disabled rules (and links with update disabled) but counts t', function()
    local m, a, b = two_params()
    local opt = O.SGD{ lr = 1 }:setup(m)
    b.update_rule.enabled = false
    a.grad = T.array({ 1, 1 }, 'float64')
    b.grad = T.array({ 1 }, 'float64')
    opt:update()
    assert_list(a.array, { 0, 1 })
    assert_list(b.array, { 3 })
    assert.are.equal(1, opt.t)
    assert.are.equal(1, a.update_rule.t)
    assert.are.equal(0, b.update_rule.t)
    m:disable_update()
    a.grad = T.array({ 1, 1 }, 'float64')
    opt:update()
    assert_list(a.array, { 0, 1 })
    m:enable_update()
    assert.is_true(b.update_rule.enabled)
    -- rules made after disable_update start disabled
    local m2, a2 = two_params()
    m2:disable_update()
    O.SGD():setup(m2)
    assert.is_false(a2.update_rule.enabled)
  end)

  it('counts t and epoch; new_epoch follows the auto flag', function()
    local m, a, b = two_params()
    local opt = O.SGD():setup(m)
    for _ = 1, 3 do
      a.grad = T.array({ 0, 0 }, 'float64')
      b.grad = T.array({ 0 }, 'float64')
      opt:update()
    end
    assert.are.equal(3, opt.t)
    opt:new_epoch()
    assert.are.equal(1, opt.epoch)
    assert.matches('auto = true', err_of(opt.new_epoch, opt, { auto = true }))
    opt.use_auto_new_epoch = true
    opt:new_epoch{ auto = true }
    assert.are.equal(2, opt.epoch)
    assert.matches('duplicated new_epoch', err_of(opt.new_epoch, opt))
  end)

  it('update(lossfun, ...) computes the loss, clears old grads, backprops and updates', function()
    local m, a, b = two_params()
    local opt = O.SGD{ lr = 0.1 }:setup(m)
    a.grad = T.array({ 100, 100 }, 'float64')     -- stale: must be cleared
    local seen
    local function lossfun(x, scale)
      seen = { x, scale }
      -- loss = scale * sum(a * x) + b^2  -> grads: scale*x, 2b
      return F.sum(a * x) * scale + F.sum(b * b)
    end
    local x = Variable(T.array({ 1, -2 }, 'float64'))
    opt:update(lossfun, x, 3)
    assert.are.equal(x, seen[1])
    assert.are.equal(3, seen[2])
    assert_list(a.array, { 1 - 0.3, 2 + 0.6 })
    assert_list(b.array, { 3 - 0.6 })
    assert.are.equal(1, opt.t)
    assert.matches('lossfun must return a Variable', err_of(opt.update, opt, function() return 1 end))
    assert.matches('lossfun must be callable', err_of(opt.update, opt, 5))
    assert.matches('call setup%(link%) first', err_of(O.SGD().update, O.SGD()))
  end)

  it('gives parameters without a gradient a zero gradient, as Chainer does', function()
    local m, a, b = two_params()
    local opt = O.MomentumSGD{ lr = 1, momentum = 0.5 }:setup(m)
    a.grad = T.array({ 1, 1 }, 'float64')
    b.grad = T.array({ 2 }, 'float64')
    opt:update()
    assert_list(b.array, { 1 })
    b:cleargrad()
    a.grad = T.array({ 0, 0 }, 'float64')
    opt:update()
    -- b has no grad: a zero grad is made, momentum still moves it
    assert_list(b.grad, { 0 })
    assert_list(b.array, { 0 })
    -- an uninitialised parameter has neither data nor grad: skipped
    local lazy = chainer.Parameter()
    local m2 = Link()
    m2:add_param('w', lazy)
    local opt2 = O.Adam():setup(m2)
    opt2:update()
    assert.is_nil(lazy.grad)
    assert.are.equal(1, lazy.update_rule.t)
    assert.is_nil(lazy.update_rule.state)
  end)

  it('runs pre hooks in order before the update and post hooks after it', function()
    local m, a, b = two_params()
    local opt = O.SGD{ lr = 1 }:setup(m)
    local log = {}
    local function pre1(o) log[#log + 1] = 'pre1 t=' .. o.t .. ' a=' .. a.array:tolist()[1] end
    local function pre2(o) log[#log + 1] = 'pre2' end
    local function post(o) log[#log + 1] = 'post t=' .. o.t .. ' a=' .. a.array:tolist()[1] end
    opt:add_hook(post, { name = 'post', timing = 'post' })
    opt:add_hook(pre1, 'pre1')
    opt:add_hook(pre2, { name = 'pre2', timing = 'pre' })
    -- a per-parameter hook object sees (rule, param)
    local per = setmetatable({ name = 'per', call_for_each_param = true }, {
      __call = function(self, rule, p) log[#log + 1] = 'per ' .. p.name .. ' ' .. tostring(rule == p.update_rule) end })
    opt:add_hook(per)
    a.grad = T.array({ 1, 1 }, 'float64')
    b.grad = T.array({ 1 }, 'float64')
    opt:update()
    assert.are.same({ 'pre1 t=0 a=1', 'pre2', 'per a true', 'per b true', 'post t=1 a=0' }, log)
    local names = {}
    for i, h in ipairs(opt:hooks()) do names[i] = h.name .. ':' .. h.timing end
    assert.are.same({ 'pre1:pre', 'pre2:pre', 'per:pre', 'post:post' }, names)
    opt:remove_hook('pre2')
    opt:remove_hook('post')
    log = {}
    a.grad = T.array({ 1, 1 }, 'float64')
    opt:update()
    assert.are.same({ 'pre1 t=1 a=0', 'per a true', 'per b true' }, log)
    assert.matches("hook 'pre1' already exists", err_of(opt.add_hook, opt, pre1, 'pre1'))
    assert.matches('the hook has no name', err_of(opt.add_hook, opt, function() end))
    assert.matches('the hook must be callable', err_of(opt.add_hook, opt, 42))
    assert.matches("timing must be 'pre', 'post' or 'auto'", err_of(opt.add_hook, opt, pre2, { name = 'x', timing = 'mid' }))
    assert.matches("no hook named 'zzz'", err_of(opt.remove_hook, opt, 'zzz'))
    -- the hook's own timing attribute decides under 'auto'
    local WD = H.WeightDecay(0)
    WD.timing = 'post'
    opt:add_hook(WD)
    assert.are.equal('post', opt:hooks()[3].timing)
  end)

  it('runs update-rule hooks around the rule', function()
    local m, a = two_params()
    local opt = O.SGD{ lr = 1 }:setup(m)
    local log = {}
    a.update_rule:add_hook(function(rule, p) log[#log + 1] = 'pre ' .. p.array:tolist()[1] end, 'r1')
    a.update_rule:add_hook(function(rule, p) log[#log + 1] = 'post ' .. p.array:tolist()[1] end,
      { name = 'r2', timing = 'post' })
    a.grad = T.array({ 1, 1 }, 'float64')
    opt:update()
    assert.are.same({ 'pre 1', 'post 0' }, log)
    a.update_rule:remove_hook('r1')
    assert.matches("hook 'r2' already exists", err_of(a.update_rule.add_hook, a.update_rule, print, 'r2'))
  end)

  it('serializes t, epoch and per-parameter state under the parameter paths', function()
    local S = require 'chainer.serializers'
    local m, a, b = two_params()
    local opt = O.Adam{ alpha = 0.1 }:setup(m)
    for step = 1, 3 do
      a.grad = T.array({ step, -step }, 'float64')
      b.grad = T.array({ 0.5 * step }, 'float64')
      opt:update()
    end
    opt:new_epoch()
    local s = S.DictionarySerializer()
    s:save(opt)
    local keys = {}
    for k in pairs(s.target) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.are.same({ 'a/m', 'a/t', 'a/v', 'b/m', 'b/t', 'b/v', 'epoch', 't' }, keys)

    -- load into a fresh optimizer on an equal model: the next step is identical
    local m2, a2, b2 = two_params()
    a2.array:copy_(a.array)
    b2.array:copy_(b.array)
    local opt2 = O.Adam{ alpha = 0.1 }:setup(m2)
    assert.is_nil(a2.update_rule.state)
    S.NpzDeserializer(s.target):load(opt2)
    assert.are.equal(3, opt2.t)
    assert.are.equal(1, opt2.epoch)
    assert.are.equal(3, a2.update_rule.t)
    assert_list(a2.update_rule.state.m, a.update_rule.state.m:tolist())
    for _, o in ipairs({ { opt, a, b }, { opt2, a2, b2 } }) do
      o[2].grad = T.array({ 0.7, 0.1 }, 'float64')
      o[3].grad = T.array({ -1 }, 'float64')
      o[1]:update()
    end
    assert_list(a2.array, a.array:tolist(), 0)
    assert_list(b2.array, b.array:tolist(), 0)
    assert_list(a2.update_rule.state.v, a.update_rule.state.v:tolist(), 0)
  end)

  it('round-trips optimizer state through an npz file', function()
    local S = require 'chainer.serializers'
    local m, a, b = two_params()
    local opt = O.MomentumSGD{ lr = 0.1 }:setup(m)
    a.grad = T.array({ 1, 2 }, 'float64')
    b.grad = T.array({ 3 }, 'float64')
    opt:update()
    local path = os.tmpname()
    S.save_npz(path, opt)
    local m2 = two_params()
    local opt2 = O.MomentumSGD{ lr = 0.1 }:setup(m2)
    S.load_npz(path, opt2)
    os.remove(path)
    local _, a2 = nil, nil
    for name, p in m2:namedparams() do if name == '/a' then a2 = p end end
    assert_list(a2.update_rule.state.v, { -0.1, -0.2 })
    assert.are.equal(1, opt2.t)
  end)

  it('leaves the state to the first update when the file has none', function()
    local S = require 'chainer.serializers'
    local m, a = two_params()
    local opt = O.Adam():setup(m)
    S.NpzDeserializer({ t = T.array(5, 'int64'), epoch = T.array(2, 'int64') }, { strict = false }):load(opt)
    assert.are.equal(5, opt.t)
    assert.is_nil(a.update_rule.state)
  end)

  it('prints its class and hyperparameters', function()
    assert.are.equal('SGD(lr=0.5)', tostring(O.SGD(0.5)))
    assert.are.equal('SGDRule(lr=0.01)', tostring(O.SGDRule()))
  end)
end)

describe('training', function()
  it('fits a linear regression to a low loss with each family of optimizer', function()
    local L = require 'chainer.links'
    T.random.seed(7)
    local x = T.random.normal(0, 1, { 64, 3 }, 'float32')
    local w_true = T.array({ { 1.5 }, { -2.0 }, { 0.5 } }, 'float32')
    local y = T.matmul(x, w_true) + 0.3
    -- {optimizer, the hyperparameter a step schedule shrinks every 100 updates}
    for _, make in ipairs({
      function() return O.SGD{ lr = 0.1 }, 'lr' end,
      function() return O.MomentumSGD{ lr = 0.05 }, 'lr' end,
      function() return O.Adam{ alpha = 0.05 }, 'alpha' end,
      function() return O.RMSprop{ lr = 0.05 }, 'lr' end,
    }) do
      local model = L.Linear(3, 1)
      local o, knob = make()
      local opt = o:setup(model)
      local function lossfun() return F.mean_squared_error(model(x), y) end
      local first = lossfun().array:item()
      for i = 1, 300 do
        opt:update(lossfun)
        if i % 100 == 0 then opt[knob] = opt[knob] * 0.2 end
      end
      local last = lossfun().array:item()
      assert(last < 1e-3 and last < first * 1e-3,
        string.format('%s: loss %.3g -> %.3g', tostring(opt), first, last))
    end
  end)
end)
