-- chainer.repl.help: help(obj) and ?obj find signatures and summaries in
-- the docs index (repl/help_index.lua, generated from docs/).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local optimizers = require 'chainer.optimizers'
local H = require 'chainer.repl.help'
local helpers = require 'helpers'

local function first_line(s) return s:match('^[^\n]*') end

describe('repl.help', function()
  it('gives the signature, the summary and the page of a function', function()
    local text = H.text(F.relu)
    assert.are.equal('F.relu(x)', first_line(text))
    assert.matches('max%(x, 0%)', text)
    assert.matches('%(docs/functions/activation%.md%)', text)
  end)

  it('covers links, optimizers, tensor functions and tensor methods', function()
    assert.matches('^L%.Linear%(in_size, out_size', H.text(L.Linear))
    assert.matches('^L%.Linear%(', H.text(L.Linear(2, 3)))          -- an instance: its class
    assert.matches('^optimizers%.Adam%(alpha=0%.001', H.text(optimizers.Adam))
    assert.matches('^T%.arange%(stop%)', H.text(chainer.tensor.arange))
    local x = chainer.tensor.arange(6)
    assert.matches('^t:reshape%(shape%)', H.text(x, 'reshape'))
    assert.matches('^Variable:backward', H.text(chainer.Variable(x), 'backward'))
    assert.matches('^Link:cleargrads%(%)', H.text(L.Linear(2, 3), 'cleargrads'))
  end)

  it('reads the source text ?obj passes, methods written with a colon', function()
    _G.help_spec_x = chainer.tensor.arange(6)
    assert.matches('^t:reshape%(shape%)', H.text('help_spec_x:reshape'))
    _G.help_spec_x = nil
    assert.matches('^F%.relu%(x%)', H.text('relu'))   -- a documented name that is no global
    assert.matches('^T%.zeros%(shape', H.text('T.zeros'))
  end)

  it('says what it does not know instead of failing', function()
    assert.matches('^help: no documentation for', H.text(print))
    assert.matches('not in the docs', H.text('nosuch_name'))
    assert.matches('has no method nosuch', H.text(chainer.tensor.arange(2), 'nosuch'))
    assert.matches('^help%(obj%) or %?obj', H.text())
  end)

  it('gives a tensor method listed by name only the signature of its function', function()
    local text = H.text(chainer.tensor.arange(3), 'sum')
    assert.matches('^T%.sum%(x, {axis', text)
    assert.matches('\nTensor:sum\n  result dtype:', text)
  end)

  it('lists what a namespace holds', function()
    _G.help_spec_ns = { alpha = 1, beta = function() end }
    assert.are.equal('help_spec_ns: a table of 2 names: alpha beta\n  help(help_spec_ns.name) for one; ' ..
      'help_spec_ns.<Tab> lists them', H.text('help_spec_ns'))
    _G.help_spec_ns = nil
    assert.matches('^table: a table of %d+ names: ', H.text(F))
  end)

  it('describes a tensor by its shape', function()
    assert.matches('^a tensor of shape %(2, 3%), float32', H.text(chainer.tensor.zeros { 2, 3 }))
  end)

  it('finds every documented chainer.functions member', function()
    local index = require 'chainer.repl.help_index'
    local missing = {}
    for name, fn in pairs(require('chainer.functions._index').all()) do
      if type(fn) == 'function' and name:match('^[a-z]') and name ~= 'repeat' and not index.F[name] then
        missing[#missing + 1] = name
      end
    end
    table.sort(missing)
    -- the family pages document every function (docs/functions.md checks it too)
    assert.are.same({}, missing)
  end)
end)

describe('repl/help_index.lua', function()
  it('is up to date with docs/ (run luajit scripts/gen-help-index.lua lua/chainer/repl/help_index.lua)', function()
    local want = helpers.generator_output('scripts/gen-help-index.lua')
    local got = helpers.read_file('lua/chainer/repl/help_index.lua')
    assert.is_true(want == got, 'lua/chainer/repl/help_index.lua is stale: run luajit scripts/gen-help-index.lua ' ..
      'lua/chainer/repl/help_index.lua')
  end)
end)
