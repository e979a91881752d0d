-- chainer.LinkHook: local and global registration, call order, callback data.
local chainer = require 'chainer'
local H = require 'helpers'
local T = chainer.tensor
local L = chainer.links

-- A hook that appends "<tag>:pre" / "<tag>:post" to a shared log.
local function recorder(log, tag, name)
  local R = chainer.LinkHook:extend('Recorder')
  R.name = name or tag
  function R:forward_preprocess(cb) log[#log + 1] = tag .. ':pre' end
  function R:forward_postprocess(cb) log[#log + 1] = tag .. ':post' end
  function R:added(link) log[#log + 1] = tag .. ':added:' .. (link and 'link' or 'global') end
  function R:deleted(link) log[#log + 1] = tag .. ':deleted:' .. (link and 'link' or 'global') end
  return R()
end

local Double = chainer.Link:extend('Double')
function Double:forward(x, opts) return x * 2, 'second' end

describe('LinkHook', function()
  it('runs local hooks in the order they were added, around the forward', function()
    local log = {}
    local l = Double()
    assert.equal(l, l:add_hook(recorder(log, 'a')))
    l:add_hook(recorder(log, 'b'))
    assert.same({ 'a', 'b' }, l.local_link_hooks.names)
    local y, extra = l(3)
    assert.equal(6, y)
    assert.equal('second', extra)
    assert.same({ 'a:added:link', 'b:added:link', 'a:pre', 'b:pre', 'a:post', 'b:post' }, log)
  end)

  it('runs global hooks before local ones; a local hook with a global name takes its place', function()
    local log = {}
    local l = Double()
    l:add_hook(recorder(log, 'loc'))
    l:add_hook(recorder(log, 'local-g2', 'g2'))
    local g1, g2 = recorder(log, 'g1'), recorder(log, 'g2')
    local other = Double()
    g1:scope(function()
      g2:scope(function()
        for i = #log, 1, -1 do log[i] = nil end
        l(1)
        other(1)
      end)
    end)
    assert.same({ 'g1:pre', 'local-g2:pre', 'loc:pre', 'g1:post', 'local-g2:post', 'loc:post',
      'g1:pre', 'g2:pre', 'g1:post', 'g2:post', 'g2:deleted:global', 'g1:deleted:global' }, log)
  end)

  it('registers a global hook only for its scope, even when the scope raises', function()
    local log = {}
    local g = recorder(log, 'g')
    local l = Double()
    local r = g:scope(function()
      assert.is_not_nil(chainer.get_link_hooks().g)
      return l(2)
    end)
    assert.equal(4, r)
    assert.is_nil(chainer.get_link_hooks().g)
    assert.same({ 'g:added:global', 'g:pre', 'g:post', 'g:deleted:global' }, log)
    H.errors_with(function() g:scope(function() error('boom') end) end, 'boom')
    assert.is_nil(chainer.get_link_hooks().g)
    l(2)   -- no hook left
    assert.equal(6, #log)
  end)

  it('passes the link, the arguments and the output to the callbacks', function()
    local seen = {}
    local Hk = chainer.LinkHook:extend('Seen')
    function Hk:forward_preprocess(cb) seen.pre = cb end
    function Hk:forward_postprocess(cb) seen.post = cb end
    local l = L.Linear(2, 3)
    l:add_hook(Hk())
    local x = T.ones({ 1, 2 })
    local y = l(x)
    assert.equal(l, seen.pre.link)
    assert.equal('forward', seen.pre.forward_name)
    assert.equal(x, seen.pre.args[1])
    assert.equal(1, seen.pre.args.n)
    assert.equal(y, seen.post.out)
    assert.same({ 'Seen' }, l.local_link_hooks.names)   -- the default name is the class name
  end)

  it('still runs forward_postprocess when the forward raises, then re-raises', function()
    local post
    local Hk = chainer.LinkHook:extend('Post')
    function Hk:forward_postprocess(cb) post = cb end
    local Bad = chainer.Link:extend('Bad')
    function Bad:forward() error('bad forward', 0) end
    local l = Bad()
    l:add_hook(Hk())
    H.errors_with(function() l() end, 'bad forward')
    assert.equal('bad forward', post.error)
    assert.is_nil(post.out)
  end)

  it('refuses a second hook under one name, unknown names and non-hooks', function()
    local log = {}
    local l = Double()
    l:add_hook(recorder(log, 'a'))
    H.errors_with(function() l:add_hook(recorder(log, 'a')) end, "add_hook", "'a'", 'already registered')
    l:add_hook(recorder(log, 'a'), 'other')       -- the same kind under another name is fine
    H.errors_with(function() l:delete_hook('nope') end, 'delete_hook', "'nope'")
    H.errors_with(function() l:add_hook({}) end, 'add_hook', 'chainer.LinkHook')
    H.errors_with(function() l:add_hook(recorder(log, 'z'), 'names') end, 'add_hook', "'names'")
    local g = recorder(log, 'g')
    H.errors_with(function() g:scope(function() g:scope(function() end) end) end, "'g'", 'already registered')
    H.errors_with(function() g:scope(42) end, 'scope', 'function')
  end)

  it('delete_hook calls deleted and returns the link to the plain path', function()
    local log = {}
    local l = Double()
    l:add_hook(recorder(log, 'a'))
    l:add_hook(recorder(log, 'b'))
    l:delete_hook('a')
    assert.same({ 'b' }, l.local_link_hooks.names)
    assert.is_nil(l.local_link_hooks.a)
    l:delete_hook('b')
    assert.is_nil(rawget(l, 'local_link_hooks'))
    assert.same({ names = {} }, l.local_link_hooks)
    assert.same({ 'a:added:link', 'b:added:link', 'a:deleted:link', 'b:deleted:link' }, log)
    assert.equal(8, l(4))
  end)

  it('does nothing in the base class', function()
    local l = Double()
    l:add_hook(chainer.LinkHook())
    assert.same({ 'LinkHook' }, l.local_link_hooks.names)
    assert.equal(2, l(1))
  end)
end)
