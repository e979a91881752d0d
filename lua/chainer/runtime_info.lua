-- chainer.print_runtime_info([out]): Chainer's report of the versions and
-- the hardware a program runs on, for bug reports: the platform, chainlua,
-- LuaJIT, the BLAS library, the CPU threads and the CUDA backend.
-- `out` is anything with a write method (default io.stdout), as Chainer's
-- `out` file argument.
local lib = require 'chainer._lib'
local C, ffi = lib.C, lib.ffi

local function platform()
  local p = io.popen('uname -srm 2>/dev/null')
  local line = p and p:read('*l')
  if p then p:close() end
  return line or (jit.os .. ' ' .. jit.arch)
end

-- The lines, in order, as label/value pairs (also for specs and the REPL).
local function runtime_info()
  local cuda = require 'chainer.cuda'
  local n = cuda.device_count()
  local gpu = n > 0 and string.format('%d device%s; %s', n, n == 1 and '' or 's', cuda.info())
    or 'Not Available (' .. cuda.info() .. ')'
  return {
    { 'Platform', platform() },
    { 'chainlua', ffi.string(C.ch_version()) },
    { 'LuaJIT', string.format('%s (%s %s, JIT %s)', jit.version, jit.os, jit.arch, jit.status() and 'on' or 'off') },
    { 'BLAS', ffi.string(C.ch_blas_info()) },
    { 'Threads', tostring(C.ch_get_num_threads()) },
    { 'CUDA', gpu },
    { 'ChainerX', 'Not Available' },
    { 'iDeep', 'Not Available' },
  }
end

return setmetatable({ runtime_info = runtime_info }, {
  __call = function(_, out)
    out = out or io.stdout
    if type(out) ~= 'userdata' and (type(out) ~= 'table' or type(out.write) ~= 'function') then
      error(string.format('print_runtime_info: out must be a file or have a write method (got %s)', type(out)), 2)
    end
    for _, line in ipairs(runtime_info()) do out:write(line[1], ': ', line[2], '\n') end
  end,
})
