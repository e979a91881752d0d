-- chainer.utils.final / enable_final: methods a subclass may not override.
local chainer = require 'chainer'
local utils = chainer.utils
local testing = require 'chainer.testing'

local err_of = require('helpers').err_of

describe('chainer.utils.final', function()
  it('refuses an override of a final method at every depth below enable_final', function()
    local Base = utils.enable_final():extend('Base')
    Base.update = utils.final(function(self) return 'base' end)
    function Base:other() return 1 end
    local Sub = Base:extend('Sub')
    assert.matches("Sub: method 'update' is final.", err_of(function() function Sub:update() end end), 1, true)
    function Sub:other() return 2 end                  -- not final: allowed
    assert.are.same({ 'base', 2 }, { Sub():update(), Sub():other() })
    local Deeper = Sub:extend('Deeper')
    assert.matches("Deeper: method 'update' is final.", err_of(function() Deeper.update = print end), 1, true)
    assert.are.equal('base', Deeper():update())
  end)

  it('warns instead with a warning category as the action, and lets the override through', function()
    local Base = utils.enable_final():extend('Base')
    Base.soft = utils.final(function() return 'base' end, { action = 'FutureWarning' })
    local Sub = Base:extend('Sub')
    testing.assert_warns('FutureWarning', function() Sub.soft = function() return 'sub' end end,
      { match = "Overriding method 'soft'" })
    assert.are.equal('sub', Sub.soft())
  end)

  it('works below chainlua\'s own classes (a Chain) and leaves other classes alone', function()
    local L = utils.enable_final(chainer.Chain):extend('L')
    L.forward = utils.final(function(self, x) return x end)
    local M = L:extend('M')
    assert.matches("M: method 'forward' is final.", err_of(function() function M:forward(x) end end), 1, true)
    assert.are.equal(3, M():forward(3))
    assert.is_true(chainer.class.Object.issubclass(M, chainer.Chain))
    -- final outside an enable_final hierarchy marks, but nothing checks (as Chainer's)
    local Plain = chainer.Chain:extend('Plain')
    Plain.forward = utils.final(function(self, x) return x end)
    local P2 = Plain:extend('P2')
    function P2:forward(x) return 2 * x end
    assert.are.equal(6, P2():forward(3))
  end)

  it('checks its arguments', function()
    assert.matches('final: expected the method %(a function%) to mark final %(got number%)', err_of(utils.final, 3))
    assert.matches("final: action must be 'error' or a warning category", err_of(utils.final, print,
      { action = 'TypeError' }))
    assert.matches("final: unknown option 'actoin'", err_of(utils.final, print, { actoin = 'error' }))
    assert.matches('enable_final: base must be a chainlua class %(got number%)', err_of(utils.enable_final, 3))
    assert.matches('enable_final: meta_base', err_of(utils.enable_final, nil, {}))
  end)
end)
