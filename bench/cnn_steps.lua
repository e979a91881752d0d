-- bench/cnn_steps.lua: one training step of a `bench/workloads.lua`
-- workload at a time, from the first: wall seconds and minor page faults
-- per step, to see when the steady state starts and to compare two
-- libraries step by step (run them alternately, CHAINLUA_LIB=...).
--   STEPS=12 BENCH_THREADS=2 chainlua bench/cnn_steps.lua [vgg|resnet18|mlp|lenet]
-- The CNN rows of `make bench` time steps 2-6 of each process; this shows
-- steps 1-STEPS.
local workload = arg[1] or 'vgg'
local here = arg[0]:match('^(.*)/[^/]*$') or 'bench'
package.path = here .. '/lib/?.lua;' .. package.path
local ffi = require 'ffi'
pcall(ffi.cdef, [[ struct cnn_steps_rusage { long f[18]; };
                   int getrusage(int who, struct cnn_steps_rusage *u); ]])
local ru = ffi.new('struct cnn_steps_rusage')
local function faults() -- ru_minflt: after two timevals and four longs
  ffi.C.getrusage(0, ru)
  return tonumber(ru.f[8])
end
local B = require 'bench'
local time = B.time
-- workloads.lua times through B.time and reports through B.report: run
-- its workload with a B.time that times single steps and prints them
B.time = function(step)
  local out = {}
  for i = 1, tonumber(os.getenv('STEPS') or 12) do
    local f0 = faults()
    local t = time(step, 1, 0, 1)[1]
    print(string.format('step %2d  wall %.3f s  faults %d', i, t, faults() - f0))
    out[#out + 1] = t
  end
  return out, out
end
B.report = function() end
arg = { [0] = here .. '/workloads.lua', workload }
dofile(here .. '/workloads.lua')
