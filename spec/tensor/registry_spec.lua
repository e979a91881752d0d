-- Specs for the tensor handle registry (lua/chainer/tensor/registry.lua):
-- handles have no finalizer; a weak-valued table tells which ones died, and
-- a sweep releases their C references.  Dead tensors must be released after
-- a collection (at once for collectgarbage(), at the next tensor creation
-- otherwise), live ones never, slots are reused, and lua_close releases
-- everything.
local ffi = require 'ffi'
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local C = T.C
local R = T.registry

local function live() return tonumber(C.ch_live_tensors()) end
local function live_bytes() return tonumber(C.ch_live_bytes(-1)) end
local function settle()
  collectgarbage('collect')
  collectgarbage('collect')
end

describe('tensor registry', function()
  it('has handles without a finalizer', function()
    assert.is_nil(getmetatable(T.ones({ 1 })).__gc)
  end)

  it('releases dead tensors when collectgarbage() returns', function()
    settle()
    local t0, b0 = live(), live_bytes()
    for _ = 1, 5000 do local _ = T.ones({ 10 }) + 1 end
    assert.is_true(live() > t0)
    collectgarbage()
    assert.are.equal(t0, live())
    assert.are.equal(b0, live_bytes())
  end)

  it('releases them without an explicit collection (the next tensor creation sweeps)', function()
    settle()
    local t0, r0 = live(), R.stats().released
    local n = 200000
    for _ = 1, n do local _ = T.ones({ 10 }) end
    -- the collector ran cycles on its own and the sweeps released most
    assert.is_true(R.stats().released - r0 > n / 2)
    assert.is_true(live() - t0 < n / 2)
  end)

  it('collects when many tensors were made since the last sweep, with little Lua garbage', function()
    settle()
    local held0 = R.stats().held
    local most = 0
    -- 30,000 tiny tensors: ~3 MB of C memory, far below the byte allowance,
    -- and too little Lua garbage to be sure of a collection cycle
    for _ = 1, 30000 do
      local _ = T.zeros({ 4 })
      local held = R.stats().held
      if held > most then most = held end
    end
    -- a collection is due once max(4096, 2 x held after a sweep) were made
    assert.is_true(most <= 3 * held0 + 4096 + 64, string.format('%d slots held at most (%d at the start)', most, held0))
  end)

  it('never releases a tensor that is still referenced', function()
    settle()
    local keep = {}
    for i = 1, 300 do keep[i] = T.full({ 4 }, i) end
    for _ = 1, 3 do
      for _ = 1, 20000 do local _ = T.ones({ 10 }) end
      collectgarbage()
    end
    for i = 1, 300 do assert.are.equal(4 * i, keep[i]:sum():item()) end
  end)

  it('reuses slots: a loop of create and drop does not grow it', function()
    local function round()
      for _ = 1, 2000 do local _ = T.ones({ 3 }) * 2 end
      collectgarbage()
    end
    round()
    round()
    local used = R.stats().used
    for _ = 1, 20 do round() end
    assert.are.equal(used, R.stats().used)
    assert.are.equal(R.stats().used - R.stats().free, R.stats().held)
  end)

  it('releases tensors held only by weak tables', function()
    settle()
    local t0 = live()
    local cache = setmetatable({}, { __mode = 'v' })
    local keys = setmetatable({}, { __mode = 'k' })
    for i = 1, 500 do
      cache[i] = T.ones({ 5 })
      keys[T.ones({ 5 })] = i
    end
    collectgarbage()
    assert.is_nil(next(cache))
    assert.is_nil(next(keys))
    assert.are.equal(t0, live())
  end)

  it('keeps a graph node\'s retained tensors, and a Variable\'s data, valid', function()
    local x = chainer.Variable(T.array({ 0, 1, 2 }))
    -- exp retains its output: only the graph holds that tensor below
    local loss = F.sum(F.exp(x) * 2)
    local v = chainer.Variable(T.full({ 2 }, 5))
    for _ = 1, 3 do
      for _ = 1, 20000 do local _ = T.ones({ 10 }) end
      collectgarbage()
    end
    loss:backward()
    local g = x.grad:totable()
    for i, xi in ipairs({ 0, 1, 2 }) do assert.is_true(math.abs(g[i] - 2 * math.exp(xi)) < 1e-4) end
    assert.are.same({ 5, 5 }, v.array:totable())
  end)

  it('keeps tensors that a finalized userdata still reaches until it is gone', function()
    settle()
    local t0 = live()
    local seen
    do
      local holder = { t = T.full({ 3 }, 7) }
      local u = newproxy(true)
      holder.u = u
      getmetatable(u).__gc = function() seen = holder.t:sum():item() end
    end
    collectgarbage()   -- u finalized: its tensor reachable, not released
    assert.are.equal(21, seen)
    collectgarbage()   -- now gone
    collectgarbage()
    assert.are.equal(t0, live())
  end)

  it('releases the dead ones at a collection from C (lua_gc), and all at lua_close', function()
    -- a second Lua state in this process (LuaJIT exports the C API from
    -- its executable): it shares libchainlua's counts with this one
    local ok = pcall(ffi.cdef, [[
      typedef struct lua_State lua_State;
      lua_State *luaL_newstate(void);
      void luaL_openlibs(lua_State *L);
      int luaL_loadstring(lua_State *L, const char *s);
      int lua_pcall(lua_State *L, int nargs, int nresults, int errfunc);
      const char *lua_tolstring(lua_State *L, int idx, size_t *len);
      void lua_close(lua_State *L);
      int lua_gc(lua_State *L, int what, int data);
    ]])
    local have = ok and pcall(function() return ffi.C.luaL_newstate end)
    if not have then
      pending('this interpreter does not export the Lua C API')
      return
    end
    settle()
    local t0 = live()
    local L = ffi.C.luaL_newstate()
    ffi.C.luaL_openlibs(L)
    -- (the runner's package.path: LUA_PATH may not name this tree)
    local chunk = string.format('package.path = %q\n', package.path) .. [[
      local T = require 'chainer.tensor'
      kept = {}
      for i = 1, 1000 do kept[i] = T.ones({ 8 }) end     -- live at close
      for i = 1, 1000 do local _ = T.ones({ 8 }) + 1 end -- garbage at close
      weak = setmetatable({ T.ones({ 2 }) }, { __mode = 'v' })
    ]]
    assert.are.equal(0, ffi.C.luaL_loadstring(L, chunk))
    local rc = ffi.C.lua_pcall(L, 0, 0, 0)
    if rc ~= 0 then error(ffi.string(ffi.C.lua_tolstring(L, -1, nil))) end
    assert.is_true(live() >= t0 + 1000)
    ffi.C.lua_gc(L, 2, 0)   -- LUA_GCCOLLECT, as a host does after a failed chunk
    assert.are.equal(t0 + 1000, live())
    ffi.C.lua_close(L)
    assert.are.equal(t0, live())
  end)
end)
