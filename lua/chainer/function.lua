-- function.lua: chainer.Function, Chainer's old-style function (forward and
-- backward both on tensors), run on top of the FunctionNode machinery.
--
--   local MulAdd = chainer.Function:extend('MulAdd')
--   function MulAdd:forward(inputs)                 -- tensors
--     local x, y, z = inputs[1], inputs[2], inputs[3]
--     return { x * y + z }
--   end
--   function MulAdd:backward(inputs, grad_outputs)  -- tensors
--     local x, y = inputs[1], inputs[2]
--     local gw = grad_outputs[1]
--     return { y * gw, x * gw, gw }
--   end
--   local w = MulAdd()(x, y, z)                     -- Variables out
--
-- forward/backward default to forward_cpu/forward_gpu and
-- backward_cpu/backward_gpu, chosen by the inputs' device.  Inputs are
-- retained for backward by default (call retain_inputs({}) in forward to
-- keep none).  A Function instance is one graph node: calling it twice is an
-- error.  Its backward is not differentiable again (old-style functions do
-- not support double backprop).
local T = require 'chainer.tensor'
local class = require 'chainer.class'
local Variable = require 'chainer.variable'
local FunctionNode = require 'chainer.function_node'

local new_var = Variable.new_var

local Function = class.Object:extend('Function')

-- The FunctionNode that runs an old-style Function.
local FunctionAdapter = FunctionNode:extend('FunctionAdapter')
Function.FunctionAdapter = FunctionAdapter

function FunctionAdapter:label() return self._function:label() end

function FunctionAdapter:check_type_forward(in_types)
  return self._function:check_type_forward(in_types)
end

local function on_gpu(arrays)
  for i = 1, #arrays do
    local a = arrays[i]
    if a and a.ptr.dev >= 0 then return true end
  end
  return false
end

function FunctionAdapter:forward(inputs)
  local fn = self._function
  fn._input_indexes_to_retain = nil
  fn._output_indexes_to_retain = nil
  local outs = fn:forward(inputs)
  if type(outs) ~= 'table' then
    error(string.format('%s: forward must return a table of tensors (return {y}, not y)', fn:label()), 0)
  end
  local ri = fn._input_indexes_to_retain
  if ri == nil then
    ri = {}
    for i = 1, #inputs do ri[i] = i end
  end
  self:retain_inputs(ri)
  if fn._output_indexes_to_retain then self:retain_outputs(fn._output_indexes_to_retain) end
  return outs
end

function FunctionAdapter:backward(idx, grad_outputs)
  local fn = self._function
  local ins = self.inputs
  local in_data = {}
  for i = 1, #ins do in_data[i] = ins[i].data or nil end
  local gy = {}
  local nout = #self.outputs
  for j = 1, nout do
    local g = grad_outputs[j]
    gy[j] = g and g._data or nil
  end
  local gxs = fn:backward(in_data, gy)
  if type(gxs) ~= 'table' then
    error(string.format('%s: backward must return a table of gradients (return {gx}, not gx)', fn:label()), 0)
  end
  local ret = { n = #ins }
  for i = 1, #ins do
    local g = gxs[i]
    if g ~= nil then
      if not T.is_tensor(g) then
        error(string.format('%s: backward returned a %s for input %d (expected a tensor or nil)',
          fn:label(), type(g), i), 0)
      end
      ret[i] = new_var(g, false)
    end
  end
  return ret
end

---------------------------------------------------------------------------
-- Function
---------------------------------------------------------------------------
function Function:label() return getmetatable(self).__name end
function Function:check_type_forward(in_types) end

function Function:forward(inputs)
  local f = on_gpu(inputs) and self.forward_gpu or self.forward_cpu
  if f == nil then
    error(string.format('%s: implement forward(inputs) (or forward_cpu/forward_gpu)', self:label()), 2)
  end
  return f(self, inputs)
end

function Function:backward(inputs, grad_outputs)
  local f = (on_gpu(inputs) or on_gpu(grad_outputs)) and self.backward_gpu or self.backward_cpu
  if f == nil then return {} end         -- not differentiable
  return f(self, inputs, grad_outputs)
end

function Function:retain_inputs(indexes) self._input_indexes_to_retain = indexes end
function Function:retain_outputs(indexes) self._output_indexes_to_retain = indexes end

-- The output data retained with retain_outputs (inside backward).
function Function:output_data()
  local node = rawget(self, 'node')
  local d = node and rawget(node, '_retained_output_data')
  if not d then return nil end
  local out = {}
  local idx = node._output_indexes_to_retain
  for k = 1, #idx do out[idx[k]] = d[k] end
  return out
end

-- Applies the function: f(x, y, ...) returns one Variable per output.
function Function:apply(inputs)
  if rawget(self, 'node') then
    error(string.format('%s: this Function instance has already been called; create a new one ' ..
      '(%s()) for every call', self:label(), self:label()), 2)
  end
  local node = setmetatable({}, FunctionAdapter)
  node._function = self
  self.node = node
  if self.check_type_forward == Function.check_type_forward then
    node.check_type_forward = FunctionNode.check_type_forward   -- nothing to check
  end
  local lh = rawget(self, '_pending_hooks')
  if lh then
    for i = 1, #lh do node:add_hook(lh[i][1], lh[i][2]) end
  end
  local ys = node:apply(inputs)
  self.inputs = node.inputs
  self.outputs = node.outputs
  return ys
end

Function.__call = function(self, ...)
  local ys = self:apply({ ... })
  return unpack(ys)
end

function Function:add_hook(hook, name)
  local node = rawget(self, 'node')
  if node then return node:add_hook(hook, name) end
  local lh = rawget(self, '_pending_hooks') or {}
  lh[#lh + 1] = { hook, name }
  self._pending_hooks = lh
end

function Function:delete_hook(name)
  local node = rawget(self, 'node')
  if node then return node:delete_hook(name) end
  local lh = rawget(self, '_pending_hooks') or {}
  for i = #lh, 1, -1 do
    local n = lh[i][2] or require('chainer.function_hook').name_of(lh[i][1])
    if n == name then table.remove(lh, i) return end
  end
  error(string.format("%s: delete_hook: no hook named '%s'", self:label(), tostring(name)), 2)
end

function Function:unchain()
  local node = rawget(self, 'node')
  if node then node:unchain() end
  self.inputs = nil
end

-- rank of the underlying node
function Function:rank()
  local node = rawget(self, 'node')
  return node and node.rank or 0
end

return Function
