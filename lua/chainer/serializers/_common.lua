-- serializers/_common.lua: value conversion and the key-tree deserializer
-- shared by the NPZ and HDF5 formats.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local base = require 'chainer.serializer'
local errors = require 'chainer._errors'

local is_tensor = T.is_tensor
local M = {}

-- Lua value -> tensor to store (nil: nothing is stored).
--   tensor        as is (on the CPU)
--   Variable      its array
--   integer       int64 0-d (as NumPy stores Python ints; Chainer's `t`, `epoch`)
--   other number  float64 0-d
--   boolean       bool 0-d
--   string        the string: the writers store a 0-d '<U' array as NumPy does
--                 for a Python str (HDF5: a fixed-length UTF-8 string; bytes
--                 that are not UTF-8 go as '|S'); string arrays as they are
function M.to_storable(value, fn, key)
  if value == nil then return nil end
  if type(value) == 'string' or T.is_string_array(value) then return value end
  if is_tensor(value) then
    if value.ptr.dev ~= -1 then value = value:to_device(-1) end
    return value
  end
  if type(value) == 'table' and value._is_variable then
    local d = value._data
    if d == nil then return nil end
    return M.to_storable(d, fn, key)
  end
  if type(value) == 'number' then
    if value == math.floor(value) and math.abs(value) < 2 ^ 53 then return T.array(value, 'int64') end
    return T.array(value, 'float64')
  end
  if type(value) == 'boolean' then return T.array(value, 'bool') end
  error(string.format("%s: cannot store the value of key '%s' (a %s): expected a tensor, number, boolean or string",
    fn, key, type(value)), 3)
end

-- A serialized object: the plain table {['path/key'] = tensor or string}
-- that DictionarySerializer (chainer.serializers.serialize) makes.  The
-- savers take one in place of an object, as Chainer's save_npz takes a
-- dict, so snapshot writers can save what was serialized earlier.
function M.is_serialized_dict(obj)
  if type(obj) ~= 'table' or getmetatable(obj) ~= nil then return false end
  for k, v in pairs(obj) do
    if type(k) ~= 'string' or not (is_tensor(v) or type(v) == 'string' or T.is_string_array(v)) then
      return false
    end
  end
  return true
end

-- An object whose serialize replays a serialized dictionary into any
-- serializer ('a/b/c' goes to serializer:child('a'):child('b')('c', v)).
function M.replay(dict)
  return {
    serialize = function(_, serializer)
      local keys = {}
      for k in pairs(dict) do keys[#keys + 1] = k end
      table.sort(keys)
      for _, k in ipairs(keys) do
        local s = serializer
        local parts = {}
        for part in k:gmatch('[^/]+') do parts[#parts + 1] = part end
        for i = 1, #parts - 1 do s = s:child(parts[i]) end
        s(parts[#parts], dict[k])
      end
    end,
  }
end

local function describe(where) return where and (" in '" .. where .. "'") or '' end

-- Converts stored `data` for `value`'s type (Chainer's NpzDeserializer rules).
function M.restore(value, data, key, fn, where)
  if type(data) == 'string' then data = T.string_array(data, {}) end   -- a DictionarySerializer target
  if value == nil then return data end
  if T.is_string_array(data) then   -- '<U' / '|S' arrays and HDF5 strings
    if type(value) ~= 'string' then
      error(string.format("%s: key '%s'%s holds a string array of shape %s where a %s is expected", fn, key,
        describe(where), T.shape_str(data.shape), is_tensor(value) and 'tensor' or type(value)), 0)
    end
    if #data ~= 1 then
      error(string.format("%s: key '%s'%s holds %d strings (shape %s) where one string is expected", fn, key,
        describe(where), #data, T.shape_str(data.shape)), 0)
    end
    return data[1]
  end
  if is_tensor(value) then
    local vs, ds = value.shape, data.shape
    local same = #vs == #ds
    if same then for i = 1, #vs do if vs[i] ~= ds[i] then same = false break end end end
    if not same then
      error(string.format("%s: key '%s'%s has shape %s but the target has shape %s", fn, key, describe(where),
        T.shape_str(ds), T.shape_str(vs)), 0)
    end
    if data.ptr.dt ~= value.ptr.dt then data = data:astype(value.dtype) end
    if data.ptr.dev ~= value.ptr.dev then data = data:to_device(value.ptr.dev) end
    value:copy_(data)
    return value
  end
  if type(value) == 'table' and value._is_variable then
    if value._data == nil then
      if value.initialize then value:initialize(data.shape) else value.array = data:copy() return value end
    end
    M.restore(value._data, data, key, fn, where)
    return value
  end
  if type(value) == 'number' then
    if tonumber(data.ptr.numel) ~= 1 then
      error(string.format("%s: key '%s'%s holds an array of shape %s where a number is expected", fn, key,
        describe(where), T.shape_str(data.shape)), 0)
    end
    return data:reshape({}):item() + 0
  end
  if type(value) == 'boolean' then
    return data:reshape({}):item() ~= 0 and data:reshape({}):item() ~= false
  end
  if type(value) == 'string' then   -- a uint8 byte array: how chainlua stored strings before '<U'
    if data.dtype ~= 'uint8' and data.dtype ~= 'int8' then
      error(string.format("%s: key '%s'%s is not a byte string (dtype %s)", fn, key, describe(where), data.dtype), 0)
    end
    local n = tonumber(data.ptr.numel)
    if n == 0 then return '' end
    local bytes = data:reshape({ n }):totable()
    local parts = {}
    for i = 1, n do parts[i] = string.char(bytes[i] % 256) end
    return table.concat(parts)
  end
  return data
end

---------------------------------------------------------------------------
-- A deserializer over a flat key space: source = {keys = {key = true},
-- get = function(key) -> tensor, where = file name, fn = 'load_npz'}.
---------------------------------------------------------------------------
-- state shared by a deserializer and its children (optional keys, see
-- chainer.serializer, are never gathered as missing):
--   missing   list of keys asked for but absent (strict loading inside load())
--   accessed  key -> true
--   collect   true while load() runs: missing keys are gathered, not raised at once
--   tolerated list of paths below which unread keys are not unexpected (tolerate_extra)
-- A deserializer's arguments after its source: Chainer's (path, strict,
-- ignore_names), positional or by name; fn names the caller in messages.
M.DESERIALIZER_SIGNATURE = args.signature({ 'path', 'strict', 'ignore_names' }, { 'fn' })
M.DESERIALIZER_OPTIONS = M.DESERIALIZER_SIGNATURE

function M.make_deserializer(name)
  local D = base.Deserializer:extend(name)

  -- opts: an options table checked against DESERIALIZER_OPTIONS (fn, the
  -- name in messages, is for load_npz/load_hdf5).
  function D:_init_state(source, opts, default_fn)
    opts = args.options(name, opts, M.DESERIALIZER_OPTIONS, 4)
    self.source = source
    self.path = opts.path or ''
    if type(self.path) ~= 'string' then error(name .. ': path must be a string', 3) end
    if opts.strict == nil then self.strict = true else self.strict = opts.strict and true or false end
    local ign = opts.ignore_names
    if ign ~= nil and type(ign) ~= 'function' and type(ign) ~= 'table' then
      error(name .. ': ignore_names must be a list of keys or a function(key) (got ' .. type(ign) .. ')', 3)
    end
    if type(ign) == 'table' then
      local set = {}
      for _, k in ipairs(ign) do set[k] = true end
      for k, v in pairs(ign) do if type(k) == 'string' and v then set[k] = true end end
      ign = set
    end
    self.ignore_names = ign
    self._fn = opts.fn or default_fn
    self._state = { missing = {}, accessed = {}, collect = false, tolerated = {} }
  end

  function D:_ignored(key)
    local ign = self.ignore_names
    if ign == nil then return false end
    if type(ign) == 'function' then return ign(key) and true or false end
    return ign[key] == true
  end

  -- value = d(key, value): a required key.  A key that is absent raises
  -- at once, or inside load() is gathered with the other missing keys;
  -- strict = false leaves `value` as it is.  An uninitialised parameter
  -- (value == nil) is required too, as in Chainer: a file without its key
  -- does not match the model.
  function D:call(key, value)
    local v = self:_lookup(key, value, self._all_optional, 3)
    return v
  end

  -- value, found = d:optional(key, value): the key may be absent (found ==
  -- false, value unchanged); an absent optional key is never reported.
  function D:optional(key, value)
    return self:_lookup(key, value, true, 2)
  end

  function D:_lookup(key, value, optional, level)
    local full = base.join(self.path, key)
    local src = self.source
    if self:_ignored(full) then return value, false end
    if not src.keys[full] then
      if optional or not self.strict then return value, false end
      if self._state.collect then
        local m = self._state.missing
        m[#m + 1] = full
        return value, false
      end
      error(string.format("%s: key '%s' is not in '%s'", self._fn, full, tostring(src.where)), level)
    end
    self._state.accessed[full] = true
    local ok, data = pcall(src.get, full, value)
    if not ok then error(errors.as(self._fn, data), 0) end   -- a damaged member or dataset
    return M.restore(value, data, full, self._fn, src.where), true
  end

  function D:child(name_)
    local c = setmetatable({}, getmetatable(self))
    for k, v in pairs(self) do c[k] = v end
    c.path = base.child_path(self.path, name_)
    return c
  end

  -- A child whose every key may be absent (state chainlua adds, such as an
  -- order sampler's seed): its lookups behave as optional().
  function D:optional_child(name_)
    local c = self:child(name_)
    c._all_optional = true
    return c
  end

  -- Keys below this child that nothing reads are not unexpected (see
  -- chainer.serializer).
  function D:tolerate_extra()
    local t = self._state.tolerated
    t[#t + 1] = self.path
  end

  local function tolerated(st, key)
    for _, prefix in ipairs(st.tolerated) do
      if key:sub(1, #prefix) == prefix then return true end
    end
    return false
  end

  -- load(obj): obj:serialize(self); with strict loading, every missing key
  -- and every unexpected key under `path` is reported in one error.
  function D:load(obj)
    if type(obj) ~= 'table' or type(obj.serialize) ~= 'function' then
      error(self._fn .. ': the object has no serialize method (got ' .. type(obj) .. ')', 2)
    end
    local st = self._state
    local outer = st.collect
    st.collect = true
    local ok, err = pcall(obj.serialize, obj, self)
    st.collect = outer
    if not ok then error(err, 0) end
    if outer or not self.strict then return end
    local missing = st.missing
    local unexpected = {}
    local prefix = self.path
    for k in pairs(self.source.keys) do
      if k:sub(1, #prefix) == prefix and not st.accessed[k] and not self:_ignored(k) and not tolerated(st, k) then
        unexpected[#unexpected + 1] = k
      end
    end
    if #missing > 0 or #unexpected > 0 then
      table.sort(missing)
      table.sort(unexpected)
      local parts = {}
      if #missing > 0 then
        parts[#parts + 1] = #missing .. ' missing key' .. (#missing > 1 and 's' or '') .. ': ' .. table.concat(missing, ', ')
      end
      if #unexpected > 0 then
        parts[#parts + 1] = #unexpected .. ' unexpected key' .. (#unexpected > 1 and 's' or '') .. ': ' ..
          table.concat(unexpected, ', ')
      end
      error(string.format("%s: '%s' does not match the object (%s); pass {strict = false} to skip missing and extra keys",
        self._fn, tostring(self.source.where), table.concat(parts, '; ')), 2)
    end
  end

  return D
end

return M
