-- graph_optimizations/trace.lua: what static_graph records while a
-- decorated forward runs define-by-run (internal).
--
-- While a trace is active (M.active), FunctionNode.apply reports every node
-- it applies (M.active:node), chainer.static_code reports its calls
-- (M.active:code), and functions whose effects a replay could not
-- reproduce call M.refuse(reason).  Every tensor the forward touches gets a
-- slot, numbered in order of first appearance:
--   {kind = 'arg', index = k}        the k-th argument of the forward
--   {kind = 'ext', var = v}          a Variable from outside (a Parameter, a
--                                    captured Variable): read afresh on replay
--   {kind = 'const', tensor = t}     a tensor from outside, kept as it is
--   {kind = 'out'}                   made by a step of the trace
-- A step is a node ({kind = 'node', cls, template, inputs, outputs,
-- bindings}) or a static_code call ({kind = 'code', fn, args, outputs}).
local T = require 'chainer.tensor'

local is_tensor = T.is_tensor

local M = { active = false }

local Trace = {}
Trace.__index = Trace

-- A new trace for a forward called with the values args[1..n].
function M.new(args, n)
  local tr = setmetatable({ slots = {}, steps = {}, refused = false, slot_of_tensor = {}, slot_of_var = {},
    arg_slots = {} }, Trace)
  for k = 1, n do
    local a = args[k]
    if is_tensor(a) then
      local s = tr:new_slot({ kind = 'arg', index = k })
      tr.slot_of_tensor[a] = s
      tr.arg_slots[k] = s
    elseif type(a) == 'table' and a._is_variable and a._data ~= nil then
      local s = tr:new_slot({ kind = 'arg', index = k })
      tr.slot_of_var[a] = s
      tr.slot_of_tensor[a._data] = s
      tr.arg_slots[k] = s
    end
  end
  return tr
end

function Trace:new_slot(desc)
  local s = #self.slots + 1
  self.slots[s] = desc
  return s
end

-- The first reason wins; a refused trace is never replayed.
function Trace:refuse(reason)
  if not self.refused then self.refused = reason end
end

-- The slot of an input: a tensor made by an earlier step or an argument's,
-- then a Variable from outside, then a constant tensor.
function Trace:input_slot(x, d)
  local s = self.slot_of_tensor[d]
  if s then return s end
  if type(x) == 'table' then
    s = self.slot_of_var[x]
    if s then return s end
    s = self:new_slot({ kind = 'ext', var = x })
    self.slot_of_var[x] = s
    return s
  end
  s = self:new_slot({ kind = 'const', tensor = d })
  self.slot_of_tensor[d] = s
  return s
end

local function new_outputs(tr, outs, n)
  local ids = {}
  for j = 1, n do
    local s = tr:new_slot({ kind = 'out' })
    ids[j] = s
    tr.slot_of_tensor[outs[j]] = s
  end
  return ids
end

-- The node's own fields before its forward runs: what a replay copies into
-- a fresh instance of the same class.
function M.template(f)
  local t = {}
  for k, v in pairs(f) do t[k] = v end
  return t
end

local default_accumulate -- FunctionNode's own, loaded on first use (function_node requires this file)

-- Records node f, applied to inputs (Variables or tensors; in_data their
-- tensors), whose forward returned outs.  template: M.template(f) taken
-- before the forward.
function Trace:node(f, template, inputs, in_data, outs)
  if rawget(f, 'local_function_hooks') then self:refuse('a function hook on a node') end
  if rawget(f, '_function') then self:refuse('an old-style chainer.Function (' .. f:label() .. ')') end
  -- a replay runs backward / backward_tensors, never a class's own
  -- accumulation (function_node.lua), which may be all the class defines
  default_accumulate = default_accumulate or require('chainer.function_node').backward_accumulate
  if f.backward_accumulate ~= default_accumulate then
    self:refuse('a FunctionNode with its own backward_accumulate (' .. f:label() .. ')')
  end
  local ins = {}
  for i = 1, #in_data do ins[i] = self:input_slot(inputs[i], in_data[i]) end
  -- fields holding tensors the trace has slots for are re-bound on replay
  local bindings = false
  for k, v in pairs(template) do
    if is_tensor(v) then
      local s = self.slot_of_tensor[v]
      if s then
        bindings = bindings or {}
        bindings[k] = s
      end
    end
  end
  local steps = self.steps
  steps[#steps + 1] = { kind = 'node', cls = getmetatable(f), template = template, inputs = ins,
    outputs = new_outputs(self, outs, #outs), bindings = bindings }
end

-- Runs fn(...) for chainer.static_code and records the call: tensor and
-- Variable arguments by slot, anything else as a constant; tensor results
-- get slots.
function Trace:code(fn, ...)
  local n = select('#', ...)
  local argv = { ... }
  local spec = {}
  for k = 1, n do
    local a = argv[k]
    if is_tensor(a) then
      spec[k] = { slot = self:input_slot(a, a) }
    elseif type(a) == 'table' and a._is_variable then
      spec[k] = { slot = self:input_slot(a, a._data) }
    else
      spec[k] = { value = a }
    end
  end
  local res = { fn(...) }
  local nres = table.maxn(res)
  local outs = {}
  for k = 1, nres do
    local r = res[k]
    if is_tensor(r) then
      local s = self:new_slot({ kind = 'out' })
      outs[k] = s
      self.slot_of_tensor[r] = s
    elseif type(r) == 'table' and r._is_variable then
      error('static_code: the function returned a Variable (result ' .. k .. '); return tensors: ' ..
        'static code runs outside the graph', 3)
    end
  end
  local steps = self.steps
  steps[#steps + 1] = { kind = 'code', fn = fn, args = spec, nargs = n, outputs = outs, nres = nres }
  return unpack(res, 1, nres)
end

-- Called by functions whose effect a replay would miss (state updated
-- outside a node, random draws outside static_code): the decorated forward
-- then keeps running define-by-run for that input signature.
function M.refuse(reason)
  local tr = M.active
  if tr then tr:refuse(reason) end
end

return M
