-- functions/array/copy.lua: F.copy(x, dst): a copy of x on device dst
-- (-1 or 'cpu' for the CPU, n or 'cuda:n' for a GPU).  The gradient is
-- copied back to x's device.  The output never shares memory with x.
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'

local M = {}

local SIGNATURE = args.signature { 'dst' }

local Copy = FunctionNode:extend('Copy')
M.Copy = Copy

function Copy:forward(inputs)
  local x = inputs[1]
  self._src = x.ptr.dev
  if x.ptr.dev == self.dst then return { x:copy() } end
  return { x:to_device(self.dst) }
end

function Copy:backward(_, gys)
  local f = setmetatable({}, Copy)
  f.dst = self._src
  return { f:apply({ gys[1] })[1] }
end

local function device_id(dst)
  if type(dst) == 'number' and dst == math.floor(dst) and dst >= -1 then return dst end
  if type(dst) == 'string' then
    if dst == 'cpu' or dst == '@numpy' or dst == 'numpy' then return -1 end
    local n = dst:match('^cuda:(%d+)$') or dst:match('^@cupy:(%d+)$') or dst:match('^gpu:(%d+)$')
    if n then return tonumber(n) end
  end
  error(string.format("copy: dst must be -1 or 'cpu' for the CPU, or a GPU id n or 'cuda:n' (got %s)", tostring(dst)), 3)
end

-- F.copy(x, dst)
function M.copy(x, dst)
  local v = args.parse('copy', SIGNATURE, 1, dst)
  args.array('copy', 'x', x)
  if v.dst == nil then error('copy: dst is required (-1 or \'cpu\' for the CPU)', 2) end
  local f = setmetatable({}, Copy)
  f.dst = device_id(v.dst)
  return f:apply({ x })[1]
end

return M
