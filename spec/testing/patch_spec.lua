-- chainer.testing.patch and its call-recording mock.
local chainer = require 'chainer'
local testing = chainer.testing
local T = chainer.tensor
local helpers = require 'helpers'
local err_of = helpers.err_of

-- a module of our own to patch (package.loaded makes it requirable by name)
local fake = {}
function fake.add(a, b) return a + b end
function fake.sum(...) local s = 0 for _, v in ipairs({ ... }) do s = s + v end return s end
fake.limit = 10
fake.inner = { scale = function(x, k) return x * k end }
local Counter = chainer.class('PatchCounter')
function Counter:init() self.n = 0 end
function Counter:bump(by) self.n = self.n + (by or 1) return self.n end
fake.Counter = Counter
package.loaded['spec_fake_patch_target'] = fake

describe('testing.patch', function()
  it('replaces a dotted module field with an autospec mock for the wrapped function, then restores it', function()
    local original = fake.add
    local seen
    local wrapped = testing.patch('spec_fake_patch_target.add')(function(m, extra)
      assert.is_true(fake.add == m)
      assert.is_nil(fake.add(1, 2))   -- return_value defaults to nil
      fake.add(3, 4)
      seen = extra
      assert.are.equal(2, m.call_count)
      assert.is_true(m.called)
      assert.are.same({ n = 2, 1, 2 }, m.calls[1])
      assert.is_true(m:called_with(1, 2))
      assert.is_false(m:called_with(1))
      m:assert_called_with(3, 4)
      m:assert_any_call(1, 2)
      return 'result', 7
    end)
    assert.are.equal(original, fake.add)   -- nothing is patched until the wrapper runs
    local r1, r2 = wrapped('x')
    assert.are.same({ 'result', 7, 'x' }, { r1, r2, seen })
    assert.are.equal(original, fake.add)
  end)

  it('restores the original when the body raises, and passes the error on as it was', function()
    local original = fake.add
    local errobj = setmetatable({ why = 'boom' }, { __tostring = function() return 'boom' end })
    local ok, e = pcall(testing.patch('spec_fake_patch_target.add')(function() error(errobj) end))
    assert.is_false(ok)
    assert.are.equal(errobj, e)
    assert.are.equal(original, fake.add)
    local msg = err_of(testing.patch(fake, 'add', function() return 1 end)(function() error('plain failure') end))
    assert.matches('plain failure', msg)
    assert.are.equal(original, fake.add)
  end)

  it('keeps the checks Lua can make of the original (autospec)', function()
    testing.patch('spec_fake_patch_target.add')(function()
      assert.matches('spec_fake_patch_target.add: called with 3 arguments; the original takes 2 %(a, b%)',
        err_of(function() fake.add(1, 2, 3) end))
      fake.sum(1, 2, 3, 4, 5)   -- a vararg function takes any number
    end)()
    testing.patch('spec_fake_patch_target.sum')(function(m)
      fake.sum(1, 2, 3, 4, 5)
      m:assert_called_once_with(1, 2, 3, 4, 5)
    end)()
    -- a method called with '.'
    testing.patch(Counter, 'bump')(function(m)
      local c = Counter()
      c:bump(2)
      m:assert_called_with(c, 2)
      assert.matches("a method %(its first parameter is self%): call it with ':' %(self was a number%)",
        err_of(function() c.bump(2) end))
    end)()
    -- a table: its fields, each function a mock of its own; absent names are errors
    testing.patch('spec_fake_patch_target.inner')(function(m)
      fake.inner.scale(2, 3)
      m.scale:assert_called_once_with(2, 3)
      assert.matches('spec_fake_patch_target.inner: the original has no field shift',
        err_of(function() return fake.inner.shift end))
      assert.matches('not callable', err_of(function() fake.inner(1) end))
    end)()
  end)

  it('a function as the replacement is called through a recording mock; a value goes in as it is', function()
    testing.patch('spec_fake_patch_target.add', function(a, b) return a * b end)(function(m)
      assert.are.equal(12, fake.add(3, 4))
      m:assert_called_once_with(3, 4)
    end)()
    testing.patch('spec_fake_patch_target.limit', 3)(function(v)
      assert.are.equal(3, v)
      assert.are.equal(3, fake.limit)
    end)()
    assert.are.equal(10, fake.limit)
    local fake_module = setmetatable({}, { __index = { scale = function() return 'fake' end } })
    testing.patch(fake, 'inner', fake_module)(function()
      assert.are.equal('fake', fake.inner.scale())
    end)()
    testing.patch(fake, 'limit', { new = false })(function() assert.is_false(fake.limit) end)()
    assert.are.equal(10, fake.limit)
  end)

  it('options: return_value, side_effect as an error, wraps = true (a spy), create', function()
    testing.patch('spec_fake_patch_target.add', { return_value = 42 })(function(m)
      assert.are.equal(42, fake.add(1, 1))
      m.return_value = 5
      assert.are.equal(5, fake.add(1, 1))
    end)()
    testing.patch('spec_fake_patch_target.add', { side_effect = 'refused' })(function()
      assert.matches('refused', err_of(function() fake.add(1, 2) end))
    end)()
    testing.patch('spec_fake_patch_target.add', { wraps = true })(function(m)
      assert.are.equal(7, fake.add(3, 4))
      m:assert_called_once_with(3, 4)
    end)()
    assert.matches("patch: 'spec_fake_patch_target.missing' does not exist %(create = true",
      err_of(function() testing.patch('spec_fake_patch_target.missing')(function() end)() end))
    testing.patch('spec_fake_patch_target.missing', { create = true, return_value = 1 })(function()
      assert.are.equal(1, fake.missing())
    end)()
    assert.is_nil(rawget(fake, 'missing'))
  end)

  it('patches a module reached by the longest requirable prefix, and tensors compare by value', function()
    local F = chainer.functions
    local relu = F.relu
    testing.patch('chainer.functions.relu')(function(m)
      F.relu(T.array({ 1, -1 }))
      assert.is_true(m:called_with(T.array({ 1, -1 })))
      assert.is_false(m:called_with(T.array({ 1, 1 })))
    end)()
    assert.are.equal(relu, F.relu)
  end)

  it('an inherited method is shadowed on the class and uncovered again', function()
    local Sub = Counter:extend('PatchSub')
    testing.patch(Sub, 'bump', function(self) return -1 end)(function()
      assert.are.equal(-1, Sub():bump())
      assert.are.equal(1, Counter():bump())
    end)()
    assert.is_nil(rawget(Sub, 'bump'))
    assert.are.equal(1, Sub():bump())
  end)

  it('start and stop, for before_each and after_each', function()
    local p = testing.patch('spec_fake_patch_target.limit', 1)
    assert.are.equal(1, p:start())
    assert.are.equal(1, fake.limit)
    p:stop()
    assert.are.equal(10, fake.limit)
    assert.matches("patch: stop without start %('spec_fake_patch_target.limit' is not patched%)",
      err_of(function() p:stop() end))
  end)

  it('mock assertions name the mock and the calls', function()
    testing.patch('spec_fake_patch_target.add')(function(m)
      assert.matches('spec_fake_patch_target.add: expected a call, there was none', err_of(function() m:assert_called() end))
      fake.add(1, 'x')
      assert.matches('spec_fake_patch_target.add: the last call was with %(1, "x"%), expected %(1, 2%)',
        err_of(function() m:assert_called_with(1, 2) end))
      assert.matches('expected no call, there were 1', err_of(function() m:assert_not_called() end))
      m:reset_mock()
      m:assert_not_called()
    end)()
  end)

  it('bad arguments are errors that say what was expected', function()
    assert.matches("patch: the target must be 'module.field'", err_of(function() testing.patch('nodots') end))
    assert.matches("patch: no module named by the start of 'no_such_module_xyz.f'",
      err_of(function() testing.patch('no_such_module_xyz.f') end))
    assert.matches("patch: unknown option 'autospecc'",
      err_of(function() testing.patch('spec_fake_patch_target.add', { autospecc = true }) end))
    assert.matches('patch: new and return_value cannot be given together',
      err_of(function() testing.patch('spec_fake_patch_target.add', { new = 1, return_value = 2 }) end))
    assert.matches("patch: 'spec_fake_patch_target.limit' is a number, not a function or a table",
      err_of(function() testing.patch('spec_fake_patch_target.limit')(function() end)() end))
    assert.matches('patch: wrap a function', err_of(function() testing.patch('spec_fake_patch_target.add')(3) end))
    assert.matches('patch: patch%(table, key, ...%) needs a string or number key',
      err_of(function() testing.patch(fake) end))
  end)

  it('works next to busted\'s own stub and spy', function()
    local s = stub(fake, 'sum')
    testing.patch('spec_fake_patch_target.add')(function(m)
      fake.sum(1)
      fake.add(1, 2)
      assert.stub(s).was.called_with(1)
      m:assert_called_once_with(1, 2)
    end)()
    s:revert()
    assert.are.equal(6, fake.sum(1, 2, 3))
  end)
end)
