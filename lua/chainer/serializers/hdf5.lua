-- serializers/hdf5.lua: Chainer's HDF5 format (groups and datasets as h5py
-- writes them: `predictor/l1/W` is dataset W in group predictor/l1).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local base = require 'chainer.serializer'
local common = require 'chainer.serializers._common'
local errors = require 'chainer._errors'

local M = {}

---------------------------------------------------------------------------
-- HDF5Serializer(file, {path = '', compression = 4})
---------------------------------------------------------------------------
local HDF5Serializer = base.Serializer:extend('HDF5Serializer')

-- file: an HDF5 file opened with tensor.open_hdf5(path, 'w' or 'a').
-- Chainer's HDF5Serializer(group, compression); path is chainlua's (children).
local SERIALIZER_SIGNATURE = args.signature({ 'compression' }, { 'path' })

function HDF5Serializer:init(file, ...)
  if type(file) ~= 'table' or file.write == nil then
    error('HDF5Serializer: file must be an HDF5 file from tensor.open_hdf5(path, "w") (got ' .. type(file) .. ')', 3)
  end
  local opts = args.parse_at(3, 'HDF5Serializer', SERIALIZER_SIGNATURE, select('#', ...), ...)
  self.file = file
  self.path = opts.path or ''
  self.compression = opts.compression or 4   -- accepted for Chainer compatibility; datasets are stored contiguous
end

function HDF5Serializer:call(key, value)
  local full = base.join(self.path, key)
  local t = common.to_storable(value, 'HDF5Serializer', full)
  if t ~= nil then self.file:write(full, t) end
  return value
end

function HDF5Serializer:child(name)
  return HDF5Serializer(self.file, { path = base.child_path(self.path, name), compression = self.compression })
end
M.HDF5Serializer = HDF5Serializer

---------------------------------------------------------------------------
-- HDF5Deserializer(file, {path = '', strict = true, ignore_names = nil})
---------------------------------------------------------------------------
local HDF5Deserializer = common.make_deserializer('HDF5Deserializer')

function HDF5Deserializer:init(file, ...)
  local opts = args.parse_at(3, 'HDF5Deserializer', common.DESERIALIZER_SIGNATURE, select('#', ...), ...)
  if type(file) == 'string' then
    local ok, f = pcall(T.open_hdf5, file, 'r')
    if not ok then errors.raise('HDF5Deserializer', f, 3) end
    file = f
  end
  if type(file) ~= 'table' or file.read == nil then
    error('HDF5Deserializer: file must be an HDF5 file from tensor.open_hdf5(path) (got ' .. type(file) .. ')', 3)
  end
  local keys = {}
  for _, k in ipairs(file:keys()) do keys[(k:gsub('^/+', ''))] = true end
  local f = file
  -- a target that holds numbers never reads a string dataset (whose heap a
  -- damaged file can point anywhere): it is refused from its header
  local function get(k, target)
    local numeric = T.is_tensor(target) or type(target) == 'number' or type(target) == 'boolean'
      or (type(target) == 'table' and target._is_variable)
    return f:read(k, numeric and 'numbers' or nil)
  end
  local source = { keys = keys, where = file.path, get = get, file = file }
  self:_init_state(source, opts, 'HDF5Deserializer')
end
M.HDF5Deserializer = HDF5Deserializer


local function check_args(file, obj, fn)
  if type(file) ~= 'string' or file == '' then
    error(string.format('%s: file must be a non-empty path string (got %s)', fn, type(file)), 3)
  end
  if common.is_serialized_dict(obj) and fn == 'save_hdf5' then return end
  if type(obj) ~= 'table' or type(obj.serialize) ~= 'function' then
    error(string.format('%s: obj must have a serialize method (a Link, Optimizer, Trainer, ...; got %s)', fn,
      type(obj)), 3)
  end
end

local SAVE_SIGNATURE = args.signature { 'compression' }

-- save_hdf5(file, obj, compression) / (file, obj, {compression = 4}): atomic
-- (the file appears on success only).
function M.save_hdf5(file, obj, ...)
  check_args(file, obj, 'save_hdf5')
  local opts = args.parse_at(2, 'save_hdf5', SAVE_SIGNATURE, select('#', ...), ...)
  local ok, f = pcall(T.open_hdf5, file, 'w')
  if not ok then errors.raise('save_hdf5', f, 2, file) end
  local s = HDF5Serializer(f, { compression = opts.compression })
  -- a table chainer.serializers.serialize made is replayed key by key
  if common.is_serialized_dict(obj) then obj = common.replay(obj) end
  local ok2, err = pcall(s.save, s, obj)
  if not ok2 then
    f:abort()
    errors.raise('save_hdf5', err, 2, file)
  end
  local ok3, err3 = pcall(f.close, f)
  if not ok3 then errors.raise('save_hdf5', err3, 2, file) end
end

-- load_hdf5(file, obj, {path = '', strict = true, ignore_names = nil})
function M.load_hdf5(file, obj, ...)
  check_args(file, obj, 'load_hdf5')
  local o = args.parse_at(2, 'load_hdf5', common.DESERIALIZER_SIGNATURE, select('#', ...), ...)
  o.fn = 'load_hdf5'
  local ok, f = pcall(T.open_hdf5, file, 'r')
  if not ok then errors.raise('load_hdf5', f, 2, file) end
  local d
  ok, d = pcall(HDF5Deserializer, f, o)
  if not ok then f:close() errors.raise('load_hdf5', d, 2, file) end
  local ok2, err = pcall(d.load, d, obj)
  f:close()
  if not ok2 then errors.raise('load_hdf5', err, 2, file) end
end

return M
