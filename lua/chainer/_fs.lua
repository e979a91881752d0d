-- _fs.lua: the file-system helpers of the Lua layer (internal; not exported):
-- exists, is_dir, mkdir_p, listdir, and writing a file atomically (write a
-- temporary in the same folder, then rename it over the target: a reader,
-- or a run killed half-way, never sees half a file; the temporary lies in
-- the same folder because rename is atomic only within one file system).
--
-- Errors are returned (nil/false, message), never raised: each caller
-- decides whether a failure is fatal (a snapshot) or not (a cache entry).
local libc = require 'chainer._libc'
local C = libc.C

local M = {}

function M.exists(path)
  local f = io.open(path, 'rb')
  if f then f:close() return true end
  return false
end

-- The whole content of a file (nil when it cannot be read).
function M.read_file(path)
  local f = io.open(path, 'rb')
  if not f then return nil end
  local data = f:read('*a')
  f:close()
  return data
end

function M.is_dir(path)
  local d = C.opendir(path)
  if d == nil then return false end
  C.closedir(d)
  return true
end

-- mkdir -p (mode 0755): creates `path` and its missing parents.  Returns
-- true when `path` is a folder afterwards.
function M.mkdir_p(path)
  if path == nil or path == '' then return false end
  local acc = path:sub(1, 1) == '/' and '/' or ''
  for part in path:gmatch('[^/]+') do
    acc = acc .. part
    C.mkdir(acc, 493)   -- 0755; "already exists" is fine, the final test decides
    acc = acc .. '/'
  end
  return M.is_dir(path)
end

function M.join(dir, name)
  if dir == nil or dir == '' or name:sub(1, 1) == '/' then return name end
  if dir:sub(-1) == '/' then return dir .. name end
  return dir .. '/' .. name
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- The names in a folder, hidden ones included (nil when it cannot be listed).
function M.listdir(dir)
  if not M.is_dir(dir) then return nil end
  local p = io.popen('ls -1A ' .. shell_quote(dir) .. ' 2>/dev/null')
  if not p then return nil end
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

local counter = 0
-- A fresh temporary path beside `path`: a hidden name in the same folder,
-- unique across processes (pid) and calls (counter).  `suffix` is appended
-- for writers that insist on an extension (numpy's '.npz').
function M.temp_path(path, suffix)
  counter = counter + 1
  local dir, base = path:match('^(.*/)([^/]*)$')
  if not dir then dir, base = '', path end
  return string.format('%s.%s.tmp-%d-%d%s', dir, base, libc.getpid(), counter, suffix or '')
end

-- Moves a finished temporary over `path`.  On failure removes the temporary
-- and returns nil, message.
function M.replace(tmp, path)
  local ok, err = os.rename(tmp, path)
  if not ok then
    os.remove(tmp)
    return nil, string.format('cannot move %s to %s: %s', tmp, path, tostring(err))
  end
  return true
end

-- Calls write(tmp) to produce the file under a temporary name, then moves
-- it to `path`.  Returns true plus write's first result, or nil, message (the
-- temporary removed).  An error raised by write is raised again after the
-- clean-up.
function M.write_via_temp(path, write, suffix)
  local tmp = M.temp_path(path, suffix)
  local ok, result = pcall(write, tmp)
  if not ok then
    os.remove(tmp)
    error(result, 0)
  end
  local moved, err = M.replace(tmp, path)
  if not moved then return nil, err end
  return true, result
end

-- Writes the string `data` to `path` atomically, with the runtime's one
-- implementation (runtime/io/atomic.c, also behind the npz/HDF5/image
-- writers).  Returns true, or nil, message.
function M.atomic_write(path, data)
  local lib = require 'chainer._lib'
  if lib.C.ch_write_file_atomic(path, data, #data) ~= 0 then
    return nil, require('ffi').string(lib.C.ch_last_error())
  end
  return true
end

return M
