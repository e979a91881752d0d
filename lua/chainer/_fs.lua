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

-- The temporaries of this process's writes still in progress (path -> true).
local in_flight = {}

-- A temporary that temp_path made for a file named `base`: '.BASE.tmp-PID-N',
-- maybe with the runtime writer's own '.tmp-XXXXXX' (runtime/io/atomic.c)
-- after it.  Returns base, pid, the temp_path part; nil for other names.
local function parse_temp_name(name)
  local base, pid, n, rest = name:match('^%.(.+)%.tmp%-(%d+)%-(%d+)(.*)$')
  if not base or not (rest == '' or rest:match('^%.tmp%-%w+$')) then return nil end
  return base, tonumber(pid), '.' .. base .. '.tmp-' .. pid .. '-' .. n
end

-- Seconds since `path` was last modified (nil when unknown).
local function age_of(path)
  local p = io.popen("stat -c %Y '" .. path:gsub("'", "'\\''") .. "' 2>/dev/null")
  if not p then return nil end
  local mtime = tonumber(p:read('*l'))
  p:close()
  return mtime and (os.time() - mtime) or nil
end

M.STALE_TEMP_AGE = 24 * 3600

-- Removes, in `dir`, the temporaries temp_path made for files whose names
-- `owns(base)` claims, left behind by a crashed writer: one whose pid no
-- longer runs, this process's own when not in progress (a reused pid), and
-- any older than `max_age` seconds (default a day: a pid reused by some
-- other process).  A temporary of a live writer, another process writing
-- into the same folder now, is left alone.  Returns the names removed.
function M.remove_stale_temporaries(dir, owns, max_age)
  max_age = max_age or M.STALE_TEMP_AGE
  local removed = {}
  local me = libc.getpid()
  for _, name in ipairs(M.listdir(dir) or {}) do
    local base, pid, own_part = parse_temp_name(name)
    if base and owns(base) then
      local path = M.join(dir, name)
      local stale
      if pid == me then
        stale = not in_flight[M.join(dir, own_part)]
      elseif not libc.process_exists(pid) then
        stale = true
      else
        local age = age_of(path)
        stale = age ~= nil and age > max_age
      end
      if stale and os.remove(path) then removed[#removed + 1] = name end
    end
  end
  return removed
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
  in_flight[tmp] = true
  local ok, result = pcall(write, tmp)
  in_flight[tmp] = nil
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
