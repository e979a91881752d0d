-- The chainlua executable's allocator for Lua objects (runtime/host/lua_heap.c):
-- programs compute the same under it as under LuaJIT's own, memory freed by
-- the collector is reused, and CHAINLUA_LUA_HEAP takes only its two values.
local U = require 'host.util'
local q = U.quote

-- Objects of every small size class and beyond (tables whose hash and array
-- parts grow past the small limit and shrink again, strings from 1 byte to
-- 4 KB, closures, coroutines, cdata), kept, dropped, collected, resized;
-- prints a digest of what survives.
local CHURN = [[
local ffi = require 'ffi'
local keep, digest = {}, 0
for round = 1, 6 do
  local live = {}
  for i = 1, 3000 do
    local t = {}
    for k = 1, i % 70 do t['k' .. k] = k end          -- hash parts 1..128 nodes
    for k = 1, i % 90 do t[k] = k * round end          -- array parts up to 90 slots
    live[#live + 1] = t
    live[#live + 1] = string.rep(string.char(65 + i % 26), i % 4096 + 1)
    local up = i
    live[#live + 1] = function() return up + round end
    live[#live + 1] = ffi.new('double[?]', i % 80 + 1, i)
    if i % 97 == 0 then live[#live + 1] = coroutine.create(function(x) coroutine.yield(x + 1) end) end
  end
  for i = #live, 1, -3 do table.remove(live, i) end    -- drop a third, resize the rest
  collectgarbage()
  for i = 1, #live, 7 do
    local v = live[i]
    if type(v) == 'table' then for k = 1, 40 do v['n' .. k] = k end; v[#v + 1] = 1 end
  end
  -- (a sum, not a running hash: pairs' order follows LuaJIT's seeded string hash)
  for i, v in ipairs(live) do
    local d = 0
    if type(v) == 'table' then
      for k, x in pairs(v) do d = d + x * (type(k) == 'number' and k or #k + k:byte(2)) end
    elseif type(v) == 'string' then d = #v + v:byte(1)
    elseif type(v) == 'function' then d = v()
    elseif type(v) == 'cdata' then d = v[0] end
    digest = (digest + d * (i % 1009)) % 1000000007
  end
  keep[round % 2 + 1] = live
end
print(digest)
]]

-- RSS in KiB after churning and collecting `mb` MB of small tables.
local REUSE = [[
local function rss()
  local f = io.open('/proc/self/statm') local s = f:read('*l') f:close()
  return tonumber(s:match('^%d+%s+(%d+)')) * 4
end
local function churn()
  local t = {}
  for i = 1, 400000 do t[i] = { i, i, a = i, b = i } end
  t = nil
  collectgarbage() collectgarbage()
end
churn()
local after_first = rss()
for _ = 1, 5 do churn() end
print(after_first, rss())
]]

describe('chainlua executable: Lua heap', function()
  local dir
  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    os.execute('mkdir -p ' .. q(dir))
    U.write(dir .. '/churn.lua', CHURN)
    U.write(dir .. '/reuse.lua', REUSE)
    U.write(dir .. '/grads.lua', [[
local chainer = require 'chainer'
local T = chainer.tensor
local a = chainer.Variable(T.full({ 10 }, 1.001))
local b = chainer.Variable(T.full({ 10 }, 0.001))
local x = chainer.Variable(T.linspace(0, 1, 10))
for _ = 1, 30 do
  local h = x
  for _ = 1, 50 do h = h * a + b end
  require('chainer.functions').sum(h):backward()
end
print(string.format('%.9g %.9g %.9g', x.grad:sum():item(), a.grad:sum():item(), b.grad:sum():item()))
]])
  end)
  teardown(function() os.execute('rm -rf ' .. q(dir)) end)

  it('computes what LuaJIT\'s own allocator computes', function()
    for _, script in ipairs({ 'churn.lua', 'grads.lua' }) do
      local ours, oerr, ost = U.chainlua(q(dir .. '/' .. script))
      local theirs, terr, tst = U.chainlua(q(dir .. '/' .. script), { env = 'CHAINLUA_LUA_HEAP=luajit' })
      assert.are.equal(0, ost, oerr)
      assert.are.equal(0, tst, terr)
      assert.is_true(#ours > 1)
      assert.are.equal(theirs, ours)
    end
  end)

  it('reuses the blocks the collector frees', function()
    local out, err, st = U.chainlua(q(dir .. '/reuse.lua'))
    assert.are.equal(0, st, err)
    local first, last = out:match('^(%d+)%s+(%d+)')
    first, last = tonumber(first), tonumber(last)
    -- five more rounds of ~60 MB of tables each: the resident set stays
    -- where the first round left it (a heap that never reused a block would
    -- grow by ~300 MB)
    assert.is_true(last < first + 16 * 1024, string.format('RSS %d KiB after one round, %d after six', first, last))
  end)

  it('takes only chainlua or luajit in CHAINLUA_LUA_HEAP', function()
    local out, err, st = U.chainlua('-e "print(1)"', { env = 'CHAINLUA_LUA_HEAP=chainlua' })
    assert.are.equal(0, st, err)
    assert.are.equal('1\n', out)
    out, err, st = U.chainlua('-e "print(1)"', { env = 'CHAINLUA_LUA_HEAP=jemalloc' })
    assert.are.equal(1, st)
    assert.are.equal('', out)
    assert.matches("CHAINLUA_LUA_HEAP must be 'chainlua' or 'luajit'", err, 1, true)
  end)
end)
