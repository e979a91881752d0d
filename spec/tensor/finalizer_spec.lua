-- Specs for the tensor handle's finalizer (tensor/core.lua, the chainlua_gc
-- module in runtime/host/chainlua_gc.c): dead tensors release their C reference with
-- either finalizer, and the module is used when it sits next to libchainlua.
local chainer = require 'chainer'
local T = chainer.tensor
local C = T.C

local function live_after(n)
  collectgarbage('collect')
  local before = tonumber(C.ch_live_tensors())
  for _ = 1, n do local _ = T.ones({ 10 }) + 1 end
  collectgarbage('collect')
  collectgarbage('collect')
  return tonumber(C.ch_live_tensors()) - before
end


describe('tensor finalizer', function()
  it('releases the C reference of every dead tensor', function()
    assert.are.equal(0, live_after(5000))
  end)

  it('is the chainlua_gc lua_CFunction when the module sits next to libchainlua', function()
    local p = T.ffi.string(C.ch_library_path())
    local dir = p:match('^(.*)/[^/]*$')
    local f = io.open(dir .. '/chainlua_gc.so', 'rb')
    if f then
      f:close()
      assert.matches('^lua_CFunction from ' .. dir:gsub('%p', '%%%0') .. '/chainlua_gc.so$', T.finalizer)
    else
      assert.matches('^FFI %(', T.finalizer)
    end
  end)

  it('falls back to the FFI finalizer when CHAINLUA_FFI_FINALIZER is set', function()
    local lib = os.getenv('CHAINLUA_LIB') or ''
    local cmd = string.format("CHAINLUA_FFI_FINALIZER=1 CHAINLUA_LIB='%s' LUA_PATH='%s' %s -e \"%s\" 2>&1", lib,
      package.path, require('helpers').lua_interpreter(),
      "local T = require('chainer.tensor') for _ = 1, 3000 do local _ = T.ones({4}) end " ..
      "collectgarbage() collectgarbage() print(T.finalizer, tonumber(T.C.ch_live_tensors()))")
    local h = io.popen(cmd)
    local out = h:read('*a')
    h:close()
    assert.matches('^FFI %(CHAINLUA_FFI_FINALIZER is set%)\t0\n$', out)
  end)
end)
