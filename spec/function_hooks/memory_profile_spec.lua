-- CupyMemoryProfileHook: bytes each function takes from the allocators.
local chainer = require 'chainer'
local T = chainer.tensor
local C = require('chainer._lib').C
local Hook = chainer.function_hooks.CupyMemoryProfileHook

-- A node whose forward allocates an output of `n` float32 and holds a
-- float64 temporary of `m` elements until it returns: 4n + 8m bytes.
local Alloc = chainer.FunctionNode:extend('Alloc')
function Alloc:init(n, m) self.n, self.m = n, m end
function Alloc:forward(inputs)
  local tmp = self.m > 0 and T.zeros({ self.m }, 'float64') or nil
  local y = T.zeros({ self.n }, 'float32')
  self.tmp_size = tmp and tmp.size or 0      -- keeps tmp alive to the end
  return { y }
end

-- A node whose forward applies an Alloc inside it (a nested call).
local Outer = chainer.FunctionNode:extend('Outer')
function Outer:forward(inputs)
  local inner = Alloc(100, 0):apply({ inputs[1] })[1]
  return { inner.array + 1 }                  -- 400 more bytes
end

local err_of = require('helpers').err_of

describe('function_hooks.CupyMemoryProfileHook', function()
  before_each(function() collectgarbage() collectgarbage() end)

  it('counts the bytes a call holds at its peak beyond those live at its start', function()
    local hook = Hook()
    local x = T.ones({ 3 })
    hook:scope(function() Alloc(1000, 1000):apply({ x }) end)
    assert.are.equal(1, #hook.call_history)
    local e = hook.call_history[1]
    assert.are.equal('Alloc', e[1])
    assert.are.equal(4 * 1000 + 8 * 1000, e[2])   -- output + temporary
    assert.are.equal(0, e[4])
    assert.are.equal(12000, hook:total_used_bytes())
  end)

  it('counts as acquired what the allocator had to take anew, not what it reused from its cache', function()
    local n = 262144                              -- 1 MiB of float32: a size the CPU cache keeps
    C.ch_cache_free_all(-1)
    local hook = Hook()
    local x = T.ones({ 3 })
    local y
    hook:scope(function() y = Alloc(n, 0):apply({ x })[1] end)
    local first = hook.call_history[1]
    assert.are.equal(4 * n, first[2])
    assert.is_true(first[3] >= 4 * n and first[3] < 4 * n + 65536, 'acquired ' .. first[3])
    y = nil
    collectgarbage() collectgarbage()              -- the block goes back to the cache
    assert.is_true(tonumber(C.ch_cache_bytes(-1)) >= 4 * n)
    hook:scope(function() y = Alloc(n, 0):apply({ x })[1] end)
    local second = hook.call_history[2]
    assert.are.equal(4 * n, second[2])
    assert.is_true(second[3] < 65536, 'acquired ' .. second[3])   -- reused: no new MiB
    assert.are.equal(first[3] + second[3], hook:total_acquired_bytes())
  end)

  it('records nested calls with their depth and totals only the outermost', function()
    local hook = Hook()
    hook:scope(function() Outer():apply({ T.ones({ 2 }) }) end)
    assert.are.equal(2, #hook.call_history)
    local inner, outer = hook.call_history[1], hook.call_history[2]
    assert.are.same({ 'Alloc', 400, 1 }, { inner[1], inner[2], inner[4] })
    assert.are.same({ 'Outer', 800, 0 }, { outer[1], outer[2], outer[4] })
    assert.are.equal(800, hook:total_used_bytes())
  end)

  it('summarises by name and prints Chainer\'s table', function()
    local hook = Hook()
    local x = T.ones({ 3 })
    hook:scope(function()
      Alloc(256, 0):apply({ x })
      Alloc(256, 128):apply({ x })
      Outer():apply({ x })
    end)
    local s = hook:summary()
    assert.are.same({ 'Alloc', 'Outer' }, s.names)
    assert.are.same({ used_bytes = 1024 + 2048 + 400, occurrence = 3 },
      { used_bytes = s.Alloc.used_bytes, occurrence = s.Alloc.occurrence })
    local text = hook:print_report('B', false)
    local lines = {}
    for l in text:gmatch('[^\n]+') do lines[#lines + 1] = l end
    assert.are.equal(3, #lines)
    assert.matches('^FunctionName%s+UsedBytes%s+AcquiredBytes%s+Occurrence$', lines[1])
    assert.matches('^       Alloc%s+3472%.00B%s+%d+%.00B%s+3$', lines[2])
    assert.matches('^       Outer%s+800%.00B%s+%d+%.00B%s+1$', lines[3])
    -- 'auto': each column in the unit of its largest value (3472 B -> KB)
    assert.matches('3%.39KB', hook:print_report(nil, false))
    assert.matches('3%.39KB', hook:print_report('auto_foreach', false))
    assert.matches("unit must be 'auto', 'auto_foreach', 'B'", err_of(hook.print_report, hook, 'kb', false))
  end)

  it('works as a local hook of one node', function()
    local hook = Hook()
    local node = Alloc(10, 0)
    node:add_hook(hook)
    node:apply({ chainer.Variable(T.ones({ 2 })) })
    assert.are.equal(40, hook:total_used_bytes())
    assert.are.equal('CupyMemoryProfileHook', Hook.name)
  end)
end)
