-- function_hooks/cuda_profile.lua: CUDAProfileHook, every function's
-- forward and backward bracketed by an NVTX range named after it
-- ('<label>.forward', '<label>.backward'), for Nsight Systems' timeline:
--
--   local hook = chainer.function_hooks.CUDAProfileHook()
--   hook:scope(function() model(x) end)      -- under `nsys profile luajit train.lua`
--
-- The ranges are pushed through the CUDA backend (runtime/cuda/nvtx.c,
-- NVTX 3), which they need; a GPU they do not.  Without a profiler the
-- pushes and pops do nothing.
local lib = require 'chainer._lib'
local FunctionHook = require('chainer.function_hook').FunctionHook

local CUDAProfileHook = FunctionHook:extend('CUDAProfileHook')
CUDAProfileHook.name = 'CUDAProfileHook'

-- The NVTX calls, as fields so that a spec can record them instead.
function CUDAProfileHook.range_push(name) lib.check(lib.C.ch_cuda_nvtx_push(name), 2) end
function CUDAProfileHook.range_pop() lib.check(lib.C.ch_cuda_nvtx_pop(), 2) end

-- Whether NVTX ranges can be pushed here (an empty range tells), and if
-- not, why.
function CUDAProfileHook.nvtx_available()
  if lib.C.ch_cuda_nvtx_push('CUDAProfileHook') ~= 0 then return false, lib.ffi.string(lib.C.ch_last_error()) end
  lib.C.ch_cuda_nvtx_pop()
  return true
end

function CUDAProfileHook:init()
  local ok, why = self.nvtx_available()
  if not ok then
    require('chainer._args').fail('CUDAProfileHook: needs the CUDA backend for NVTX ranges (' .. why .. ')', 3)
  end
end

function CUDAProfileHook:forward_preprocess(func) self.range_push(func:label() .. '.forward') end
function CUDAProfileHook:forward_postprocess(func) self.range_pop() end
function CUDAProfileHook:backward_preprocess(func) self.range_push(func:label() .. '.backward') end
function CUDAProfileHook:backward_postprocess(func) self.range_pop() end

return CUDAProfileHook
