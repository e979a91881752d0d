-- Link, Chain, ChainList, Sequential: registration, traversal, copies, devices, printing.
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions
local Parameter = chainer.Parameter

local function names_of(iter)
  local out = {}
  for n in iter do out[#out + 1] = n end
  return out
end

local MLP = chainer.Chain:extend('MLP')
function MLP:init(n_units, n_out)
  self.l2 = L.Linear(nil, n_out)
  self.l1 = L.Linear(nil, n_units)
end
function MLP:forward(x) return self.l2(F.relu(self.l1(x))) end

describe('Link', function()
  it('registers parameters assigned inside init and not outside', function()
    local P = chainer.Link:extend('P')
    function P:init()
      self.b = Parameter(T.zeros({ 2 }))
      self.a = Parameter(T.ones({ 3 }))
    end
    local p = P()
    assert.same({ '/a', '/b' }, names_of(p:namedparams()))
    p.c = Parameter(T.ones({ 1 }))            -- outside init: a plain field
    assert.same({ '/a', '/b' }, names_of(p:namedparams()))
    p:init_scope(function() p.d = Parameter(T.ones({ 1 })) end)
    assert.same({ '/a', '/b', '/d' }, names_of(p:namedparams()))
    assert.equal('d', p.d.name)
    assert.is_false(p.within_init_scope)
  end)

  it('add_param, add_persistent, register_persistent and their errors', function()
    local l = chainer.Link()
    local W = l:add_param('W', { 2, 3 })
    assert.same({ 2, 3 }, W.shape)
    assert.is_true(W.array:isnan():all():item())        -- NaN until initialised
    l:add_param('b', { 2 }, { initializer = chainer.initializers.Constant(5) })
    assert.equal(5, l.b.array:get(1))
    l:add_param('u')                                      -- lazy
    assert.is_nil(l.u.array)
    assert.equal(2, #names_of(l:params { include_uninit = false }))
    assert.equal(3, #names_of(l:params()))
    assert.has_error(function() l:add_param('W', { 1 }) end,
      "add_param: cannot register a new parameter 'W': the attribute already exists")
    l:add_persistent('count', 3)
    assert.equal(3, l.count)
    l.extra = T.ones({ 2 })
    l:register_persistent('extra')
    assert.has_error(function() l:register_persistent('nope') end)
    local d = chainer.serializers.DictionarySerializer()
    d:save(l)
    local keys = {}
    for k in pairs(d.target) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.same({ 'W', 'b', 'count', 'extra' }, { keys[1], keys[2], keys[3], keys[4] })
  end)

  it('Link{W = shape} (Chainer v1 keyword form)', function()
    local l = chainer.Link { W = { 2, 2 }, b = 2 }
    assert.same({ '/W', '/b' }, names_of(l:namedparams()))
  end)

  it('cleargrads, zerograds, addgrads, copyparams, count_params', function()
    local a, b = L.Linear(3, 2), L.Linear(3, 2)
    a.W.grad = T.ones({ 2, 3 })
    a:cleargrads()
    assert.is_nil(a.W.grad)
    a:zerograds()
    assert.equal(0, a.W.grad:sum():item())
    b.W.grad = T.full({ 2, 3 }, 2)
    b.b.grad = T.full({ 2 }, 1)
    a:addgrads(b)
    assert.equal(12, a.W.grad:sum():item())
    a:copyparams(b)
    assert.equal(0, (a.W.array - b.W.array):abs():max():item())
    assert.equal(8, a:count_params())
  end)

  it('update switches', function()
    local m = MLP(3, 2)
    assert.is_true(m.update_enabled)
    m:disable_update()
    assert.is_false(m.update_enabled)
    m.l1:enable_update()
    assert.is_true(m.update_enabled)
  end)

  it('device and xp', function()
    local l = L.Linear(2, 2)
    assert.equal('cpu', l.device)
    assert.equal(T, l.xp)
    assert.equal(l, l:to_cpu())
    assert.equal(l, l:to_device('cpu'))
  end)

  it('calling a link without forward is an error', function()
    assert.has_error(function() chainer.Link()(1) end)
  end)
end)

describe('Chain', function()
  it('traverses parameters and links sorted by name', function()
    local m = MLP(4, 2)
    m(T.ones({ 1, 3 }))
    assert.same({ '/l1/W', '/l1/b', '/l2/W', '/l2/b' }, names_of(m:namedparams()))
    assert.same({ '/', '/l1', '/l2' }, names_of(m:namedlinks()))
    assert.same({ '/l1', '/l2' }, names_of(m:namedlinks { skipself = true }))
    local kids = {}
    for c in m:children() do kids[#kids + 1] = c end
    assert.equal(m.l1, kids[1])
    assert.equal(m.l2, kids[2])
    local ls = {}
    for l in m:links() do ls[#ls + 1] = l end
    assert.equal(3, #ls)
    assert.equal('l1', m.l1.name)
    assert.equal(4 * 3 + 4 + 2 * 4 + 2, m:count_params())
  end)

  it('nested chains give Chainer paths', function()
    local model = L.Classifier(MLP(3, 2))
    model.predictor(T.ones({ 1, 5 }))
    assert.same({ '/predictor/l1/W', '/predictor/l1/b', '/predictor/l2/W', '/predictor/l2/b' },
      names_of(model:namedparams()))
  end)

  it('Chain{name = link} and add_link', function()
    local c = chainer.Chain { b = L.Linear(2, 2), a = L.Linear(2, 3) }
    assert.same({ '/', '/a', '/b' }, names_of(c:namedlinks()))
    c:add_link('z', L.Linear(1, 1))
    assert.same({ '/', '/a', '/b', '/z' }, names_of(c:namedlinks()))
    assert.has_error(function() c:add_link('a', L.Linear(1, 1)) end)
    assert.has_error(function() c:add_link('q', 3) end, 'add_link: expected a Link (got number)')
  end)

  it('copy modes', function()
    local m = MLP(3, 2)
    m(T.ones({ 1, 2 }))
    m.l1.W.grad = T.ones({ 3, 2 })
    local s = m:copy()                                 -- share
    assert.are_not.equal(m.l1, s.l1)
    assert.are_not.equal(m.l1.W, s.l1.W)
    assert.equal(m.l1.W.array, s.l1.W.array)          -- same tensor
    assert.is_nil(s.l1.W.grad)
    assert.is_nil(s.name)
    local c = m:copy { mode = 'copy' }
    assert.are_not.equal(m.l1.W.array, c.l1.W.array)
    assert.equal(0, (m.l1.W.array - c.l1.W.array):abs():max():item())
    c.l1.W.array:fill_(7)
    assert.are_not.equal(7, m.l1.W.array:get(0, 0))
    local i = m:copy('init')
    assert.is_true((m.l1.W.array - i.l1.W.array):abs():max():item() > 0)
    assert.same({ '/l1/W', '/l1/b', '/l2/W', '/l2/b' }, names_of(i:namedparams()))
    assert.has_error(function() m:copy('deep') end)
  end)

  it('repeat_ makes a Sequential of copies', function()
    local l = L.Linear(2, 2)
    local s = l:repeat_(3)
    assert.equal(3, #s)
    assert.are_not.equal(s[1].W.array, s[2].W.array)
    local sh = l:repeat_(2, { mode = 'share' })
    assert.equal(l.W.array, sh[2].W.array)
    assert.equal(0, #l:repeat_(0))
  end)

  it('prints the hierarchy', function()
    local m = MLP(3, 2)
    assert.equal('MLP(\n  (l1): Linear(in_size=nil, out_size=3, nobias=false),\n' ..
      '  (l2): Linear(in_size=nil, out_size=2, nobias=false),\n)', tostring(m))
  end)
end)

describe('ChainList', function()
  it('is 1-based in Lua and named 0, 1, ... in paths', function()
    local cl = chainer.ChainList(L.Linear(2, 3), L.Linear(3, 4))
    assert.equal(2, #cl)
    assert.equal(3, cl[1].out_size)
    assert.equal('0', cl[1].name)
    assert.same({ '/0/W', '/0/b', '/1/W', '/1/b' }, names_of(cl:namedparams()))
    cl:add_link(L.Linear(4, 1))
    assert.equal(3, cl:len())
    assert.equal('/2', names_of(cl:namedlinks())[4])
    local c = cl:copy()
    assert.equal(cl[3].W.array, c[3].W.array)
    assert.equal('2', c[3].name)
  end)

  it('rejects registration by assignment in init', function()
    local Bad = chainer.ChainList:extend('Bad')
    function Bad:init() self.x = L.Linear(1, 1) end
    assert.has_error(function() Bad() end)
  end)
end)

describe('Sequential', function()
  it('applies links and plain functions in order', function()
    local l1 = L.Linear(2, 3, { initialW = 1, initial_bias = -4 })
    local s = chainer.Sequential(l1, F.relu)
    local y = s(T.array({ { 1, 2 } }))
    assert.same({ { 0, 0, 0 } }, y.array:totable())
    s:append(function(v) return v + 1 end)
    assert.same({ { 1, 1, 1 } }, s(T.array({ { 1, 2 } })).array:totable())
    assert.equal(3, #s)
  end)

  it('insert, remove, pop keep the link names as Chainer', function()
    local a, b, c = L.Linear(1, 1), L.Linear(1, 1), L.Linear(1, 1)
    local s = chainer.Sequential(a, F.relu, c)
    s:insert(2, b)
    assert.equal(b, s[2])
    assert.same({ '0', '1', '2' }, { a.name, b.name, c.name })
    assert.same({ '/0/W', '/0/b', '/1/W', '/1/b', '/2/W', '/2/b' }, names_of(s:namedparams()))
    s:remove(a)
    assert.equal(b, s[1])
    assert.equal('0', b.name)
    assert.equal(c, s:pop())
    assert.equal(2, #s)
    assert.is_nil(s[3])
    assert.has_error(function() s:insert(9, a) end)
    assert.has_error(function() s:append(3) end, 'append: a layer must be a Link or a callable (got number)')
    assert.has_error(function() chainer.Sequential()(1) end)
  end)

  it('repeat_ repeats the whole sequence', function()
    local s = chainer.Sequential(L.Linear(2, 2), F.relu)
    local r = s:repeat_(2)
    assert.equal(4, #r)
    assert.equal(F.relu, r[4])
    assert.equal(2, #names_of(r:children()))
  end)

  it('copy shares arrays and remaps layers', function()
    local s = chainer.Sequential(L.Linear(2, 2), F.relu)
    local c = s:copy()
    assert.are_not.equal(s[1], c[1])
    assert.equal(s[1].W.array, c[1].W.array)
    assert.equal(F.relu, c[2])
    assert.equal(c[1], c._children[1])
  end)
end)
