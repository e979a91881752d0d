-- tensor/io.lua: tensors in files -- .npy, .npz (NumPy), HDF5 (h5py layout)
-- and IDX (MNIST).  Writers are atomic: they write a temporary file beside
-- the target and rename it into place when complete.  String arrays (NumPy
-- '<U'/'|S', HDF5 strings) come and go as tensor/strings.lua's string
-- arrays.  See docs/files.md.
local M = require 'chainer.tensor.core'
require 'chainer.tensor.strings'
local ffi, C, check = M.ffi, M.C, M.check
local wrap, box = M.wrap, M.box
local kind_box = ffi.new('char[1]')

-- The value just read into box[0] with kind_box[0]: a tensor, or a string
-- array for a string kind.
local function unbox()
  local t = wrap(box[0])
  local kind = kind_box[0]
  if kind == 0 then return t end
  return M._strings_from_tensor(t, string.char(kind))
end

-- A flat list of Lua strings (a 1-d string array).
local function is_string_list(v)
  if type(v) ~= 'table' or getmetatable(v) ~= nil or #v == 0 then return false end
  for i = 1, #v do if type(v[i]) ~= 'string' then return false end end
  return true
end

local function check_path(path, fn)
  if type(path) ~= 'string' or path == '' then
    error(string.format('%s: path must be a non-empty string (got %s)', fn, type(path)), 3)
  end
end

-- The runtime tensor to write for a value and its string kind (0 numeric,
-- 'U'/'S' byte for strings: a Lua string, a string array, a list of strings).
local function check_tensor(t, fn, what, text_only)
  if M.is_tensor(t) then return t, 0 end
  if type(t) == 'string' or M.is_string_array(t) or is_string_list(t) then
    if is_string_list(t) then t = M.string_array(t) end
    local st, kind = M._strings_to_tensor(t, fn, what, text_only)
    return st, kind:byte()
  end
  if type(t) == 'number' or type(t) == 'boolean' or type(t) == 'table' then return M.array(t), 0 end
  error(string.format('%s: %s must be a tensor, a string or a string array (got %s)', fn, what, type(t)), 3)
end

-- Sorted keys of a name -> tensor table (checked).
local function sorted_names(tbl, fn)
  if type(tbl) ~= 'table' or M.is_tensor(tbl) then
    error(string.format('%s: arrays must be a table {name = tensor, ...} (got %s)', fn,
      M.is_tensor(tbl) and 'a tensor' or type(tbl)), 3)
  end
  local names = {}
  for k in pairs(tbl) do
    if type(k) ~= 'string' or k == '' then
      error(string.format('%s: array names must be non-empty strings (got %s %s)', fn, type(k), tostring(k)), 3)
    end
    names[#names + 1] = k
  end
  table.sort(names)
  return names
end

---------------------------------------------------------------------------
-- .npy
---------------------------------------------------------------------------
-- save(path, t): one tensor as NumPy .npy (v1.0, C order, little-endian).
function M.save(path, t)
  check_path(path, 'save')
  local kind
  t, kind = check_tensor(t, 'save', 't')
  check(C.ch_npy_save_ex(path, t.ptr, kind), 2)
end

-- load(path): a .npy file as a tensor; a .npz file (zip magic) as a table.
function M.load(path)
  check_path(path, 'load')
  local f = io.open(path, 'rb')
  if f then
    local magic = f:read(2)
    f:close()
    if magic == 'PK' then return M.load_npz(path) end
  end
  check(C.ch_npy_load_ex(path, box, kind_box), 2)
  return unbox()
end

---------------------------------------------------------------------------
-- .npz
---------------------------------------------------------------------------
local writer_box = ffi.new('ch_npz_writer*[1]')
local reader_box = ffi.new('ch_npz_reader*[1]')

local function savez(path, tbl, compress, fn)
  check_path(path, fn)
  local names = sorted_names(tbl, fn)
  local tensors, kinds = {}, {}
  for i, k in ipairs(names) do tensors[i], kinds[i] = check_tensor(tbl[k], fn, "array '" .. k .. "'") end
  check(C.ch_npz_writer_open(path, compress, writer_box), 3)
  local w = writer_box[0]
  for i, k in ipairs(names) do
    if C.ch_npz_writer_add_ex(w, k, tensors[i].ptr, kinds[i]) ~= 0 then
      local msg = ffi.string(C.ch_last_error())
      C.ch_npz_writer_abort(w)
      error(msg, 3)
    end
  end
  check(C.ch_npz_writer_close(w), 3)
end

-- savez(path, {name = tensor, ...}): np.savez layout, stored members.
function M.savez(path, tbl) savez(path, tbl, 0, 'savez') end
-- savez_compressed(path, tbl): np.savez_compressed layout, deflate members.
function M.savez_compressed(path, tbl) savez(path, tbl, 1, 'savez_compressed') end

-- A lazy reader: r:keys() (sorted), r:get(name, [dtype]), r:has(name), r:close().
local NpzReader = {}
NpzReader.__index = NpzReader

local function reader_ptr(r, fn)
  local p = r._ptr
  if p == nil then error(string.format("%s: the npz file '%s' is closed", fn, r.path), 3) end
  return p
end

function NpzReader:keys()
  local p = reader_ptr(self, 'keys')
  local ks = {}
  for i = 0, C.ch_npz_reader_count(p) - 1 do ks[#ks + 1] = ffi.string(C.ch_npz_reader_name(p, i)) end
  table.sort(ks)
  return ks
end

function NpzReader:has(name)
  for _, k in ipairs(self:keys()) do if k == name then return true end end
  return false
end

-- get(name, [dtype]): with a dtype, the numbers are converted as they are
-- decoded (a uint8 dataset read as float32 never exists as a uint8 tensor).
function NpzReader:get(name, dtype)
  local p = reader_ptr(self, 'get')
  if type(name) ~= 'string' then
    error(string.format('get: name must be a string (got %s)', type(name)), 2)
  end
  if dtype ~= nil then
    check(C.ch_npz_reader_load_as(p, name, M.dtype_code(dtype, 'get'), box), 2)
    return wrap(box[0])
  end
  check(C.ch_npz_reader_load_ex(p, name, box, kind_box), 2)
  return unbox()
end

-- Closes the file now (idempotent); the garbage collector closes it otherwise.
function NpzReader:close()
  local p = self._ptr
  if p ~= nil then
    self._ptr = nil
    ffi.gc(p, nil)
    C.ch_npz_reader_close(p)
  end
end

function M.open_npz(path)
  check_path(path, 'open_npz')
  check(C.ch_npz_reader_open(path, reader_box), 2)
  local p = ffi.gc(reader_box[0], C.ch_npz_reader_close)
  return setmetatable({ _ptr = p, path = path }, NpzReader)
end

-- load_npz(path): every array, as a table name -> tensor.
function M.load_npz(path)
  check_path(path, 'load_npz')
  check(C.ch_npz_reader_open(path, reader_box), 2)
  local p = reader_box[0]
  local out = {}
  for i = 0, C.ch_npz_reader_count(p) - 1 do
    local name = C.ch_npz_reader_name(p, i)
    if C.ch_npz_reader_load_ex(p, name, box, kind_box) ~= 0 then
      local msg = ffi.string(C.ch_last_error())
      C.ch_npz_reader_close(p)
      error(msg, 2)
    end
    out[ffi.string(name)] = unbox()
  end
  C.ch_npz_reader_close(p)
  return out
end

---------------------------------------------------------------------------
-- HDF5
---------------------------------------------------------------------------
local h5_box = ffi.new('ch_h5_file*[1]')

local H5File = {}
H5File.__index = H5File

local function h5_ptr(f, fn)
  local p = f._ptr
  if p == nil then error(string.format("%s: the HDF5 file '%s' is closed", fn, f.path), 3) end
  return p
end

function H5File:write(path, t)
  local p = h5_ptr(self, 'write')
  if type(path) ~= 'string' then error(string.format('write: path must be a string (got %s)', type(path)), 2) end
  local kind
  t, kind = check_tensor(t, 'write', 't', true)
  check(C.ch_h5_write_ex(p, path, t.ptr, kind), 2)
end

-- read(path, [expect]): expect = 'numbers' refuses a string dataset from its
-- header, before any of it is read (a model load never reads strings).
function H5File:read(path, expect)
  local p = h5_ptr(self, 'read')
  if type(path) ~= 'string' then error(string.format('read: path must be a string (got %s)', type(path)), 2) end
  if expect ~= nil and expect ~= 'numbers' then
    error(string.format("read: expect must be nil or 'numbers' (got %s)", tostring(expect)), 2)
  end
  if expect == 'numbers' then
    check(C.ch_h5_read(p, path, box), 2)
    return wrap(box[0])
  end
  check(C.ch_h5_read_ex(p, path, box, kind_box), 2)
  return unbox()
end

function H5File:exists(path)
  return C.ch_h5_exists(h5_ptr(self, 'exists'), path) ~= 0
end

-- Dataset paths below the root, recursively, sorted.
function H5File:keys()
  local p = h5_ptr(self, 'keys')
  local ks = {}
  local n = C.ch_h5_count(p)
  if n < 0 then error('keys: ' .. ffi.string(C.ch_last_error()), 2) end   -- damaged groups
  for i = 0, n - 1 do ks[#ks + 1] = ffi.string(C.ch_h5_name(p, i)) end
  return ks
end

-- Closes (and, for mode 'w', commits) the file; idempotent.
function H5File:close()
  local p = self._ptr
  if p ~= nil then
    self._ptr = nil
    ffi.gc(p, nil)
    check(C.ch_h5_close(p), 2)
  end
end

-- Discards a file opened with 'w' (nothing appears under its name).
function H5File:abort()
  local p = self._ptr
  if p ~= nil then
    self._ptr = nil
    ffi.gc(p, nil)
    C.ch_h5_abort(p)
  end
end

-- open_hdf5(path, [mode = 'r']): 'r' read, 'w' create (atomic), 'a' read/write.
function M.open_hdf5(path, mode)
  check_path(path, 'open_hdf5')
  mode = mode or 'r'
  if mode ~= 'r' and mode ~= 'w' and mode ~= 'a' then
    error(string.format("open_hdf5: mode must be 'r', 'w' or 'a' (got %s)", tostring(mode)), 2)
  end
  check(C.ch_h5_open(path, mode:byte(), h5_box), 2)
  local p = ffi.gc(h5_box[0], C.ch_h5_close)
  return setmetatable({ _ptr = p, path = path, mode = mode }, H5File)
end

-- save_hdf5(path, {['a/b/c'] = tensor, ...}): one dataset per entry.
function M.save_hdf5(path, tbl)
  check_path(path, 'save_hdf5')
  local names = sorted_names(tbl, 'save_hdf5')
  local tensors, kinds = {}, {}
  for i, k in ipairs(names) do
    tensors[i], kinds[i] = check_tensor(tbl[k], 'save_hdf5', "array '" .. k .. "'", true)
  end
  check(C.ch_h5_open(path, ('w'):byte(), h5_box), 2)
  local p = h5_box[0]
  for i, k in ipairs(names) do
    if C.ch_h5_write_ex(p, k, tensors[i].ptr, kinds[i]) ~= 0 then
      local msg = ffi.string(C.ch_last_error())
      C.ch_h5_abort(p)
      error(msg, 2)
    end
  end
  check(C.ch_h5_close(p), 2)
end

-- load_hdf5(path): every dataset, as a flat table 'a/b/c' -> tensor.
function M.load_hdf5(path)
  check_path(path, 'load_hdf5')
  check(C.ch_h5_open(path, ('r'):byte(), h5_box), 2)
  local p = h5_box[0]
  local out = {}
  local n = C.ch_h5_count(p)
  if n < 0 then   -- damaged groups: the message names the file
    local msg = ffi.string(C.ch_last_error())
    C.ch_h5_close(p)
    error('load_hdf5: ' .. msg, 2)
  end
  local names = {}
  for i = 0, n - 1 do names[i + 1] = ffi.string(C.ch_h5_name(p, i)) end
  for _, k in ipairs(names) do
    if C.ch_h5_read_ex(p, k, box, kind_box) ~= 0 then
      local msg = ffi.string(C.ch_last_error())
      C.ch_h5_close(p)
      error(msg, 2)
    end
    out[k] = unbox()
  end
  C.ch_h5_close(p)
  return out
end

---------------------------------------------------------------------------
-- IDX (MNIST)
---------------------------------------------------------------------------
-- load_idx(path): an IDX file (plain or gzip) as a tensor of its own dtype.
function M.load_idx(path)
  check_path(path, 'load_idx')
  check(C.ch_idx_load(path, box), 2)
  return wrap(box[0])
end

return M
