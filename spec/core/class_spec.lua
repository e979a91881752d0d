-- Specs for the class helper (chainer.class).
local chainer = require 'chainer'

describe('class helper', function()
  it('extend, init, methods, inheritance and isinstance', function()
    local Base = chainer.Object:extend('Base')
    function Base:init(n) self.n = n end
    function Base:twice() return 2 * self.n end
    local Child = Base:extend('Child')
    function Child:init(n, m)
      Child.super.init(self, n)
      self.m = m
    end
    function Child:sum() return self.n + self.m end
    local c = Child(3, 4)
    assert.are.equal(6, c:twice())
    assert.are.equal(7, c:sum())
    assert.is_true(chainer.isinstance(c, Base))
    assert.is_true(chainer.isinstance(c, Child))
    assert.is_false(chainer.isinstance(Base(1), Child))
    assert.is_true(chainer.class.issubclass(Child, Base))
    assert.are.equal('Child', Child.__name)
    assert.are.equal('class Child', tostring(Child))
  end)

  it('copies metamethods to subclasses (__call forwarding to forward)', function()
    local Callable = chainer.Object:extend('Callable')
    Callable.__call = function(self, ...) return self:forward(...) end
    local Doubler = Callable:extend('Doubler')
    function Doubler:forward(x) return 2 * x end
    assert.are.equal(10, Doubler()(5))
  end)

  it('rejects bad names', function()
    assert.is_false(pcall(chainer.Object.extend, chainer.Object, 5))
  end)
end)
