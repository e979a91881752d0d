-- serializers/npz.lua: Chainer's NPZ format.
--
-- DictionarySerializer flattens an object into {['predictor/l1/W'] = tensor, ...}
-- (its `target`), which save_npz writes with tensor.savez[_compressed]
-- (atomic: temporary file, then rename).  NpzDeserializer reads such a
-- file (or a table of tensors) back.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local base = require 'chainer.serializer'
local common = require 'chainer.serializers._common'
local errors = require 'chainer._errors'

local M = {}

---------------------------------------------------------------------------
-- DictionarySerializer(target = {}, path = '')
---------------------------------------------------------------------------
local DictionarySerializer = base.Serializer:extend('DictionarySerializer')

function DictionarySerializer:init(target, path)
  if target ~= nil and type(target) ~= 'table' then
    error('DictionarySerializer: target must be a table (got ' .. type(target) .. ')', 3)
  end
  self.target = target or {}
  self.path = path or ''
end

function DictionarySerializer:call(key, value)
  local full = base.join(self.path, key)
  local t = common.to_storable(value, 'DictionarySerializer', full)
  if t ~= nil then self.target[full] = t end
  return value
end

function DictionarySerializer:child(name)
  return DictionarySerializer(self.target, base.child_path(self.path, name))
end
M.DictionarySerializer = DictionarySerializer

---------------------------------------------------------------------------
-- NpzDeserializer(npz, {path = '', strict = true, ignore_names = nil})
---------------------------------------------------------------------------
local NpzDeserializer = common.make_deserializer('NpzDeserializer')

-- npz: a reader from tensor.open_npz, a file name, or a table key -> tensor.
function NpzDeserializer:init(npz, ...)
  local opts = args.parse_at(3, 'NpzDeserializer', common.DESERIALIZER_SIGNATURE, select('#', ...), ...)
  local source
  if type(npz) == 'string' then
    local ok, r = pcall(T.open_npz, npz)
    if not ok then errors.raise('NpzDeserializer', r, 3) end
    npz = r
  end
  if type(npz) == 'table' and npz._ptr ~= nil and npz.get then
    local keys = {}
    for _, k in ipairs(npz:keys()) do keys[k] = true end
    local r = npz
    source = { keys = keys, where = npz.path, get = function(k) return r:get(k) end, reader = npz }
  elseif type(npz) == 'table' then
    local keys = {}
    for k, v in pairs(npz) do
      if type(k) == 'string' and (T.is_tensor(v) or type(v) == 'string' or T.is_string_array(v)) then
        keys[k] = true
      end
    end
    source = { keys = keys, where = '<table>', get = function(k) return npz[k] end }
  else
    error('NpzDeserializer: npz must be an open npz file, a file name or a table of tensors (got ' ..
      type(npz) .. ')', 3)
  end
  self:_init_state(source, opts, 'NpzDeserializer')
end
M.NpzDeserializer = NpzDeserializer

local function is_serializable(obj, fn, dict_ok)
  if dict_ok and common.is_serialized_dict(obj) then return end
  if type(obj) ~= 'table' or type(obj.serialize) ~= 'function' then
    error(string.format('%s: obj must have a serialize method (a Link, Optimizer, Trainer, ...; got %s)', fn,
      type(obj)), 3)
  end
end

local function check_file(file, fn)
  if type(file) ~= 'string' or file == '' then
    error(string.format('%s: file must be a non-empty path string (got %s)', fn, type(file)), 3)
  end
end


local SAVE_SIGNATURE = args.signature { 'compression' }

-- serialize(obj): the table {['path/key'] = tensor or string} that
-- DictionarySerializer makes of obj (Chainer's chainer.serializers.npz.serialize).
function M.serialize(obj)
  is_serializable(obj, 'serialize')
  local s = DictionarySerializer()
  s:save(obj)
  return s.target
end

-- save_npz(file, obj, compression) / save_npz(file, obj, {compression = true});
-- obj may also be a table serialize() made, saved as it is.
function M.save_npz(file, obj, ...)
  check_file(file, 'save_npz')
  is_serializable(obj, 'save_npz', true)
  local compression = args.parse_at(2, 'save_npz', SAVE_SIGNATURE, select('#', ...), ...).compression
  if compression == nil then compression = true end
  local target = obj
  if not common.is_serialized_dict(obj) then target = M.serialize(obj) end
  local ok, err = pcall(compression and T.savez_compressed or T.savez, file, target)
  if not ok then errors.raise('save_npz', err, 2, file) end
end

-- load_npz(file, obj, {path = '', strict = true, ignore_names = nil}), or
-- Chainer's positional (file, obj, path, strict, ignore_names)
function M.load_npz(file, obj, ...)
  check_file(file, 'load_npz')
  is_serializable(obj, 'load_npz')
  local o = args.parse_at(2, 'load_npz', common.DESERIALIZER_SIGNATURE, select('#', ...), ...)
  o.fn = 'load_npz'
  local ok, r = pcall(T.open_npz, file)
  if not ok then errors.raise('load_npz', r, 2, file) end
  local d
  ok, d = pcall(NpzDeserializer, r, o)
  if not ok then r:close() errors.raise('load_npz', d, 2, file) end
  local ok2, err = pcall(d.load, d, obj)
  r:close()
  if not ok2 then errors.raise('load_npz', err, 2, file) end
end

return M
