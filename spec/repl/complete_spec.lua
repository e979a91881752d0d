-- chainer.repl.complete: what Tab offers, tested on plain strings (the
-- terminal side is checked in spec/host/repl_spec.lua).
local chainer = require 'chainer'
local L = require 'chainer.links'
local C = require 'chainer.repl.complete'
local fs = require 'chainer._fs'

-- candidates for the end of `line`, in an environment of our own
local function cands(line, env)
  local start, list = C.candidates(line, env)
  return list, start
end

local function has(list, v)
  for _, x in ipairs(list) do if x == v then return true end end
  return false
end

describe('repl.complete', function()
  local env = setmetatable({ chainer = chainer, L = L }, { __index = _G })
  env.x = chainer.tensor.arange(6)
  env.v = chainer.Variable(chainer.tensor.ones { 2 })
  env.l = L.Linear(3, 2)

  it('completes a field along a chain of names', function()
    local list, start = cands('y = chainer.tensor.ara', env)
    assert.are.same({ 'chainer.tensor.arange' }, list)
    assert.are.equal(5, start)
  end)

  it("completes a tensor's methods through its FFI metatype", function()
    local list = cands('x:re', env)
    assert.is_true(has(list, 'x:reshape'))
    assert.is_true(has(list, 'x:relu'))
    for _, c in ipairs(list) do assert.matches('^x:re', c) end
  end)

  it("completes a tensor's properties after a dot", function()
    assert.are.same({ 'x.shape' }, (cands('x.sha', env)))
  end)

  it('follows the class chain of instances (methods of the parents, properties)', function()
    assert.are.same({ 'v:backward' }, (cands('v:backw', env)))
    assert.is_true(has(cands('v.gr', env), 'v.grad'))
    assert.are.same({ 'l:cleargrads' }, (cands('l:clearg', env)))   -- Link's method on a Linear
    assert.is_true(has(cands('l.W.ar', env), 'l.W.array'))         -- a parameter's property
  end)

  it('offers only functions after a colon', function()
    env.t = { n = 1, f = function() end }
    assert.are.same({ 't:f' }, (cands('t:', env)))
    assert.are.same({ 't.f', 't.n' }, (cands('t.', env)))
  end)

  it('completes globals and keywords for a bare name, hiding _names unless typed', function()
    local e = { chainer = 1, chat = 2, _secret = 3 }
    assert.are.same({ 'chainer', 'chat' }, (cands('print(cha', e)))
    assert.are.same({ 'while' }, (cands('whi', e)))
    assert.are.same({}, (cands('x = ', e)))
    assert.are.same({ '_secret' }, (cands('_se', e)))
  end)

  it('offers nothing inside a comment or after an unknown name', function()
    assert.are.same({}, (cands('x = 1 -- chainer.ten', env)))
    assert.are.same({}, (cands('nosuch.fie', env)))
    assert.are.same({}, (cands('x..y', env)))
  end)

  it('survives fields whose __index raises', function()
    env.bad = setmetatable({}, { __index = function() error('boom') end })
    assert.are.same({}, (cands('bad.x.y', env)))
  end)

  it('completes file names inside a string, folders with a slash', function()
    local dir = os.tmpname()
    os.remove(dir)
    fs.mkdir_p(dir .. '/sub')
    local f = assert(io.open(dir .. '/data.npz', 'wb')); f:close()
    f = assert(io.open(dir .. '/.hidden', 'wb')); f:close()
    local list, start = cands('T.load_npz("' .. dir .. '/da', env)
    assert.are.same({ dir .. '/data.npz' }, list)
    assert.are.equal(#'T.load_npz("' + 1, start)
    assert.are.same({ dir .. '/data.npz', dir .. '/sub/' }, (cands("f('" .. dir .. '/', env)))
    assert.are.same({ dir .. '/.hidden' }, (cands("f('" .. dir .. '/.', env)))
    -- a closed string is code again
    assert.are.same({}, (cands('f("' .. dir .. '/da") .. nosu', env)))
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it('tells code, strings and comments apart', function()
    assert.are.equal('code', C.context('x = "a" .. y'))
    assert.are.equal('string', C.context('x = "a\\"b'))
    assert.are.equal('string', (C.context('x = [[long')))
    assert.are.equal('code', C.context('x = [==[a]]b]==] + 1'))
    assert.are.equal('comment', C.context('x = 1 -- note'))
    assert.are.equal('code', C.context('x = "--" .. y'))
  end)

  it("cuts candidates to the word libedit completes", function()
    -- libedit breaks words at '.' and ':' too: its word is "ara" / "re"
    assert.are.same({ 'arange' }, C.for_readline('chainer.tensor.ara', 15, env))
    local list = C.for_readline('y = x:re', 6, env)
    assert.is_true(has(list, 'reshape'))
    -- a word that started earlier keeps the whole candidate
    assert.are.same({ 'chainer.tensor.arange' }, C.for_readline('chainer.tensor.ara', 0, env))
  end)
end)
