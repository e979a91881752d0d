-- testing/mock.lua: the call-recording stand-in that testing.patch puts in
-- place of a function (docs/testing.md).
--
--   local m = Mock.new{ spec = original, name = 'chainer.functions.relu' }
--   m(1, 2)                        -- recorded; returns m.return_value
--   m.call_count, m.calls[1]       -- 1, { 1, 2, n = 2 }
--   m:assert_called_with(1, 2)     -- on the last call
--
-- With a spec (autospec) a mock keeps the checks Lua can make of the
-- original: a function's number of parameters (more arguments than a
-- fixed-arity function takes are an error), a method called with '.' where
-- ':' belongs (the original's first parameter is `self`), and for a table
-- (a module, a class) only the fields the original has, each function
-- field a mock of its own.  Options: return_value, side_effect (a
-- function called with the arguments, whose results are returned; any
-- other value is raised as the error), wraps (a function called the same
-- way, the original for a spy), spec.
local class = require 'chainer.class'
local T = require 'chainer.tensor'

local M = {}

local Mock = {}
local methods = {}
M.Mock = Mock

local function is_mock(v) return type(v) == 'table' and getmetatable(v) == Mock end
M.is_mock = is_mock

---------------------------------------------------------------------------
-- what a call may look like (autospec)
---------------------------------------------------------------------------
-- The parameter list of Lua function f ('x, y, ...'), its count and
-- whether it takes more; nil for a C function (nothing to check).
local function signature(f)
  f = class.unwrap(f)
  local info = debug.getinfo(f, 'Su')
  if info.what == 'C' then return nil end
  local names = {}
  for i = 1, info.nparams do names[i] = debug.getlocal(f, i) end
  if info.isvararg then names[#names + 1] = '...' end
  return { text = table.concat(names, ', '), nparams = info.nparams, vararg = info.isvararg, first = names[1] }
end

local function callable(v)
  if type(v) == 'function' then return true end
  local mt = (type(v) == 'table' or type(v) == 'cdata') and getmetatable(v)
  return type(mt) == 'table' and rawget(mt, '__call') ~= nil
end

local function check_call(m, n, first)
  local sig = rawget(m, '_signature')
  if not sig then return end
  if not sig.vararg and n > sig.nparams then
    error(string.format('%s: called with %d arguments; the original takes %d (%s)', m._name, n, sig.nparams,
      sig.text), 3)
  end
  if sig.first == 'self' and type(first) ~= 'table' and type(first) ~= 'cdata' and type(first) ~= 'userdata' then
    error(string.format("%s: a method (its first parameter is self): call it with ':' (self was %s)", m._name,
      first == nil and 'nil' or ('a ' .. type(first))), 3)
  end
end

---------------------------------------------------------------------------
-- construction and calls
---------------------------------------------------------------------------
-- Mock.new{spec =, name =, return_value =, side_effect =, wraps =}
function M.new(opts)
  opts = opts or {}
  local m = { calls = {}, call_count = 0, called = false, _name = opts.name or 'mock',
    return_value = opts.return_value, side_effect = opts.side_effect, wraps = opts.wraps, _children = {} }
  local spec = opts.spec
  if spec ~= nil then
    m._spec, m._has_spec = spec, true
    if type(spec) == 'function' then m._signature = signature(spec) end
    if type(spec) == 'table' then
      local mt = getmetatable(spec)
      local call = type(mt) == 'table' and rawget(mt, '__call')
      if type(call) == 'function' then m._signature = signature(call) end
    end
  end
  return setmetatable(m, Mock)
end

function Mock.__call(m, ...)
  local n = select('#', ...)
  if rawget(m, '_has_spec') and not callable(m._spec) then
    error(string.format('%s: not callable (the original is a %s)', m._name, type(m._spec)), 2)
  end
  check_call(m, n, (...))
  m.calls[#m.calls + 1] = { n = n, ... }
  m.call_count = m.call_count + 1
  m.called = true
  local effect = rawget(m, 'side_effect')
  if effect ~= nil then
    if type(effect) == 'function' or is_mock(effect) then return effect(...) end
    error(effect, 0)
  end
  local wraps = rawget(m, 'wraps')
  if wraps ~= nil then return wraps(...) end
  return rawget(m, 'return_value')
end

-- the mock's own settings, nil until set (never a child mock)
local SETTINGS = { return_value = true, side_effect = true, wraps = true }

-- Fields: the methods below, then (a mock of a table) a mock per function
-- field of the original, its other values as they are, and an error for a
-- name the original lacks; without a spec, a new child mock per name.
function Mock.__index(m, k)
  local f = methods[k]
  if f ~= nil then return f end
  if SETTINGS[k] then return nil end
  local children = rawget(m, '_children')
  local child = children[k]
  if child ~= nil then return child end
  local name = rawget(m, '_name') .. '.' .. tostring(k)
  if rawget(m, '_has_spec') then
    local spec = rawget(m, '_spec')
    local v = type(spec) == 'table' and spec[k] or nil
    if v == nil then
      error(string.format('%s: the original has no field %s', rawget(m, '_name'), tostring(k)), 2)
    end
    if not callable(v) then return v end
    child = M.new{ spec = v, name = name }
  else
    child = M.new{ name = name }
  end
  children[k] = child
  return child
end

function Mock.__tostring(m) return string.format('mock %s (%d calls)', m._name, m.call_count) end

---------------------------------------------------------------------------
-- checks on the calls made
---------------------------------------------------------------------------
local function same(a, b)
  if rawequal(a, b) then return true end
  if type(a) == 'number' and type(b) == 'number' then return a == b end
  if T.is_tensor(a) and T.is_tensor(b) then
    return a.dtype == b.dtype and T.shape_str(a.shape) == T.shape_str(b.shape) and
      table.concat(a:reshape({ a.size }):tolist(), ',') == table.concat(b:reshape({ b.size }):tolist(), ',')
  end
  if type(a) == 'table' and type(b) == 'table' and getmetatable(a) == nil and getmetatable(b) == nil then
    for k, v in pairs(a) do if not same(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end
  return false
end

local function matches(call, n, args)
  if call.n ~= n then return false end
  for i = 1, n do if not same(call[i], args[i]) then return false end end
  return true
end

local function describe_args(n, args)
  local out = {}
  for i = 1, n do
    local v = args[i]
    out[i] = type(v) == 'string' and string.format('%q', v) or tostring(v)
  end
  return '(' .. table.concat(out, ', ') .. ')'
end

-- Whether any call had exactly these arguments.
function methods.called_with(m, ...)
  local n, args = select('#', ...), { ... }
  for _, call in ipairs(m.calls) do
    if matches(call, n, args) then return true end
  end
  return false
end

function methods.assert_called(m)
  if m.call_count == 0 then error(m._name .. ': expected a call, there was none', 2) end
end

function methods.assert_not_called(m)
  if m.call_count > 0 then
    error(string.format('%s: expected no call, there were %d (the first with %s)', m._name, m.call_count,
      describe_args(m.calls[1].n, m.calls[1])), 2)
  end
end

function methods.assert_called_once(m)
  if m.call_count ~= 1 then error(string.format('%s: expected one call, there were %d', m._name, m.call_count), 2) end
end

-- The last call had exactly these arguments.
function methods.assert_called_with(m, ...)
  local n, args = select('#', ...), { ... }
  local last = m.calls[#m.calls]
  if last == nil then error(string.format('%s: expected a call with %s, there was none', m._name,
    describe_args(n, args)), 2) end
  if not matches(last, n, args) then
    error(string.format('%s: the last call was with %s, expected %s', m._name, describe_args(last.n, last),
      describe_args(n, args)), 2)
  end
end

function methods.assert_called_once_with(m, ...)
  if m.call_count ~= 1 then
    error(string.format('%s: expected one call with %s, there were %d', m._name,
      describe_args(select('#', ...), { ... }), m.call_count), 2)
  end
  local last = m.calls[1]
  if not matches(last, select('#', ...), { ... }) then
    error(string.format('%s: the call was with %s, expected %s', m._name, describe_args(last.n, last),
      describe_args(select('#', ...), { ... })), 2)
  end
end

function methods.assert_any_call(m, ...)
  if not methods.called_with(m, ...) then
    error(string.format('%s: no call with %s among %d', m._name, describe_args(select('#', ...), { ... }),
      m.call_count), 2)
  end
end

-- Forgets the calls (of the children too).
function methods.reset_mock(m)
  m.calls, m.call_count, m.called = {}, 0, false
  for _, c in pairs(m._children) do methods.reset_mock(c) end
end

return M
