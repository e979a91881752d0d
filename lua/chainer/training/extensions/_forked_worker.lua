-- _forked_worker.lua: runs a Lua function in a forked child process, the
-- way the snapshot writers get Chainer's background threads and processes
-- (LuaJIT has no threads).
--
-- fork() gives the child a copy-on-write image of the parent at that
-- moment, so the child writes the snapshot as it was when the writer was
-- called, while the parent trains on.  The child:
--   * runs with one OpenMP/OpenBLAS thread (a forked child has none of the
--     parent's pool threads, so it must never wake them);
--   * may first wait for an earlier child to finish (`after`), which makes
--     a line of children a FIFO queue with one writer at a time;
--   * sends an error message, if any, back through a pipe and leaves with
--     _exit (no Lua finalizers, no flushing of the parent's stdio buffers).
-- join() waits for the child and returns true, or nil and its message.
local ffi = require 'ffi'
local libc = require 'chainer._libc'
local C = libc.C

local M = {}

local MAX_MESSAGE = 4096
local WNOHANG = 1

local function new_pipe(what)
  local fds = ffi.new('int[2]')
  if C.pipe(fds) ~= 0 then
    error(what .. ': cannot create a pipe: ' .. ffi.string(C.strerror(ffi.errno())), 0)
  end
  return fds[0], fds[1]
end

-- Reads fd until end of file (every write end closed), then closes it.
local function read_all(fd)
  local buf = ffi.new('char[?]', 4096)
  local parts = {}
  while true do
    local n = tonumber(C.read(fd, buf, 4096))
    if n > 0 then
      parts[#parts + 1] = ffi.string(buf, n)
    elseif n == 0 or ffi.errno() ~= 4 then   -- 4: EINTR, read again
      break
    end
  end
  C.close(fd)
  return table.concat(parts)
end

local function write_all(fd, s)
  local pos = 0
  while pos < #s do
    local n = tonumber(C.write(fd, ffi.cast('const char *', s) + pos, #s - pos))
    if n <= 0 then return end
    pos = pos + n
  end
end

local Worker = {}
Worker.__index = Worker

-- start(fn, {what =, after = worker}): forks a child that runs fn().
-- `what` names the caller in messages; `after` is a worker this child
-- waits for before it runs fn.
function M.start(fn, opts)
  local what = opts.what
  local result_r, result_w = new_pipe(what)
  local done_r, done_w = new_pipe(what)
  io.stdout:flush()
  io.stderr:flush()
  local pid = tonumber(C.fork())
  if pid < 0 then
    local msg = ffi.string(C.strerror(ffi.errno()))
    for _, fd in ipairs({ result_r, result_w, done_r, done_w }) do C.close(fd) end
    error(what .. ': cannot start a writer process: ' .. msg, 0)
  end
  if pid == 0 then
    -- the child: never returns
    C.close(result_r)
    C.close(done_r)
    local ok, err = pcall(function()
      require('chainer').set_num_threads(1)
      if opts.after and opts.after._done_r then read_all(opts.after._done_r) end
      fn()
    end)
    if not ok then write_all(result_w, tostring(err):sub(1, MAX_MESSAGE)) end
    io.stdout:flush()
    io.stderr:flush()
    C._exit(ok and 0 or 1)
  end
  C.close(result_w)
  C.close(done_w)
  -- the previous child's done pipe now lives on in this child only
  if opts.after and opts.after._done_r then
    C.close(opts.after._done_r)
    opts.after._done_r = nil
  end
  return setmetatable({ pid = pid, _result_r = result_r, _done_r = done_r, what = what }, Worker)
end

local function exit_description(status)
  local sig = bit.band(status, 0x7f)
  if sig ~= 0 then return 'was killed by signal ' .. sig end
  return 'exited with status ' .. bit.band(bit.rshift(status, 8), 0xff)
end

-- Whether the child has finished (without waiting).
function Worker:done()
  if self._status ~= nil then return true end
  local st = ffi.new('int[1]')
  local r = tonumber(C.waitpid(self.pid, st, WNOHANG))
  if r == self.pid then self._status = st[0] return true end
  return false
end

-- Waits for the child.  Returns true, or nil and the reason it failed.
-- Joining twice returns the first answer again.
function Worker:join()
  if self._joined then return self._ok, self._message end
  local message = read_all(self._result_r)
  if self._done_r then C.close(self._done_r) self._done_r = nil end
  if self._status == nil then
    local st = ffi.new('int[1]')
    repeat
      local r = tonumber(C.waitpid(self.pid, st, 0))
    until r == self.pid or ffi.errno() ~= 4
    self._status = st[0]
  end
  self._joined = true
  if self._status == 0 then
    self._ok = true
  else
    self._ok = nil
    self._message = message ~= '' and message or ('the writer process ' .. exit_description(self._status))
  end
  return self._ok, self._message
end

return M
