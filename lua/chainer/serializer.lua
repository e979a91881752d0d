-- serializer.lua: the serializer protocol (chainer.serializer).
--
-- A serializer is a callable object walking an object's state:
--   value = serializer(key, value)     -- store (returns value) / load (returns the stored value)
--   local sub = serializer:child(name) -- the sub-tree `name/` (Chainer's serializer[name])
--   serializer:save(obj) / deserializer:load(obj)   -- obj:serialize(serializer)
-- Deserializers copy arrays in place into a tensor `value` and return it;
-- with value == nil they return a new tensor; for a number or boolean
-- template they return a number or boolean.
--
-- State that may be absent from a file (what chainlua keeps beyond
-- Chainer's snapshot, or what older files lack) is asked for with
--   value, found = serializer:optional(key, value)
--   local sub = serializer:optional_child(name)     -- every key below may be absent
-- A serializer stores it as usual; a deserializer returns `value` unchanged
-- (found == false) when the file lacks the key, and a strict load does not
-- count it as missing.  Every other key stays required.
--
-- Keys a file may have beyond what the object reads (a trainer snapshot's
-- extensions that the resuming trainer does not register, which Chainer
-- ignores) are allowed below a child with
--   serializer:tolerate_extra()     -- on that child; a no-op when saving
-- A strict load then reports unread keys everywhere else only.
local class = require 'chainer.class'

local AbstractSerializer = class.Object:extend('AbstractSerializer')

AbstractSerializer.__call = function(self, key, value)
  return self:call(key, value)
end

function AbstractSerializer:call(key, value)
  error(getmetatable(self).__name .. ': __call is not implemented', 2)
end

-- What a concrete serializer must give: child(name), optional(key, value),
-- optional_child(name).
for _, method in ipairs({ 'child', 'optional', 'optional_child' }) do
  AbstractSerializer[method] = function(self)
    error(getmetatable(self).__name .. ': ' .. method .. ' is not implemented', 2)
  end
end

function AbstractSerializer:tolerate_extra() end

local Serializer = AbstractSerializer:extend('Serializer')
Serializer.is_serializer = true
-- Saving: an optional key is stored like any other.
function Serializer:optional(key, value) return self:call(key, value), true end
function Serializer:optional_child(name) return self:child(name) end
function Serializer:save(obj)
  if type(obj) ~= 'table' or type(obj.serialize) ~= 'function' then
    error('Serializer.save: the object has no serialize method (got ' .. type(obj) .. ')', 2)
  end
  obj:serialize(self)
end

local Deserializer = AbstractSerializer:extend('Deserializer')
Deserializer.is_deserializer = true
function Deserializer:load(obj)
  if type(obj) ~= 'table' or type(obj.serialize) ~= 'function' then
    error('Deserializer.load: the object has no serialize method (got ' .. type(obj) .. ')', 2)
  end
  obj:serialize(self)
end

-- 'a/b/' .. key without its leading slashes.
local function join(path, key)
  if type(key) ~= 'string' then
    error('serializer: keys must be strings (got ' .. type(key) .. ')', 3)
  end
  return path .. key:gsub('^/+', '')
end

-- The path of a child: path .. name (slashes stripped at both ends) .. '/'.
local function child_path(path, name)
  if type(name) ~= 'string' then
    error('serializer.child: the name must be a string (got ' .. type(name) .. ')', 3)
  end
  name = name:gsub('^/+', ''):gsub('/+$', '')
  return path .. name .. '/'
end

-- optional(s, key, value) / optional_child(s, name) for any serializer: a
-- callable that does not know the mark (a test double, a user's own
-- serializer) is asked as for a required key.
local function optional(s, key, value)
  if type(s) == 'table' and type(s.optional) == 'function' then return s:optional(key, value) end
  return s(key, value), true
end

local function optional_child(s, name)
  if type(s) == 'table' and type(s.optional_child) == 'function' then return s:optional_child(name) end
  if type(s) == 'table' and type(s.child) == 'function' then return s:child(name) end
  return s[name]
end

local function tolerate_extra(s)
  if type(s) == 'table' and type(s.tolerate_extra) == 'function' then s:tolerate_extra() end
end

return {
  AbstractSerializer = AbstractSerializer,
  Serializer = Serializer,
  Deserializer = Deserializer,
  join = join,
  child_path = child_path,
  optional = optional,
  optional_child = optional_child,
  tolerate_extra = tolerate_extra,
}
