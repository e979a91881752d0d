-- chainer.repl.show / repl.rewrite / repl.preload: how the REPL prints
-- values, reads ?obj, and which globals it (and chainlua -e) start with.
local chainer = require 'chainer'
local L = require 'chainer.links'
local S = require 'chainer.repl.show'
local repl = require 'chainer.repl'

describe('repl.show', function()
  it('prints shapes as Chainer does', function()
    assert.are.equal('(2, 3)', S.value(chainer.tensor.zeros { 2, 3 }.shape))
    assert.are.equal('(5,)', S.value({ 5 }))
  end)

  it('prints plain tables as Lua, nested, cut when long or deep', function()
    assert.are.equal('{}', S.value({}))
    assert.are.equal('{1, "a", b = {c = 2}, ["x y"] = true}', S.value({ 1, 'a', b = { c = 2 }, ['x y'] = true }))
    local long = {}
    for i = 1, 20 do long[i] = 'v' .. i end
    assert.matches(', %.%.%.}$', S.value(long))
    assert.are.equal('{a = {b = {c = {...}}}}', S.value({ a = { b = { c = { d = 1 } } } }))
    local cyc = {}
    cyc.self = cyc
    assert.are.equal('{self = {<cycle>}}', S.value(cyc))
  end)

  it('summarises datasets and iterators by class, length and plain fields', function()
    local ds = chainer.datasets.TupleDataset({ 1, 2, 3 }, { 4, 5, 6 })
    assert.are.equal('TupleDataset(len=3)', S.value(ds))
    local it = chainer.iterators.SerialIterator(ds, 2)
    local s = S.value(it)
    assert.matches('^SerialIterator%(', s)
    assert.matches('batch_size=2', s, 1, true)
    assert.matches('epoch=0', s, 1, true)
  end)

  it('keeps __tostring for tensors, links and classes; strings print raw at the top', function()
    assert.are.equal(tostring(chainer.tensor.arange(3)), S.value(chainer.tensor.arange(3)))
    assert.matches('^Linear%(in_size=2, out_size=3', S.value(L.Linear(2, 3)))
    assert.are.equal('class Linear', S.value(L.Linear))
    assert.are.equal('a b', S.value('a b'))
    assert.are.equal('1\tnil\t{s = "q"}', S.values(1, nil, { s = 'q' }))
  end)

  it('shows a failing __tostring instead of raising', function()
    local bad = setmetatable({}, { __tostring = function() error('tostring exploded') end })
    assert.matches('tostring failed', S.value(bad))
  end)
end)

describe('repl.rewrite', function()
  it('turns ?obj into a chunk returning help text, and leaves code alone', function()
    assert.are.equal('return require("chainer.repl.help").text("F.relu")', repl.rewrite('?F.relu'))
    assert.are.equal('return require("chainer.repl.help").text("x:reshape")', repl.rewrite('  ? x:reshape  '))
    assert.are.equal('x = 1', repl.rewrite('x = 1'))
  end)
end)

describe('repl.preload', function()
  it('sets chainer, F, L, optimizers and help', function()
    local env = {}
    repl.preload(env)
    assert.are.equal(chainer, env.chainer)
    assert.are.equal(require 'chainer.functions', env.F)
    assert.are.equal(L, env.L)
    assert.are.equal(require 'chainer.optimizers', env.optimizers)
    assert.are.equal('function', type(env.help))
  end)

  it('keeps a help the user already has', function()
    local mine = function() end
    local env = { help = mine }
    repl.preload(env)
    assert.are.equal(mine, env.help)
  end)
end)
