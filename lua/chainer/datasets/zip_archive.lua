-- datasets/zip_archive.lua: a zip archive read member by member, on the
-- runtime's zip reader (runtime/io/zip.c, the one behind .npz files).
--
--   local z = ZipArchive(path, 'ZippedImageDataset')   -- fn names the caller in errors
--   z.names               Lua array of member names, in archive order
--   z:index(name)         1-based position of a member, or nil
--   z:read(i)             member i's bytes as a 1-D uint8 tensor (CRC-checked)
--   z:close()
-- A forked process (a multiprocess iterator's worker) reopens the file on
-- its first read instead of sharing the parent's file position.
local class = require 'chainer.class'
local T = require 'chainer.tensor'
local libc = require 'chainer._libc'
local args = require 'chainer._args'
local ffi, C, check = T.ffi, T.C, T.check

local ZipArchive = class.Object:extend('ZipArchive')

local handle_box = ffi.new('ch_zip*[1]')

local function open(path, fn)
  local ok, err = pcall(check, C.ch_zip_archive_open(path, fn, handle_box))
  if not ok then args.fail((tostring(err):gsub('^.-:%d+: ', '')), 4) end
  return ffi.gc(handle_box[0], C.ch_zip_archive_close)
end

function ZipArchive:init(path, fn)
  fn = fn or 'ZipArchive'
  if type(path) ~= 'string' or path == '' then
    args.fail(string.format('%s: the zip file name must be a non-empty string (got %s)', fn, type(path)), 3)
  end
  self.path, self.fn = path, fn
  self._z = open(path, fn)
  self._pid = libc.getpid()
  local names, where = {}, {}
  for i = 0, C.ch_zip_archive_count(self._z) - 1 do
    local name = ffi.string(C.ch_zip_archive_name(self._z, i))
    names[i + 1] = name
    where[name] = i + 1   -- the last of duplicate names wins, as in Python's zipfile
  end
  self.names, self._where = names, where
end

function ZipArchive:index(name) return self._where[name] end

function ZipArchive:read(i)
  if self._z == nil then args.fail(string.format("%s: the zip file '%s' is closed", self.fn, self.path), 2) end
  local pid = libc.getpid()
  if pid ~= self._pid then
    self._z = open(self.path, self.fn)
    self._pid = pid
  end
  local ok, err = pcall(check, C.ch_zip_archive_read(self._z, i - 1, self.fn, T.box))
  if not ok then args.fail((tostring(err):gsub('^.-:%d+: ', '')), 2) end
  return T.wrap(T.box[0])
end

function ZipArchive:close()
  if self._z ~= nil then
    C.ch_zip_archive_close(ffi.gc(self._z, nil))
    self._z = nil
  end
end

return ZipArchive
