-- datasets/pickle_dataset.lua: Chainer's PickleDataset -- a file of
-- consecutive Python pickles, one example each, read at random -- and
-- PickleDatasetWriter, which makes such files.  Files move both ways with
-- Python: Chainer's writer (or `pickle.dump` in a loop) makes files this
-- reads, and this writer's files open with Chainer's PickleDataset (or
-- `pickle.load` in a loop).
--
--   local w = datasets.open_pickle_dataset_writer('train.pkl')   -- protocol 5
--   w:write({ x, 3 })          -- x a tensor: a (ndarray, int) tuple in Python
--   w:close()
--   local ds = datasets.open_pickle_dataset('train.pkl')
--   ds[1]                      -- { tensor, 3 }
--   ds:close()
--
-- Only data is read (see _pickle.lua for the types): a pickle that names
-- any other Python object is refused, naming the file, the offset and the
-- opcode, because loading it would run code.  Python's `None` is the
-- sentinel `pickle_dataset.None`; `pickle_dataset.bytes(s)`, `.float(x)`
-- and `.list(t)` choose bytes, float and list where a Lua value fits
-- several Python types.
local DatasetMixin = require 'chainer.dataset.dataset_mixin'
local class = require 'chainer.class'
local args = require 'chainer._args'
local values = require 'chainer.datasets._pickle'
local T = require 'chainer.tensor'
local ffi, C, check = T.ffi, T.C, T.check

local M = {}
M.None, M.bytes, M.float, M.list = values.None, values.bytes, values.float, values.list

-- Python's pickle.HIGHEST_PROTOCOL (3.8 and later), Chainer's default.
local HIGHEST_PROTOCOL = 5

-- The C error without the Lua position `check` prepends.
local function c_error(err) return (tostring(err):gsub('^.-:%d+: ', '')) end

---------------------------------------------------------------------------
-- PickleDataset
---------------------------------------------------------------------------
local PickleDataset = DatasetMixin:extend('PickleDataset')
M.PickleDataset = PickleDataset

local file_box = ffi.new('ch_pickle_file*[1]')
local pickle_box = ffi.new('ch_pickle*[1]')

-- PickleDataset(path): Chainer takes a seekable file object; here the
-- file's path (the file is mapped read-only, so forked workers share it).
-- Every example is parsed once here, as Chainer does.
function PickleDataset:init(reader)
  if type(reader) ~= 'string' or reader == '' then
    args.fail(string.format('PickleDataset: reader must be the path of a pickle dataset file (got %s)',
      type(reader) == 'string' and 'an empty string' or type(reader)), 3)
  end
  local ok, err = pcall(check, C.ch_pickle_file_open(reader, file_box))
  if not ok then args.fail('PickleDataset: ' .. c_error(err), 3) end
  self._file = ffi.gc(file_box[0], C.ch_pickle_file_close)
  self.path = reader
  self._length = tonumber(C.ch_pickle_file_count(self._file))
end

function PickleDataset:len() return self._length end

function PickleDataset:get_example(i)
  i = DatasetMixin.norm_index(i, self._length, 'PickleDataset:get_example', 2)
  if self._file == nil then args.fail(string.format("PickleDataset: '%s' is closed", self.path), 2) end
  local ok, err = pcall(check, C.ch_pickle_file_get(self._file, i - 1, pickle_box))
  if not ok then args.fail('PickleDataset: ' .. c_error(err), 2) end
  local p = pickle_box[0]
  local fine, value = pcall(values.decode, p, string.format("PickleDataset: '%s' example %d", self.path, i))
  C.ch_pickle_free(p)
  if not fine then args.fail(value, 2) end
  return value
end

-- Closes the file; the dataset cannot be read afterwards.
function PickleDataset:close()
  if self._file ~= nil then
    C.ch_pickle_file_close(ffi.gc(self._file, nil))
    self._file = nil
  end
end

---------------------------------------------------------------------------
-- PickleDatasetWriter
---------------------------------------------------------------------------
local PickleDatasetWriter = class.Object:extend('PickleDatasetWriter')
M.PickleDatasetWriter = PickleDatasetWriter

local WRITER_SIGNATURE = args.signature { 'writer', 'protocol' }
local OPEN_WRITER_SIGNATURE = args.signature { 'path', 'protocol' }

local function check_protocol(fn, protocol)
  if protocol == nil then return HIGHEST_PROTOCOL end
  if type(protocol) ~= 'number' or protocol ~= math.floor(protocol) or protocol < 2 or protocol > 5 then
    args.fail(string.format('%s: protocol must be 2, 3, 4 or 5 (got %s; protocols 0 and 1 are not written)', fn,
      tostring(protocol)), 4)
  end
  return protocol
end

-- PickleDatasetWriter(writer, [protocol = 5]): writer is an open binary
-- file (io.open(path, 'wb')) or any object with write(self, s) and
-- optionally flush/close.
function PickleDatasetWriter:init(...)
  local o = args.parse_at(3, 'PickleDatasetWriter', WRITER_SIGNATURE, select('#', ...), ...)
  local w = o.writer
  if not (io.type(w) == 'file' or (type(w) == 'table' and type(w.write) == 'function')) then
    args.fail(string.format('PickleDatasetWriter: writer must be an open file or an object with a write method '
      .. '(got %s)', io.type(w) == 'closed file' and 'a closed file' or type(w)), 3)
  end
  self._writer = w
  self._protocol = check_protocol('PickleDatasetWriter', o.protocol)
end

-- Appends one example.
function PickleDatasetWriter:write(x)
  local ok, data = pcall(values.dumps, x, self._protocol)
  if not ok then args.fail('PickleDatasetWriter:write: ' .. tostring(data), 2) end
  local done, err = self._writer:write(data)
  if io.type(self._writer) == 'file' and not done then
    args.fail('PickleDatasetWriter:write: ' .. tostring(err), 2)
  end
end

function PickleDatasetWriter:flush()
  if self._writer.flush then self._writer:flush() end
end

function PickleDatasetWriter:close()
  if io.type(self._writer) == 'closed file' then return end
  if self._writer.close then self._writer:close() end
end

---------------------------------------------------------------------------
-- opening by path
---------------------------------------------------------------------------
-- open_pickle_dataset(path): the PickleDataset of a file (close it when done).
function M.open_pickle_dataset(path)
  return PickleDataset(path)
end

-- open_pickle_dataset_writer(path, [protocol = 5]): a writer on a new file.
function M.open_pickle_dataset_writer(...)
  local o = args.parse_at(2, 'open_pickle_dataset_writer', OPEN_WRITER_SIGNATURE, select('#', ...), ...)
  if type(o.path) ~= 'string' or o.path == '' then
    args.fail(string.format('open_pickle_dataset_writer: path must be a non-empty string (got %s)', type(o.path)), 2)
  end
  local protocol = check_protocol('open_pickle_dataset_writer', o.protocol)
  local f, err = io.open(o.path, 'wb')
  if not f then args.fail('open_pickle_dataset_writer: ' .. tostring(err), 2) end
  return PickleDatasetWriter(f, protocol)
end

return M
