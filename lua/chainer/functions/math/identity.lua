-- functions/math/identity.lua: F.identity(...), which passes its inputs
-- through unchanged (the outputs share the input tensors) and passes the
-- gradients back the same way.
local FunctionNode = require 'chainer.function_node'

local M = {}

local Identity = FunctionNode:extend('Identity')
M.Identity = Identity

function Identity:forward(inputs)
  local out = {}
  for i = 1, #inputs do out[i] = inputs[i] end
  return out
end

function Identity:backward(idx, gys)
  local out = { n = #self.inputs }   -- indexed by input position
  for i = 1, out.n do out[i] = gys[i] end
  return out
end

-- F.identity(a, b, ...) returns as many Variables as it is given.
function M.identity(...)
  local ys = setmetatable({}, Identity):apply({ ... })
  return unpack(ys)
end

return M
