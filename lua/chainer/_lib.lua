-- _lib.lua: loads libchainlua and turns C statuses into Lua errors.
-- Everything in chainer reaches C through this module (and _ffi.lua's cdefs).
local ffi = require 'chainer._ffi'

local function file_exists(p)
  local f = p and io.open(p, 'rb')
  if f then f:close() return true end
  return false
end

local function this_dir()
  local src = debug.getinfo(1, 'S').source
  return src:sub(1, 1) == '@' and src:sub(2):match('^(.*)/[^/]*$') or '.'
end

-- Search order: the process itself (the chainlua executable and host apps
-- link libchainlua), $CHAINLUA_LIB, package.cpath (luarocks trees), the
-- build folder of a source checkout, the install prefix, the system path.
local function load_library()
  if pcall(function() return ffi.C.ch_version end) then
    return ffi.C, 'the running process'
  end
  local dir = this_dir()
  -- (entries may be nil, so walk the fixed index range, not ipairs)
  local candidates = {
    os.getenv('CHAINLUA_LIB'),
    package.searchpath and package.searchpath('libchainlua', package.cpath),
    dir .. '/../../build/libchainlua.so',
    dir .. '/../../../../lib/libchainlua.so',
    dir .. '/../../../../lib64/libchainlua.so',
  }
  for i = 1, 5 do
    local p = candidates[i]
    if p and p ~= '' and file_exists(p) then
      return ffi.load(p), p
    end
  end
  local ok, lib = pcall(ffi.load, 'chainlua')
  if ok then return lib, 'libchainlua (system search path)' end
  error('chainer: cannot find libchainlua.so; build it with `make build`, or set CHAINLUA_LIB to its path', 0)
end

local C, where = load_library()

local M = { C = C, ffi = ffi, path = where }

-- Raises the runtime's last error when `status` is not CH_OK.  `level` is
-- counted from the function calling check: 1 blames that function, 2 (the
-- default) its caller, which for a thin wrapper is the user's line.
function M.check(status, level)
  if status ~= 0 then
    error(ffi.string(C.ch_last_error()), (level or 2) + 1)
  end
end

return M
