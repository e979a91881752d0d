-- Chainer's small top-level and chainer.backends.cuda helpers that the API
-- coverage audit (docs/api-coverage.md) found missing: the re-exported base
-- classes, DebugMode, is_arrays_compatible, should_use_cudnn(_tensor_core),
-- cuda.get_device(_from_array), DummyDevice, copy, memoize/clear_memo,
-- utils.get_order, utils.nondeterministic, Variable:mean and retain_data,
-- Optimizer:call_hook, UpdateRule's GPU dispatch, Distribution.xp, ChainList's
-- and Sequential's sequence methods, Link.from_params, StandardUpdater's
-- input_device.  GPU paths are
-- tagged `gpu`.
local chainer = require 'chainer'
local T = chainer.tensor
local cuda = chainer.backends.cuda

local err_of = require('helpers').err_of

describe('chainer top-level re-exports', function()
  it('are the classes of the modules that define them', function()
    assert.are.equal(require('chainer.optimizer').Optimizer, chainer.Optimizer)
    assert.are.equal(require('chainer.optimizer').GradientMethod, chainer.GradientMethod)
    assert.are.equal(require('chainer.optimizer').UpdateRule, chainer.UpdateRule)
    assert.are.equal(require('chainer.serializer').Serializer, chainer.Serializer)
    assert.are.equal(require('chainer.serializer').Deserializer, chainer.Deserializer)
    assert.are.equal(require('chainer.serializer').AbstractSerializer, chainer.AbstractSerializer)
    assert.are.equal(chainer.initializers.Initializer, chainer.Initializer)
    assert.are.equal(chainer.Function.FunctionAdapter, chainer.FunctionAdapter)
    assert.are.equal(cuda.should_use_cudnn, chainer.should_use_cudnn)
    assert.are.equal(chainer.backend.is_arrays_compatible, chainer.is_arrays_compatible)
    -- a user's optimizer subclasses the top-level class
    assert.is_true(chainer.isinstance(chainer.optimizers.SGD(), chainer.GradientMethod))
    assert.is_true(chainer.isinstance(chainer.optimizers.SGD(), chainer.Optimizer))
  end)
  it('disable_experimental_feature_warning is false by default, as Chainer', function()
    if os.getenv('CHAINER_DISABLE_EXPERIMENTAL_FEATURE_WARNING') ~= '1' then
      assert.is_false(rawget(chainer, 'disable_experimental_feature_warning'))
    end
  end)
end)

describe('chainer.DebugMode', function()
  it('sets config.debug inside the scope and restores it, even on error', function()
    assert.is_false(chainer.config.debug)
    assert.is_true(chainer.DebugMode(true, function() return chainer.config.debug end))
    assert.is_false(chainer.config.debug)
    assert.matches('boom', err_of(chainer.DebugMode, true, function() error('boom') end), 1, true)
    assert.is_false(chainer.config.debug)
  end)
  it('checks its arguments', function()
    assert.matches('DebugMode: debug must be true or false (got number)', err_of(chainer.DebugMode, 1, print), 1, true)
    assert.matches('DebugMode: pass the scope as a function', err_of(chainer.DebugMode, true), 1, true)
  end)
end)

describe('chainer.is_arrays_compatible', function()
  it('is true for host tensors and empty lists, false with a non-tensor', function()
    assert.is_true(chainer.is_arrays_compatible {})
    assert.is_true(chainer.is_arrays_compatible { T.zeros { 2 }, nil, T.ones({ 3 }, 'int32') })
    assert.is_false(chainer.is_arrays_compatible { T.zeros { 2 }, chainer.Variable(T.zeros { 2 }) })
    assert.is_false(chainer.is_arrays_compatible { T.zeros { 2 }, 3 })
    assert.matches('is_arrays_compatible: arrays must be a list of tensors (got a tensor)',
      err_of(chainer.is_arrays_compatible, T.zeros { 2 }), 1, true)
  end)
end)

describe('should_use_cudnn', function()
  local real_version = cuda.cudnn_version
  after_each(function()
    cuda.cudnn_version = real_version
    chainer.config.use_cudnn = 'auto'
    chainer.config.use_cudnn_tensor_core = 'auto'
  end)
  it("follows Chainer's table of level x config.use_cudnn", function()
    cuda.cudnn_version = function() return 8902 end
    local expected = {
      ['==always'] = { always = true, auto = false, never = false },
      ['>=auto'] = { always = true, auto = true, never = false },
    }
    for level, row in pairs(expected) do
      for setting, want in pairs(row) do
        chainer.config.use_cudnn = setting
        assert.are.equal(want, chainer.should_use_cudnn(level), level .. ' ' .. setting)
      end
    end
    chainer.config.use_cudnn = 'always'
    assert.is_true(chainer.should_use_cudnn('>=auto', 8902))
    assert.is_false(chainer.should_use_cudnn('>=auto', 8903))
  end)
  it('is false without cuDNN, and names a bad level', function()
    cuda.cudnn_version = function() return -1 end
    chainer.config.use_cudnn = 'always'
    assert.is_false(chainer.should_use_cudnn('==always'))
    assert.matches("should_use_cudnn: level must be '==always' or '>=auto' (got always)",
      err_of(chainer.should_use_cudnn, 'always'), 1, true)
  end)
  it('cudnn_version reads the backend (-1 without cuDNN)', function()
    local v = cuda.cudnn_version()
    if cuda.cudnn_enabled then assert.is_true(v >= 7000) else assert.are.equal(-1, v) end
  end)
  it('tensor cores: always/never as set; auto needs float16', function()
    chainer.config.use_cudnn_tensor_core = 'always'
    assert.is_true(chainer.should_use_cudnn_tensor_core('float32'))
    chainer.config.use_cudnn_tensor_core = 'never'
    assert.is_false(chainer.should_use_cudnn_tensor_core('float16'))
    chainer.config.use_cudnn_tensor_core = 'auto'
    assert.is_false(chainer.should_use_cudnn_tensor_core('float32'))
    assert.matches("should_use_cudnn_tensor_core: dtype must be a dtype name",
      err_of(chainer.should_use_cudnn_tensor_core, 'floaty'), 1, true)
    chainer.config.use_cudnn_tensor_core = 'sometimes'
    assert.matches("config.use_cudnn_tensor_core must be 'always', 'auto' or 'never' (got sometimes)",
      err_of(chainer.should_use_cudnn_tensor_core, 'float16'), 1, true)
  end)
end)

describe('chainer.backends.cuda helpers', function()
  it('get_device and get_device_from_array give DummyDevice for the host', function()
    assert.are.equal(cuda.DummyDevice, cuda.get_device(-1))
    assert.are.equal(cuda.DummyDevice, cuda.get_device_from_array(T.zeros { 2 }))
    assert.are.equal(cuda.DummyDevice, cuda.get_device_from_array(chainer.Variable(T.zeros { 2 })))
    assert.are.equal(-1, cuda.DummyDevice.id)
    assert.are.equal(cuda.DummyDevice, cuda.DummyDevice:use())
    cuda.DummyDevice:synchronize()
    assert.are.equal(chainer.config, cuda.config)
  end)
  it('copy refuses host tensors and unknown options', function()
    assert.matches('cuda.copy: array must be a CUDA tensor (got a CPU tensor; use t:copy())',
      err_of(cuda.copy, T.zeros { 2 }), 1, true)
    assert.matches('out_dev', err_of(cuda.copy, T.zeros { 2 }, { out_dev = 0 }), 1, true)
  end)
  it('memoize caches per argument list (and per device); clear_memo empties it', function()
    local calls = 0
    local add = cuda.memoize()(function(a, b) calls = calls + 1; return a + b, 'sum' end)
    local r1, tag = add(1, 2)
    assert.are.equal(3, r1); assert.are.equal('sum', tag)
    assert.are.equal(3, add(1, 2))
    assert.are.equal(1, calls)
    assert.are.equal(5, add(2, 3))
    assert.are.equal(2, calls)
    -- 1 and '1' are different arguments
    local show = cuda.memoize { for_each_device = true } (function(a) calls = calls + 1; return type(a) end)
    assert.are.equal('number', show(1)); assert.are.equal('string', show('1'))
    assert.are.equal(4, calls)
    cuda.clear_memo()
    assert.are.equal(3, add(1, 2))
    assert.are.equal(5, calls)
    assert.matches('cuda.memoize: arguments must be numbers, strings, booleans or nil (argument 1 is a table)',
      err_of(add, {}, 1), 1, true)
    assert.matches('cuda.memoize: the decorated value must be a function (got number)',
      err_of(cuda.memoize(), 3), 1, true)
  end)
end)

describe('chainer.utils.get_order and nondeterministic', function()
  it("get_order: 'C' when sorted by row, 'F' by column, 'other' otherwise (the same four answers as Chainer 7.8.1's get_order)", function()
    local function order(r, c) return chainer.utils.get_order(T.array(r, 'int32'), T.array(c, 'int32')) end
    assert.are.equal('C', order({ 0, 0, 1, 2 }, { 0, 2, 1, 0 }))
    assert.are.equal('F', order({ 0, 1, 0, 2 }, { 0, 0, 1, 1 }))
    assert.are.equal('other', order({ 1, 0, 0 }, { 1, 1, 0 }))
    -- a batch is C only when every matrix is
    assert.are.equal('C', order({ { 0, 1 }, { 0, 0 } }, { { 0, 0 }, { 0, 1 } }))
  end)
  it('nondeterministic warns only under config.warn_nondeterministic', function()
    local N = require 'chainer.utils.nondeterministic'
    local written = {}
    N.output = { write = function(_, ...) for _, s in ipairs { ... } do written[#written + 1] = s end end }
    assert.is_false(chainer.config.warn_nondeterministic)
    assert.is_false(chainer.utils.nondeterministic('F.scatter_add'))
    assert.are.equal(0, #written)
    local wrote = chainer.using_config('warn_nondeterministic', true, function()
      return chainer.utils.nondeterministic('F.scatter_add')
    end)
    N.output = io.stderr
    assert.is_true(wrote)
    assert.are.equal('UserWarning: Potentially non-deterministic code is being executed while ' ..
      'config.warn_nondeterministic set. Source: F.scatter_add\n', table.concat(written))
  end)
end)

describe('Variable:mean', function()
  it('is the (weighted) average, with Chainer\'s axis and options', function()
    local x = chainer.Variable(T.array { { 1, 2 }, { 3, 5 } })
    assert.are.equal(2.75, x:mean().array:item())                 -- (1+2+3+5)/4
    assert.same({ 1.5, 4 }, x:mean(1).array:totable())             -- row means
    assert.same({ { 2, 3.5 } }, x:mean { axis = 0, keepdims = true }.array:totable())
    -- row 2 weighted 1:3 is (3*1 + 5*3)/4
    assert.same({ 1.75, 4.5 }, x:mean(1, { weights = T.array { 1, 3 } }).array:totable())
    local y = x:mean()
    y:backward()
    assert.same({ { 0.25, 0.25 }, { 0.25, 0.25 } }, x.grad:totable())
    assert.matches("Variable.mean: unknown option 'weight'", err_of(x.mean, x, 1, { weight = 1 }), 1, true)
  end)
end)

describe('Variable:retain_data', function()
  it('keeps the data on the node after the Variable is gone', function()
    local x = chainer.Variable(T.array { -1, 2 })
    local y = chainer.functions.relu(x)
    local node = y.node
    assert.is_false(node.data)                  -- not kept by default
    y:retain_data()
    y = nil
    collectgarbage(); collectgarbage()
    assert.same({ 0, 2 }, node.data:totable())
    assert.same({ 0, 2 }, node:get_variable().array:totable())
  end)
end)

describe('ChainList and Sequential as mutable sequences', function()
  local L = chainer.links
  local function param_names(m)
    local out = {}
    for n in m:namedparams() do out[#out + 1] = n end
    table.sort(out)
    return table.concat(out, ' ')
  end
  it('ChainList: insert, pop, remove, reverse, index, count, clear renumber the children', function()
    local a, b, d = L.Linear(1, 1), L.Linear(1, 2), L.Linear(1, 3)
    local cl = chainer.ChainList(a, b)
    cl:insert(1, d)                                  -- d first: '0', a '1', b '2'
    assert.are.equal(3, cl:len())
    assert.are.equal(d, cl[1])
    assert.same({ '0', '1', '2' }, { d.name, a.name, b.name })
    assert.are.equal('/0/W /0/b /1/W /1/b /2/W /2/b', param_names(cl))
    assert.are.equal(3, cl[1].W.shape[1])            -- /0/W is d's (3, 1)
    assert.are.equal(b, cl:pop())
    assert.is_nil(cl[3])
    cl:reverse()
    assert.are.equal(a, cl[1]); assert.are.equal('0', a.name); assert.are.equal('1', d.name)
    assert.are.equal(2, cl:index(d)); assert.are.equal(1, cl:count(a)); assert.is_nil(cl:index(b))
    cl:remove(a)
    assert.are.equal(d, cl[1]); assert.are.equal('0', d.name); assert.is_nil(cl[2])
    assert.matches('ChainList.remove: the link is not in this ChainList', err_of(cl.remove, cl, a), 1, true)
    assert.matches('ChainList.insert: position 5 is out of range (expected 1..2)', err_of(cl.insert, cl, 5, a), 1, true)
    assert.matches('ChainList.insert: expected a Link (got number)', err_of(cl.insert, cl, 1, 3), 1, true)
    assert.matches('ChainList.pop: position 2 is out of range (expected 1..1)', err_of(cl.pop, cl, 2), 1, true)
    cl:clear()
    assert.are.equal(0, cl:len()); assert.is_nil(cl[1])
    assert.are.equal('', param_names(cl))
  end)
  it('Sequential: flatten splices nested Sequentials; reverse is in place', function()
    local a, b, d = L.Linear(2, 2), L.Linear(2, 2), L.Linear(2, 2)
    local relu = chainer.functions.relu
    local s = chainer.Sequential(a, chainer.Sequential(b, chainer.Sequential(relu)), d)
    local f = s:flatten()
    assert.are.equal(3, s:len())                      -- the original is unchanged
    assert.are.equal(4, f:len())
    assert.same({ a, b, relu, d }, { f[1], f[2], f[3], f[4] })
    -- the same function: s(x) == f(x)
    local x = T.random.uniform(-1, 1, { 3, 2 })
    assert.same(s(x).array:totable(), f(x).array:totable())
    f:reverse()
    assert.same({ d, relu, b, a }, { f[1], f[2], f[3], f[4] })
    assert.are.equal('0', d.name)
  end)
end)

describe('Link.from_params (Chainer 7)', function()
  local L, F = chainer.links, chainer.functions
  it('Linear: the shape from W, parameters copied from W and b', function()
    local W, b = T.array { { 1, 2, 3 }, { 4, 5, 6 } }, T.array { 7, 8 }
    local l = L.Linear.from_params(chainer.Variable(W), b)
    assert.are.equal(3, l.in_size); assert.are.equal(2, l.out_size)
    assert.same(W:totable(), l.W.array:totable()); assert.same({ 7, 8 }, l.b.array:totable())
    l.W.array:fill_(0)
    assert.are.equal(1, W:get(0, 0))                  -- a copy, not a view
    -- y = W x + b by hand for x = (1, 1, 1): (6 + 7, 15 + 8)
    local m = L.Linear.from_params(W, b)
    assert.same({ { 13, 23 } }, m(T.ones { 1, 3 }).array:totable())
    assert.is_nil(L.Linear.from_params(W, b, true).b)
    assert.matches('L.Linear.from_params: b has 3 elements, W has 2 outputs (its first axis)',
      err_of(L.Linear.from_params, W, T.array { 1, 2, 3 }), 1, true)
    assert.matches('L.Linear.from_params: W must have 2 axes (got shape (3))',
      err_of(L.Linear.from_params, T.array { 1, 2, 3 }), 1, true)
  end)
  it('Convolution2D/ND: in_channels is W.shape[1] * groups, ksize the last axes; same outputs as F', function()
    T.random.seed(5)
    local W = T.random.uniform(-1, 1, { 4, 2, 3, 3 })
    local b = T.random.uniform(-1, 1, { 4 })
    local c = L.Convolution2D.from_params(W, b, 1, 1, { groups = 2 })
    assert.are.equal(4, c.in_channels); assert.are.equal(4, c.out_channels)
    assert.same({ 3, 3 }, c.ksize); assert.are.equal(2, c.groups)
    local x = T.random.uniform(-1, 1, { 1, 4, 5, 5 })
    local want = F.convolution_2d(x, W, b, { pad = 1, groups = 2 }).array
    assert.are.equal(0, (c(x).array - want):abs():max():item())
    local nd = L.ConvolutionND.from_params(T.random.uniform(-1, 1, { 3, 2, 2, 2, 2 }), nil, 1, 0, { cover_all = false })
    assert.are.equal(3, nd.ndim); assert.are.equal(2, nd.in_channels); assert.are.equal(3, nd.out_channels)
    assert.matches('L.Convolution2D.from_params: W must have 4 axes (got shape (2, 2, 3))',
      err_of(L.Convolution2D.from_params, T.zeros { 2, 2, 3 }), 1, true)
    assert.matches("L.Convolution2D.from_params: unknown option 'cover_all'",
      err_of(L.Convolution2D.from_params, W, nil, 1, 0, { cover_all = true }), 1, true)
  end)
  it('EmbedID: in_size and out_size from W; a link without it says so', function()
    local e = L.EmbedID.from_params(T.array { { 1, 2 }, { 3, 4 }, { 5, 6 } }, -1)
    assert.are.equal(3, e.in_size); assert.are.equal(2, e.out_size); assert.are.equal(-1, e.ignore_label)
    assert.same({ { 5, 6 }, { 0, 0 } }, e(T.array({ 2, -1 }, 'int32')).array:totable())
    assert.matches('from_params: this link class does not build from parameters',
      err_of(L.Highway.from_params, T.zeros { 2, 2 }), 1, true)
    assert.same({}, chainer.Link():printable_specs())
  end)
end)

describe('StandardUpdater input_device (Chainer 7)', function()
  it('sends batches to input_device, which defaults to device', function()
    local function updater(opts)
      local m = chainer.links.Classifier(chainer.links.Linear(2, 2))
      local opt = chainer.optimizers.SGD():setup(m)
      local ds = chainer.datasets.TupleDataset(T.zeros { 4, 2 }, T.zeros({ 4 }, 'int32'))
      local seen = {}
      opts.converter = function(batch, device)
        seen[#seen + 1] = device == nil and 'nil' or device
        return chainer.dataset.concat_examples(batch)
      end
      local up = chainer.training.updaters.StandardUpdater(chainer.iterators.SerialIterator(ds, 2), opt, opts)
      up:update()
      return up, seen
    end
    local up, seen = updater { input_device = -1 }
    assert.same({ -1 }, seen); assert.are.equal(-1, up.input_device); assert.is_nil(up.device)
    up, seen = updater { device = 'cpu' }
    assert.same({ 'cpu' }, seen); assert.are.equal('cpu', up.input_device)
    up, seen = updater {}
    assert.same({ 'nil' }, seen)
  end)
end)

describe('optimizer and distribution members', function()
  it('Optimizer:call_hook calls one hook as call_hooks does', function()
    local m = chainer.links.Linear(2, 3)
    local opt = chainer.optimizers.SGD():setup(m)
    local seen = {}
    opt:call_hook(function(o) seen[#seen + 1] = o end)
    assert.are.equal(opt, seen[1])
    -- a hook with call_for_each_param gets (update_rule, param) per parameter
    local each = setmetatable({ call_for_each_param = true }, {
      __call = function(_, rule, p) seen[#seen + 1] = { rule, p } end })
    opt:call_hook(each)
    assert.are.equal(3, #seen)
    assert.are.equal(seen[2][2].update_rule, seen[2][1])
  end)
  it("UpdateRule: is_elementwise as Chainer's rules; update_core_gpu defaults to the CPU method", function()
    for _, name in ipairs { 'SGD', 'MomentumSGD', 'Adam', 'AdaGrad', 'AdaDelta', 'RMSprop', 'RMSpropGraves',
      'NesterovAG', 'CorrectedMomentumSGD', 'SMORMS3', 'MSVAG' } do
      assert.is_true(chainer.optimizers[name]():create_update_rule().is_elementwise, name)
    end
    assert.is_false(chainer.UpdateRule.is_elementwise)
    -- a rule that defines update_core_cpu only: a host parameter takes it
    local calls = {}
    local Rule = chainer.UpdateRule:extend('HalfRule')
    function Rule:update_core_cpu(p) calls[#calls + 1] = 'cpu'; p.array:copy_(p.array * 0.5) end
    local p = chainer.Parameter(T.array { 2, 4 })
    p.grad = T.ones { 2 }
    local r = Rule()
    r:update_core(p)
    assert.same({ 'cpu' }, calls)
    assert.same({ 1, 2 }, p.array:totable())
    r:update_core_gpu(p)                       -- chainlua's default: the CPU method
    assert.same({ 'cpu', 'cpu' }, calls)
  end)
  it('Distribution.xp is chainer.tensor', function()
    assert.are.equal(T, chainer.distributions.Normal(T.zeros { 2 }, T.ones { 2 }).xp)
  end)
end)

describe('cuda helpers on a GPU #gpu', function()
  it('get_device_from_array, copy and is_arrays_compatible on cuda:0', function()
    local g = T.array({ 1, 2, 3 }):to_device(0)
    assert.are.equal(cuda.get_device_from_id(0), cuda.get_device_from_array(g))
    assert.are.equal(cuda.get_device_from_id(0), cuda.get_device(g))
    local y = cuda.copy(g)
    assert.are.equal(0, y.ptr.dev)
    assert.same({ 1, 2, 3 }, y:to_cpu():totable())
    local out = T.zeros { 3 }
    assert.are.equal(out, cuda.copy(g, { out = out }))
    assert.same({ 1, 2, 3 }, out:totable())
    assert.is_true(chainer.is_arrays_compatible { g, y })
    assert.is_false(chainer.is_arrays_compatible { g, out })
    assert.is_true(cuda.cudnn_version() >= 7000)
  end)
  it('UpdateRule:update_core runs update_core_gpu for a parameter on a GPU', function()
    local calls = {}
    local Rule = chainer.UpdateRule:extend('WhereRule')
    function Rule:update_core_cpu() calls[#calls + 1] = 'cpu' end
    function Rule:update_core_gpu() calls[#calls + 1] = 'gpu' end
    local p = chainer.Parameter(T.array { 2, 4 }:to_device(0))
    p.grad = T.ones({ 2 }):to_device(0)
    Rule():update_core(p)
    assert.same({ 'gpu' }, calls)
  end)
end)
