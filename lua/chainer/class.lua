-- class.lua: the small class helper behind every chainer class.
--
--   local MLP = chainer.Chain:extend('MLP')
--   function MLP:init(n) ... end        -- constructor
--   local m = MLP(3)                    -- instances are created by calling the class
--
-- A class is a table that is the metatable of its instances.  Methods are
-- looked up along the parent chain through the class's own metatable.
-- Lua reads metamethods (__add, __call, __tostring, ...) with rawget, so
-- `extend` copies the parent's metamethods into the child; a metamethod a
-- parent gains after a child was made does not reach that child.
-- A class whose instances need computed fields sets __index to a function;
-- children inherit that function, which must find methods through
-- getmetatable(self), never through a fixed class.
local Object = {}
Object.__index = Object
Object.__name = 'Object'

local class_mt = {}

-- Copies metamethods (keys that start with "__") except the class's own
-- identity fields.
local skip = { __index = true, __name = true, __super = true, __accepted = true }
local define   -- the __newindex of class tables, below

function class_mt.__call(cls, ...)
  return cls:new(...)
end

function class_mt.__tostring(cls)
  return 'class ' .. tostring(rawget(cls, '__name'))
end

setmetatable(Object, class_mt)

---------------------------------------------------------------------------
-- methods that check their self
---------------------------------------------------------------------------
-- `model.cleargrads()` (a dot where a colon belongs) would otherwise fail
-- deep inside the method with "attempt to index local 'self' (a nil
-- value)", and `trainer.extend(ext)` would run with the extension as self.
-- In a class marked with check_self (and in its subclasses) every public
-- method -- a function whose first parameter is named `self` and whose name
-- does not start with '_' -- is wrapped, as it is defined, in a guard that
-- names the method instead.  The guard costs one table lookup per call: the
-- metatables of instances already seen are remembered per class.
local originals = setmetatable({}, { __mode = 'k' })   -- guard -> method

local function describe(v)
  if v == nil then return 'nil' end
  if type(v) == 'table' then
    local name = rawget(v, '__name')
    if name ~= nil then return 'the class ' .. tostring(name) end
    local mt = getmetatable(v)
    if type(mt) == 'table' and rawget(mt, '__name') ~= nil then return 'a ' .. tostring(rawget(mt, '__name')) end
  end
  return 'a ' .. type(v)
end

local function guard(cls, name, method, accepted)
  local function refuse(self)
    error(string.format("%s:%s: call it with ':' (obj:%s(...)); self was %s", tostring(rawget(cls, '__name')),
      name, name, describe(self)), 4)
  end
  local function admit(self)
    if type(self) == 'table' and Object.isinstance(self, cls) then
      accepted[getmetatable(self)] = true
    else
      refuse(self)
    end
  end
  local function checked(self, ...)
    if accepted[getmetatable(self)] == nil then admit(self) end
    return method(self, ...)   -- a tail call: errors at level 2 in `method` still blame its caller
  end
  originals[checked] = method
  return checked
end

local function is_public_method(k, v)
  return type(v) == 'function' and type(k) == 'string' and k:sub(1, 1) ~= '_' and debug.getlocal(v, 1) == 'self'
end

-- __newindex of every class table: wraps methods defined on checked classes.
function define(cls, k, v)
  if cls.__checks_self and is_public_method(k, v) then
    local accepted = rawget(cls, '__accepted')
    if accepted == nil then
      accepted = setmetatable({}, { __mode = 'k' })
      rawset(cls, '__accepted', accepted)
    end
    v = guard(cls, k, v, accepted)
  end
  rawset(cls, k, v)
end

-- check_self(cls): cls and its subclasses check self in their public methods.
local function check_self(cls)
  if rawget(cls, '__checks_self') then return cls end
  rawset(cls, '__checks_self', true)
  rawset(cls, '__accepted', setmetatable({}, { __mode = 'k' }))
  local methods = {}
  for k, v in pairs(cls) do
    if is_public_method(k, v) and not originals[v] then methods[k] = v end
  end
  for k, v in pairs(methods) do rawset(cls, k, guard(cls, k, v, cls.__accepted)) end
  return cls
end

-- The method a guard wraps (the function itself when it is not a guard),
-- for tools that read a function's source or parameters.
local function unwrap(f) return originals[f] or f end

-- Returns a subclass named `name`.
function Object.extend(parent, name)
  if type(parent) ~= 'table' or rawget(parent, '__name') == nil then
    error('extend: call it on a class, as Base:extend(name)', 2)
  end
  if name ~= nil and type(name) ~= 'string' then
    error('extend: the class name must be a string (got ' .. type(name) .. ')', 2)
  end
  local cls = {}
  for k, v in pairs(parent) do
    if type(k) == 'string' and k:sub(1, 2) == '__' and not skip[k] then cls[k] = v end
  end
  local pidx = rawget(parent, '__index')
  if type(pidx) == 'function' then cls.__index = pidx else cls.__index = cls end
  cls.__name = name or ('Anonymous' .. tostring(parent.__name))
  cls.__super = parent
  cls.super = parent   -- MLP.super.init(self, ...) calls the parent's constructor
  local mt = { __index = parent, __call = class_mt.__call, __tostring = class_mt.__tostring,
    __newindex = define }
  setmetatable(cls, mt)
  local hook = parent.__subclassed
  if hook then hook(parent, cls) end
  return cls
end

-- Creates an instance and runs the constructor `init` (if any).
function Object.new(cls, ...)
  local self = setmetatable({}, cls)
  local init = cls.init
  if init then init(self, ...) end
  return self
end

-- The class of an object (nil for non-instances).
function Object.class_of(obj)
  local mt = getmetatable(obj)
  if type(mt) == 'table' and rawget(mt, '__name') ~= nil then return mt end
  return nil
end

-- True when `obj` is an instance of `cls` or of a subclass.
function Object.isinstance(obj, cls)
  if type(obj) ~= 'table' then return false end
  local c = getmetatable(obj)
  while type(c) == 'table' do
    if c == cls then return true end
    c = rawget(c, '__super')
  end
  return false
end

-- True when class `cls` is `base` or derives from it.
function Object.issubclass(cls, base)
  local c = cls
  while type(c) == 'table' do
    if c == base then return true end
    c = rawget(c, '__super')
  end
  return false
end

-- An __index for a class with computed read-only properties: methods
-- first (through the class chain), then props[k](self) for a property k.
-- Subclasses inherit it (extend copies a function __index).
local function property_index(props)
  return function(self, k)
    local m = getmetatable(self)[k]
    if m ~= nil then return m end
    local p = props[k]
    if p ~= nil then return p(self) end
    return nil
  end
end

local M = {
  Object = Object,
  property_index = property_index,
  isinstance = Object.isinstance,
  issubclass = Object.issubclass,
  class_of = Object.class_of,
  check_self = check_self,
  unwrap = unwrap,
}

-- chainer.class(name, parent): a new class (parent defaults to Object).
setmetatable(M, {
  __call = function(_, name, parent)
    return (parent or Object):extend(name)
  end,
})

return M
