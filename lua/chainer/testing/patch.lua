-- testing/patch.lua: chainer.testing.patch, a field of a module or table
-- replaced for the length of a function, restored afterwards even when the
-- function raises (Chainer's is unittest.mock.patch with autospec).
--
--   it('saves once', testing.patch('chainer.serializers.save_npz')(function(save)
--     run_the_code()
--     save:assert_called_once()
--   end))
--   testing.patch(chainer.functions, 'relu', F.identity)(function(relu) ... end)()
--   local p = testing.patch('chainermn._message.INT_MAX', 100)
--   local v = p:start() ... p:stop()                       -- before_each / after_each
--
-- The target is 'module.path.field' (the longest prefix that is a module
-- is required, the rest are fields) or a table and a key.  What goes in:
--   nothing           a call-recording mock (testing/mock.lua) with the
--                     original as its spec (autospec: argument counts,
--                     ':' calls, a table's fields checked as Lua can)
--   a function        the same mock, which calls the function and returns
--                     its results (Chainer's side_effect)
--   another value     that value as it is (a number, a fake module table
--                     with a metatable, false)
--   an options table  {new =, return_value =, side_effect =, wraps =,
--                     autospec = true, create = false}: wraps = true calls
--                     the original (a spy); create lets the field be absent.
-- patch(...)(fn) returns a function that patches, calls fn(mock, ...)
-- with its own arguments after the mock, restores and returns fn's results.
local args = require 'chainer._args'
local mockmod = require 'chainer.testing.mock'

local M = {}

local ACCEPTED = args.accept{ 'new', 'return_value', 'side_effect', 'wraps', 'autospec', 'create' }
local MOCK_OPTIONS = { 'return_value', 'side_effect', 'wraps', 'autospec' }

---------------------------------------------------------------------------
-- the target
---------------------------------------------------------------------------
local function is_module(name)
  return package.loaded[name] ~= nil or package.searchpath(name, package.path) ~= nil
    or package.searchpath(name, package.cpath) ~= nil
end

-- 'a.b.c.field' -> the table holding field, and 'field'.
local function resolve(path)
  local parts = {}
  for p in path:gmatch('[^.]+') do parts[#parts + 1] = p end
  if #parts < 2 or path:find('..', 1, true) or path:sub(1, 1) == '.' or path:sub(-1) == '.' then
    error(string.format("patch: the target must be 'module.field' or 'module.path.field' (got '%s')", path), 3)
  end
  for i = #parts - 1, 1, -1 do
    local name = table.concat(parts, '.', 1, i)
    if is_module(name) then
      local t = require(name)
      for j = i + 1, #parts - 1 do
        if type(t) ~= 'table' then break end
        t = t[parts[j]]
      end
      if type(t) ~= 'table' then
        error(string.format("patch: '%s' is not a table (in '%s')", table.concat(parts, '.', 1, #parts - 1), path), 4)
      end
      return t, parts[#parts]
    end
  end
  error(string.format("patch: no module named by the start of '%s' (tried %s)", path,
    table.concat(parts, '.', 1, #parts - 1)), 3)
end

-- The options from patch's last argument (see the top).
local function options(what)
  if what == nil then return {} end
  if type(what) == 'function' then return { side_effect = what } end
  if type(what) == 'table' and getmetatable(what) == nil then
    local opts = args.options('patch', what, ACCEPTED, 4)
    if opts.new ~= nil then
      for _, k in ipairs(MOCK_OPTIONS) do
        if opts[k] ~= nil then error(string.format('patch: new and %s cannot be given together', k), 3) end
      end
    end
    return opts
  end
  return { new = what }
end

---------------------------------------------------------------------------
-- the patcher
---------------------------------------------------------------------------
local Patcher = {}
Patcher.__index = Patcher

-- The value put in place (a mock unless `new` was given).
local function replacement(p, original)
  local o = p.opts
  if o.new ~= nil then return o.new end
  local autospec = o.autospec ~= false
  if autospec and original ~= nil and type(original) ~= 'function' and type(original) ~= 'table' then
    error(string.format("patch: '%s' is a %s, not a function or a table; give the value to put there " ..
      "(patch(target, value))", p.label, type(original)), 4)
  end
  local wraps = o.wraps
  if wraps == true then wraps = original end
  return mockmod.new{ spec = autospec and original or nil, name = p.label, return_value = o.return_value,
    side_effect = o.side_effect, wraps = wraps }
end

-- Puts the replacement in place; returns it and what restores the field.
local function apply(p)
  local t, key = p.target, p.key
  local raw = rawget(t, key)
  local original = t[key]
  if original == nil and not p.opts.create then
    error(string.format("patch: '%s' does not exist (create = true patches an absent field)", p.label), 3)
  end
  local value = replacement(p, original)
  rawset(t, key, value)
  return value, function() rawset(t, key, raw) end
end

-- p:start(): patches until p:stop(); returns the mock (or `new`).
function Patcher:start()
  local value, restore = apply(self)
  self.restores[#self.restores + 1] = restore
  return value
end

-- p:stop(): puts back what p:start() replaced (the latest start first).
function Patcher:stop()
  local restore = table.remove(self.restores)
  if restore == nil then error(string.format("patch: stop without start ('%s' is not patched)", self.label), 2) end
  restore()
end

local function pack(...) return { n = select('#', ...), ... } end

-- patch(...)(fn): the wrapped function (each call patches afresh).
function Patcher.__call(p, fn)
  if type(fn) ~= 'function' then
    error(string.format('patch: wrap a function: patch(target)(function(mock) ... end) (got %s)', type(fn)), 2)
  end
  return function(...)
    local value, restore = apply(p)
    local res = pack(pcall(fn, value, ...))
    restore()
    if not res[1] then error(res[2], 0) end
    return unpack(res, 2, res.n)
  end
end

function Patcher.__tostring(p) return "patch of '" .. p.label .. "'" end

-- patch(target, replacement_or_opts) / patch(table, key, replacement_or_opts)
function M.patch(target, a, b)
  local t, key, what, label
  if type(target) == 'string' then
    if b ~= nil then
      error("patch: a string target takes one more argument, the replacement or options (got a third)", 2)
    end
    t, key = resolve(target)
    what, label = a, target
  elseif type(target) == 'table' then
    if type(a) ~= 'string' and type(a) ~= 'number' then
      error(string.format('patch: patch(table, key, ...) needs a string or number key (got %s)', type(a)), 2)
    end
    t, key, what = target, a, b
    local name = rawget(target, '__name')
    label = (name and tostring(name) or 'table') .. '.' .. tostring(a)
  else
    error(string.format("patch: the target must be 'module.path.field' or a table and a key (got %s)",
      type(target)), 2)
  end
  return setmetatable({ target = t, key = key, opts = options(what), label = label, restores = {} }, Patcher)
end

M.Patcher = Patcher
return M
