-- Methods called with '.' instead of ':' (issue 18): every public method of
-- the framework's classes names itself instead of failing inside with
-- "attempt to index local 'self' (a nil value)".
local chainer = require 'chainer'
local class = require 'chainer.class'
local T = chainer.tensor
local L = chainer.links
local H = require 'helpers'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local iterators = require 'chainer.iterators'
local optimizers = require 'chainer.optimizers'

local function message(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, 'expected an error')
  return tostring(err)
end

local function small_trainer()
  local ds = chainer.datasets.TupleDataset(T.zeros(4, 3), T.zeros({ 4 }, 'int32'))
  local model = L.Classifier(L.Linear(3, 2))
  local opt = optimizers.SGD():setup(model)
  local it = iterators.SerialIterator(ds, 2)
  local updater = training.StandardUpdater(it, opt)
  return training.Trainer(updater, { 1, 'iteration' }, { out = os.tmpname() .. '.d' }), model, opt, it, updater
end

describe("methods called with '.'", function()
  it("model.cleargrads() says to call it with ':'", function()
    local model = L.Linear(3, 2)
    local err = message(function() model.cleargrads() end)
    assert.truthy(err:find("Link:cleargrads: call it with ':'", 1, true), err)
    assert.truthy(err:find('self was nil', 1, true), err)
    -- the error points at the caller's line, not into the framework
    assert.truthy(err:find('self_check_spec.lua', 1, true), err)
  end)

  it('trainer.extend(ext) blames the call, not the extension', function()
    local trainer = small_trainer()
    local err = message(function() trainer.extend(extensions.LogReport()) end)
    assert.truthy(err:find("Trainer:extend: call it with ':'", 1, true), err)
    assert.truthy(err:find('self was a LogReport', 1, true), err)
  end)

  it('covers every public method of the framework classes', function()
    local trainer, model, opt, it, updater = small_trainer()
    local chain = chainer.Chain()
    local list = chainer.ChainList()
    local objects = {
      Link = L.Linear(3, 2), Chain = chain, ChainList = list, Classifier = model,
      Optimizer = opt, Trainer = trainer, Updater = updater, SerialIterator = it,
      MultithreadIterator = iterators.MultithreadIterator(chainer.datasets.TupleDataset(T.zeros(2, 1)), 1),
      Variable = chainer.Variable(T.zeros(2)), Parameter = chainer.Parameter(T.zeros(2)),
      Evaluator = extensions.Evaluator(iterators.SerialIterator(T.zeros(2, 3), 1, { loop = false }), model),
    }
    local checked = 0
    for label, obj in pairs(objects) do
      local seen = {}
      local cls = getmetatable(obj)
      while cls do
        for name, f in pairs(cls) do
          if not seen[name] and type(f) == 'function' and type(name) == 'string' and name:sub(1, 1) ~= '_'
              and debug.getlocal(class.unwrap(f), 1) == 'self' then
            seen[name] = true
            local err = message(obj[name])   -- obj.name() with no self
            assert.truthy(err:find(':' .. name .. ": call it with ':'", 1, true), label .. '.' .. name .. ': ' .. err)
            checked = checked + 1
          end
        end
        cls = rawget(cls, '__super')
      end
    end
    assert.is_true(checked > 150, 'only ' .. checked .. ' methods checked')
  end)

  it("a user's subclass names its own methods", function()
    local MLP = chainer.Chain:extend('MLP')
    function MLP:init() MLP.super.init(self) self:init_scope(function() self.l1 = L.Linear(3, 2) end) end
    function MLP:forward(x) return self.l1(x) end
    local m = MLP()
    local err = message(function() m.forward(T.zeros(1, 3)) end)
    assert.truthy(err:find("MLP:forward: call it with ':'", 1, true), err)
    assert.truthy(err:find('self was a float32 tensor', 1, true) or err:find('self was a cdata', 1, true), err)
    assert.are.same({ 1, 2 }, m(T.zeros(1, 3)).shape)
    assert.are.same({ 1, 2 }, m:forward(T.zeros(1, 3)).shape)
  end)

  it('leaves functions that are not methods alone', function()
    local v = chainer.Variable.as_variable(T.zeros(2))
    assert.is_true(v._is_variable)
    local tree = L.BinaryHierarchicalSoftmax.create_huffman_tree({ [0] = 3, [1] = 2, [2] = 1 })
    assert.is_table(tree)
    -- the guard hands back the method it wraps, for tools that read sources
    local src = debug.getinfo(class.unwrap(chainer.Link.cleargrads), 'S').source
    assert.truthy(src:find('link.lua', 1, true), src)
  end)
end)

describe('lazy links and bad input', function()
  local cases = {
    { 'Linear', function() return L.Linear(3, 2) end, function() return L.Linear(nil, 2) end },
    { 'Convolution2D', function() return L.Convolution2D(3, 2, 3) end, function() return L.Convolution2D(nil, 2, 3) end },
    { 'Deconvolution2D', function() return L.Deconvolution2D(3, 2, 3) end,
      function() return L.Deconvolution2D(nil, 2, 3) end },
    { 'LSTM', function() return L.LSTM(3, 2) end, function() return L.LSTM(nil, 2) end },
    { 'Swish', function() return L.Swish({ 3 }) end, function() return L.Swish(nil) end },
    { 'SimplifiedDropconnect', function() return L.SimplifiedDropconnect(3, 2) end,
      function() return L.SimplifiedDropconnect(nil, 2) end },
  }
  for _, c in ipairs(cases) do
    it(c[1] .. ' gives the sized message when called on a Lua table', function()
      local sized = message(c[2](), { 1, 2, 3 })
      local lazy = message(c[3](), { 1, 2, 3 })
      assert.truthy(sized:find('must be a Variable or a tensor (got table)', 1, true), sized)
      assert.are.equal(sized, lazy)
    end)
  end
  it('StatefulMGU names the bad input', function()
    H.errors_with(function() L.StatefulMGU(3, 2)({ 1, 2 }) end, 'x must be a Variable or a tensor (got table)')
  end)
end)
