-- chainer.utils.tempdir([options,] fn): Chainer's tempdir() context manager
-- as a Lua scope.  Creates a fresh private directory (as mkdtemp: mode 0700, a
-- name no other process gets), calls fn(path), and removes the directory
-- with everything in it afterwards, also when fn raises.  Returns what fn
-- returns.
--
-- options (Python's tempfile.mkdtemp and Chainer's own):
--   prefix        the start of the directory name (default 'tmp')
--   suffix        the end of the directory name (default '')
--   dir           the parent directory (default $TMPDIR, else /tmp)
--   ignore_errors true: a failure to remove the directory is not an error
local ffi = require 'ffi'
local args = require 'chainer._args'
local libc = require 'chainer._libc'

local OPTIONS = args.accept { 'prefix', 'suffix', 'dir', 'ignore_errors' }

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- A name no other directory has: mkdir fails with EEXIST on a clash, and
-- then the next random name is tried (mkdtemp's loop, which allows no suffix).
local EEXIST = 17
local LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789_'
local state = (libc.getpid() * 7919 + math.floor(libc.monotonic() * 1e6)) % 2147483647
local function random_part()
  local out = {}
  for i = 1, 8 do
    state = (state * 48271) % 2147483647
    local k = state % #LETTERS + 1
    out[i] = LETTERS:sub(k, k)
  end
  return table.concat(out)
end

local function make(opts)
  for _, k in ipairs { 'prefix', 'suffix', 'dir' } do
    if opts[k] ~= nil and type(opts[k]) ~= 'string' then
      error(string.format('tempdir: %s must be a string (got %s)', k, type(opts[k])), 3)
    end
  end
  local dir = opts.dir or os.getenv('TMPDIR')
  if dir == nil or dir == '' then dir = '/tmp' end
  local prefix, suffix = opts.prefix or 'tmp', opts.suffix or ''
  for _ = 1, 1000 do
    local path = dir:gsub('(.)/+$', '%1') .. '/' .. prefix .. random_part() .. suffix
    if libc.C.mkdir(path, 448) == 0 then return path end   -- 0700
    local errno = ffi.errno()
    if errno ~= EEXIST then
      error(string.format('tempdir: cannot create a directory in %s: %s', dir, ffi.string(libc.C.strerror(errno))), 3)
    end
  end
  error('tempdir: no free directory name in ' .. dir .. ' after 1000 tries', 3)
end

local function remove(path, ignore_errors)
  local ok = os.execute('rm -rf ' .. shell_quote(path) .. ' 2>/dev/null')
  if ok ~= 0 and ok ~= true and not ignore_errors then
    error('tempdir: cannot remove ' .. path, 0)
  end
end

local function finish(path, ignore_errors, ok, ...)
  remove(path, ignore_errors)
  if not ok then error((...), 0) end
  return ...
end

return function(opts, fn)
  if fn == nil and type(opts) == 'function' then opts, fn = nil, opts end
  if type(fn) ~= 'function' then
    error('tempdir: pass the scope as a function: chainer.utils.tempdir([options,] function(path) ... end)', 2)
  end
  opts = args.options('tempdir', opts, OPTIONS)
  local path = make(opts)
  return finish(path, opts.ignore_errors, pcall(fn, path))
end
