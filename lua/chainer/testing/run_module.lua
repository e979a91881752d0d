-- testing/run_module.lua: chainer.testing.run_module(name, file, opts), a
-- spec file that runs its own tests when started as a script (Chainer's
-- runs pytest on the file when its __name__ is '__main__').
--
--   -- at the top of spec/my_op_spec.lua, before the first describe:
--   require('chainer').testing.run_module(arg and arg[0], 'spec/my_op_spec.lua')
--
-- `luajit spec/my_op_spec.lua [busted options]` then runs busted on the
-- file (with the script's own arguments, e.g. --filter=PATTERN) and exits
-- with busted's status (0 when every test passed).  Under busted itself
-- arg[0] is busted's path, so the call does nothing and returns nil.
-- `name` marks the main script when it names the same file as `file`
-- (Lua has no __name__; arg[0] is the script being run).
-- Options: args (more busted arguments, before the script's own), exit
-- (default true; false returns the status instead), busted (the busted
-- script; default $BUSTED, then the first `busted` on PATH).
local args = require 'chainer._args'

local M = {}

local ACCEPTED = args.accept{ 'args', 'exit', 'busted' }

-- A path in a form two names of one file share (no './', no '//').
local function normal(path)
  path = path:gsub('/+', '/')
  while path:sub(1, 2) == './' do path = path:sub(3) end
  path = path:gsub('/%./', '/')
  return path
end

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function find_on_path(name)
  for dir in (os.getenv('PATH') or ''):gmatch('[^:]+') do
    local p = dir .. '/' .. name
    local f = io.open(p, 'rb')
    if f then f:close() return p end
  end
  return nil
end

-- The interpreter running this script (arg's lowest index: luajit or
-- chainlua), so that busted runs under the same one.
local function interpreter()
  if type(arg) ~= 'table' then return 'luajit' end
  local i = 0
  while arg[i - 1] ~= nil do i = i - 1 end
  if i == 0 then return 'luajit' end
  return arg[i]
end

-- os.execute's result as an exit status: LuaJIT returns system()'s raw
-- status (code * 256; a signal in the low bits), Lua 5.2 style true/nil
-- with 'exit'/'signal' and a number.
local function exit_status(a, how, code)
  if type(a) == 'number' then
    if a % 256 ~= 0 then return 128 + a % 128 end
    return math.floor(a / 256)
  end
  if how == 'signal' then return 128 + (code or 0) end
  return code or (a and 0 or 1)
end

function M.run_module(name, file, opts)
  local fn = 'run_module'
  opts = args.options(fn, opts, ACCEPTED)
  if name ~= nil and type(name) ~= 'string' then
    error(string.format('%s: name must be the running script\'s path (arg[0]) or nil (got %s)', fn, type(name)), 2)
  end
  if type(file) ~= 'string' then
    error(string.format('%s: file must be the spec file\'s path, a string (got %s)', fn, type(file)), 2)
  end
  if name == nil or normal(name) ~= normal(file) then return nil end
  -- (the busted this starts loads the file again: never a second run)
  if os.getenv('CHAINLUA_RUN_MODULE') == normal(file) then return nil end
  local extra = opts.args or {}
  if type(extra) ~= 'table' then error(string.format('%s: args must be an array of strings (got %s)', fn,
    type(extra)), 2) end
  local busted = opts.busted or os.getenv('BUSTED') or find_on_path('busted')
  if not busted then
    error(fn .. ': busted is not installed (Debian: apt-get install lua-busted; or set $BUSTED to its script)', 2)
  end
  local words = { 'CHAINLUA_RUN_MODULE=' .. quote(normal(file)), quote(interpreter()), quote(busted) }
  for _, a in ipairs(extra) do words[#words + 1] = quote(a) end
  if type(arg) == 'table' then
    for i = 1, #arg do words[#words + 1] = quote(arg[i]) end
  end
  words[#words + 1] = quote(file)
  io.stdout:flush()
  local status = exit_status(os.execute(table.concat(words, ' ')))
  if opts.exit == false then return status end
  os.exit(status)
end

return M
