-- function_node.lua: chainer.FunctionNode, Chainer's new-style function.
--
--   local Exp = chainer.FunctionNode:extend('Exp')
--   function Exp:forward(inputs)               -- tensors in, tensors out
--     self:retain_outputs({1})
--     return { T.exp(inputs[1]) }
--   end
--   function Exp:backward(indexes, grad_outputs)  -- Variables in and out
--     local y = self:get_retained_outputs()[1]
--     return { grad_outputs[1] * y }
--   end
--   local y = Exp():apply({x})[1]
--
-- Positions in Lua tables are 1-based: retain_inputs({1, 2}), the
-- target_input_indexes passed to backward, and the tables of inputs,
-- outputs and gradients.  backward is written with Variables and other
-- FunctionNodes, so it is itself differentiable (double backprop).
--
-- apply() is the hot path of the whole framework: it allocates only the
-- tables it returns or stores, takes no closures and calls no pcall; hooks,
-- type checks and debug checks cost one test each when off.
local T = require 'chainer.tensor'
local class = require 'chainer.class'
local config = require('chainer.config').config
local Variable = require 'chainer.variable'
local hookmod = require 'chainer.function_hook'
-- static_graph's recorder: trace.active is a trace while a decorated
-- forward is being recorded (graph_optimizations/trace.lua), else false
local trace = require 'chainer.graph_optimizations.trace'

local new_var, node_of, VariableNode = Variable.new_var, Variable.node_of, Variable.VariableNode
local refer, live_variable = VariableNode.refer, VariableNode.live_variable
local meta_of = VariableNode.meta_of
local global_hooks = hookmod.list
local is_tensor = T.is_tensor

local FunctionNode = class.Object:extend('FunctionNode')

-- Memory layouts (chainer.memory_layouts): `live` turns true once a
-- Variable in a non-standard layout exists; until then apply skips the
-- layout checks below with this one read.
local layout_state = { live = false }
FunctionNode._layout_state = layout_state

-- Fields every node has (stored on the instance once applied):
--   inputs   array of the input VariableNodes
--   outputs  array of the output VariableNodes (a one-output built-in node
--            is its own list: outputs == self, self[1] the node; see link)
--   rank     max rank of the inputs (outputs get rank + 1)
FunctionNode.rank = 0
FunctionNode.inputs = false
FunctionNode.outputs = false
-- (what retain_inputs/retain_outputs set; false: nothing retained)
FunctionNode._input_indexes_to_retain = false
FunctionNode._output_indexes_to_retain = false
-- Chainer's hint that every output is computed element by element from
-- inputs of one shape; when true, apply checks that the outputs share one
-- shape, as Chainer's does.
FunctionNode.is_elementwise = false
-- `stack`: in debug mode (chainer.config.debug), the traceback of where the
-- node was applied (a string, shown in its debug errors); nil otherwise.

function FunctionNode:label() return getmetatable(self).__name end

---------------------------------------------------------------------------
-- memory layouts
---------------------------------------------------------------------------
-- Once layouts are live, apply sets `input_layouts` (the inputs' layouts,
-- a table with n = #inputs, nil for the standard layout) and calls
-- check_layout_forward(inputs) before forward.  A node that accepts
-- non-standard layouts overrides check_layout_forward and may set
-- `output_layouts` there or in forward; otherwise an elementwise node's
-- outputs take its first input's layout and other outputs the standard one.
-- (Before any non-standard layout exists, both fields are nil.)
local function layout_text(ls, n)
  local parts = {}
  for i = 1, n do parts[i] = ls[i] == nil and 'None' or tostring(ls[i]) end
  return table.concat(parts, ', ')
end

-- Chainer's default: an elementwise node needs one layout for all its
-- inputs; any other node needs the standard layout.
function FunctionNode:check_layout_forward(inputs)
  local ls, n = self.input_layouts, #inputs
  if self.is_elementwise then
    for i = 2, n do
      if ls[i] ~= ls[1] then
        error(string.format('%s: inputs with mixed memory layouts were given to an elementwise function ' ..
          '(input layouts: %s)', self:label(), layout_text(ls, n)), 3)
      end
    end
  else
    for i = 1, n do
      if ls[i] ~= nil then
        error(string.format('%s: inputs with non-standard memory layouts were given to a function that does ' ..
          'not accept them (it defines no check_layout_forward; input layouts: %s)', self:label(),
          layout_text(ls, n)), 3)
      end
    end
  end
end

-- Records the inputs' layouts and runs the check (apply, layouts live).
local function layouts_before_forward(self, inputs)
  local ls = { n = #inputs }
  for i = 1, #inputs do
    local x = inputs[i]
    if type(x) == 'table' then ls[i] = rawget(x, '_layout') end
  end
  self.input_layouts = ls
  self:check_layout_forward(inputs)
end

-- Tags the output Variables with the output layouts (apply, layouts live).
local function layouts_after_forward(self, ret, nout)
  local ls = rawget(self, 'output_layouts')
  if ls == nil then
    ls = { n = nout }
    if self.is_elementwise then
      local l = self.input_layouts[1]
      for j = 1, nout do ls[j] = l end
    end
    self.output_layouts = ls
  end
  for j = 1, nout do
    if ls[j] ~= nil then rawset(ret[j], '_layout', ls[j]) end
  end
end

function FunctionNode:check_type_forward(in_types) end
local base_check_type_forward = FunctionNode.check_type_forward

-- forward(inputs) is the one forward entry apply() calls.  As in Chainer,
-- a class may define forward_cpu/forward_gpu instead; this default forward
-- then dispatches on the inputs' device (any input on a GPU: forward_gpu).
-- (Built-in one-output nodes may also define forward1/forward2 for the
-- fast forms of apply below; their forward calls them.)
function FunctionNode:forward(inputs)
  local on_gpu = false
  for i = 1, #inputs do
    if inputs[i].ptr.dev >= 0 then on_gpu = true break end
  end
  local f = on_gpu and self.forward_gpu or self.forward_cpu
  if f == nil then
    error(string.format('%s: implement forward(inputs) (or forward_cpu/forward_gpu)', self:label()), 2)
  end
  return f(self, inputs)
end

-- Default backward: no gradient for any input.
function FunctionNode:backward(target_input_indexes, grad_outputs)
  return {}
end

-- backward returns gradients for every input, or one per target index.  A
-- field `n` says which (#inputs or #targets); without it a table is read
-- the second way only when it holds an entry at a position that is not a
-- target (and nothing past the targets).  True for the second way.
-- (backprop.lua and static_graph's replay read backward's results this way.)
local function per_target(gxs, idx, nt, nin)
  local gn = gxs.n
  if gn ~= nil then return gn ~= nin and gn == nt end
  if nt == nin then return false end
  local maxn = table.maxn(gxs)
  if maxn > nt then return false end
  local is_target = {}
  for k = 1, nt do is_target[idx[k]] = true end
  for k = 1, maxn do
    if gxs[k] ~= nil and not is_target[k] then return true end
  end
  return false
end
FunctionNode._per_target = per_target

local add_variables -- basic_math.add, loaded on first use (a require cycle otherwise)

-- backward_accumulate(target_input_indexes, grad_outputs, grad_inputs):
-- the gradients of the target inputs with the ones other paths gave them
-- already added: grad_inputs[k] is what target k (input
-- target_input_indexes[k]) has received so far, nil where nothing; the
-- result has one entry per target (nil: no gradient).  This default calls
-- backward and adds, as Chainer's does.  A class may define its own to
-- fuse the sum into its gradient computation (an op that computes gx into
-- the existing sum); backprop calls it only when a class defines one, so
-- nodes that do not pay nothing.  An input given at two positions receives
-- its sum at the first of them only.  Define it on the class: a class that
-- defines it no longer runs its backward_tensors (see __subclassed below).
function FunctionNode:backward_accumulate(target_input_indexes, grad_outputs, grad_inputs)
  local gxs = self:backward(target_input_indexes, grad_outputs)
  if type(gxs) ~= 'table' then
    error(string.format('%s: backward must return a table of gradients (got %s)', self:label(), type(gxs)), 2)
  end
  local nt = #target_input_indexes
  local aligned = per_target(gxs, target_input_indexes, nt, #self.inputs)
  local out = { n = nt }
  for k = 1, nt do
    local gx = gxs[aligned and k or target_input_indexes[k]]
    local gin = grad_inputs[k]
    if gin == nil then
      out[k] = gx
    elseif gx == nil then
      out[k] = gin
    else
      add_variables = add_variables or require('chainer.functions.math.basic_math').add
      out[k] = add_variables(gx, gin)
    end
  end
  return out
end
local default_backward_accumulate = FunctionNode.backward_accumulate

-- Keeps backprop's per-node cost where it was: a class that defines
-- backward_accumulate, or a subclass of one, takes backprop's Variable
-- path (which checks for the override) even when it inherits a
-- backward_tensors, because that fast path does not look for the override.
-- extend calls this for every new subclass; it watches what the class
-- defines afterwards.
function FunctionNode.__subclassed(parent, cls)
  local mt = getmetatable(cls)
  local define = mt.__newindex
  mt.__newindex = function(c, k, v)
    define(c, k, v)
    if (k == 'backward_accumulate' or k == 'backward_tensors') and c.backward_tensors
        and c.backward_accumulate ~= default_backward_accumulate then
      rawset(c, 'backward_tensors', false)
    end
  end
end

-- An op may also define the same gradients on tensors, for speed:
--
--   function Op:backward_tensors(target_input_indexes, grad_outputs, grad_inputs, own)
--
-- backprop.lua alone decides when to call it instead of backward: when
-- nothing could tell the difference (no graph is recorded for double
-- backprop, no function hook, no debug mode, no gradient retained on a
-- Variable).  Op files never test those conditions themselves.
--   grad_outputs[j]  the gradient tensor of output j (nil where none).
--   grad_inputs      in and out, in the shape of Chainer's
--     backward_accumulate: on entry grad_inputs[i] holds, for a target input
--     i, the gradient summed so far for it when the traversal alone holds
--     that tensor, else nil.  The op either adds its gradient into that
--     tensor in place and leaves it there (a gemm with beta = 1, a
--     scatter-add), or stores its gradient for input i in grad_inputs[i]
--     (nil: none), which the traversal then adds up.
--   own  true when the grad_outputs tensors are the traversal's alone: the
--     op may write a result into them (x * y computes gy * y into gy).
-- A result is a new tensor, a grad output passed on as it is, or the
-- grad_inputs[i] it added into; never a view of another tensor or one the
-- node keeps, since the traversal may add into it in place later.  Neither
-- table may be kept after the call.

-- Called inside forward: which inputs/outputs backward will need.
function FunctionNode:retain_inputs(indexes)
  if type(indexes) ~= 'table' then
    error('retain_inputs: expected a table of 1-based input positions, e.g. {1, 2}', 2)
  end
  self._input_indexes_to_retain = indexes
end

function FunctionNode:retain_outputs(indexes)
  if type(indexes) ~= 'table' then
    error('retain_outputs: expected a table of 1-based output positions, e.g. {1}', 2)
  end
  self._output_indexes_to_retain = indexes
end

-- The retained inputs as Variables (connected to the graph).
function FunctionNode:get_retained_inputs()
  local idx = self._input_indexes_to_retain
  local ins = self.inputs
  if not idx or not ins then
    error(string.format('%s: get_retained_inputs: no inputs were retained (call retain_inputs in forward)',
      self:label()), 2)
  end
  local out = {}
  for k = 1, #idx do out[k] = ins[idx[k]]:get_variable() end
  return out
end

-- The retained outputs as Variables (connected to the graph).
function FunctionNode:get_retained_outputs()
  local idx = self._output_indexes_to_retain
  local outs = self.outputs
  local data = self._retained_output_data
  if not idx or not outs or not data then
    error(string.format('%s: get_retained_outputs: no outputs were retained (call retain_outputs in forward)',
      self:label()), 2)
  end
  local ret = {}
  for k = 1, #idx do
    local node = outs[idx[k]]
    local v = live_variable(node)
    if not v then
      v = new_var(data[k], node.requires_grad)
      v._node = node
      refer(node, v)
    end
    ret[k] = v
  end
  return ret
end

-- output_data(): the retained output tensors by output position (nil at the
-- positions not retained), as Chainer's output_data property; an error when
-- no output was retained.  get_retained_outputs gives them as Variables.
function FunctionNode:output_data()
  local data = rawget(self, '_retained_output_data')
  local outs = self.outputs
  if not data or not outs then
    error(string.format('%s: output_data: retained output data is gone (call retain_outputs in forward)',
      self:label()), 2)
  end
  local idx = self._output_indexes_to_retain
  local out = {}
  for k = 1, #idx do out[idx[k]] = data[k] end
  return out
end

-- Removes this node from the graph: its outputs forget their creator.
function FunctionNode:unchain()
  local outs = self.outputs
  if outs then
    for i = 1, #outs do
      local o = outs[i]
      if o.creator == self then o.creator = false o.rank = 0 end
    end
  end
  self.inputs = false
end

-- Local hooks: an ordered table { names = {...}, [name] = hook }.
function FunctionNode:add_hook(hook, name)
  name = name or hookmod.name_of(hook)
  local lh = rawget(self, 'local_function_hooks')
  if not lh then
    lh = { names = {} }
    self.local_function_hooks = lh
  end
  if lh[name] then
    error(string.format("%s: add_hook: a hook named '%s' is already registered", self:label(), name), 2)
  end
  lh[name] = hook
  lh.names[#lh.names + 1] = name
  hook:added(self)
end

function FunctionNode:delete_hook(name)
  local lh = rawget(self, 'local_function_hooks')
  if not lh or not lh[name] then
    error(string.format("%s: delete_hook: no hook named '%s'", self:label(), tostring(name)), 2)
  end
  local hook = lh[name]
  lh[name] = nil
  for i = #lh.names, 1, -1 do
    if lh.names[i] == name then table.remove(lh.names, i) end
  end
  hook:deleted(self)
end

-- Global hooks then local ones, as Chainer orders them.
local function hooks_of(f)
  local out = {}
  for i = 1, #global_hooks do out[#out + 1] = global_hooks[i] end
  local lh = rawget(f, 'local_function_hooks')
  if lh then
    for i = 1, #lh.names do out[#out + 1] = lh[lh.names[i]] end
  end
  return out
end
FunctionNode._hooks_of = hooks_of

---------------------------------------------------------------------------
-- debug mode
---------------------------------------------------------------------------
local function has_nan(t)
  if not T.is_float_code[t.ptr.dt] or t.ptr.numel == 0 then return false end  -- not a float tensor
  local m = T.isnan(t)
  local a = T.any(m)
  if type(a) == 'boolean' then return a end
  return a:item() == true or a:item() == 1
end
FunctionNode._has_nan = has_nan

local function creation_stack(f)
  local s = rawget(f, 'stack')
  if s then return '\nStack trace of the function (where it was created):\n' .. s end
  return ''
end
FunctionNode._creation_stack = creation_stack

---------------------------------------------------------------------------
-- type checking
---------------------------------------------------------------------------
local type_check -- loaded on first use

local function run_type_check(f, in_data)
  type_check = type_check or require 'chainer.utils.type_check'
  local in_types = type_check.get_types(in_data, 'in_types')
  local ok, err = pcall(f.check_type_forward, f, in_types)
  if not ok then
    if type(err) == 'table' and err.invalid_type then
      error(type_check.format_error(err, f:label(), 'Forward'), 0)
    end
    error(err, 0)
  end
end

---------------------------------------------------------------------------
-- graph construction: the one place a node is linked into the graph, used
-- by apply and by its one- and two-input forms below
---------------------------------------------------------------------------
-- The VariableNode an input enters the graph as: a Variable's own node, or
-- a new constant node for a plain tensor.
local function input_node(x)
  if type(x) == 'table' then
    local node = x._node
    if not node then node = node_of(x) end
    return node
  end
  local node = node_of(new_var(x, false))
  node.data = x
  return node
end

-- A new output Variable of self for tensor y, with its node at rank orank.
-- Eight fields (see variable.lua): requires_grad is the class's true; [1]
-- is the slot of v in its weak page, set by refer.
local function output_variable(self, y, orank)
  local v = new_var(y, true)
  local node = setmetatable({ 0,
    creator = self, rank = orank, data = false, _vref = false,
    _meta = meta_of(y.ptr), _grad = false, _gown = false, _bp = 0,
  }, VariableNode)
  refer(node, v)
  v._node = node
  return v
end

-- retain_inputs: the retained input nodes keep their tensors.  in_data is
-- the table of input tensors (apply), or nil with d1, d2 the tensors of a
-- one- or two-input form.
local function retain_input_data(self, in_nodes, ri, in_data, d1, d2)
  for k = 1, #ri do
    local i = ri[k]
    local node = in_nodes[i]
    if node == nil then
      error(string.format('%s: retain_inputs: input %s does not exist (the function has %d inputs)',
        self:label(), tostring(i), #in_nodes), 4)
    end
    if in_data then node.data = in_data[i] elseif i == 1 then node.data = d1 else node.data = d2 end
  end
end

-- The same for the one- and two-input forms, without a loop in the common
-- cases ({1}, {2}, {1, 2}): a loop here would stop LuaJIT from compiling a
-- loop of operators into one trace.
local function retain_form_data(self, in_nodes, ri, d1, d2)
  local r1, r2 = ri[1], ri[2]
  local n2 = in_nodes[2]
  if ri[3] == nil and (r1 == 1 or (r1 == 2 and n2)) and (r2 == nil or r2 == 1 or (r2 == 2 and n2)) then
    if r1 == 1 or r2 == 1 then in_nodes[1].data = d1 end
    if r1 == 2 or r2 == 2 then n2.data = d2 end
  else
    retain_input_data(self, in_nodes, ri, nil, d1, d2)   -- (raises for a missing input)
  end
end

-- retain_outputs: the node keeps the retained output tensors.
local function retain_output_data(self, outs, nout, ro)
  local rd = {}
  for k = 1, #ro do
    local j = ro[k]
    local y
    if nout == nil then y = j == 1 and outs or nil else y = outs[j] end
    if y == nil then
      error(string.format('%s: retain_outputs: output %s does not exist (the function has %d outputs)',
        self:label(), tostring(j), nout or 1), 4)
    end
    rd[k] = y
  end
  self._retained_output_data = rd
end

-- Links self into the graph below in_nodes (its input VariableNodes, kept
-- as self.inputs; rank is their largest rank): one output node per output
-- tensor, and the data retain_inputs/retain_outputs asked for.  outs is the
-- table forward returned, with nout entries (the output Variables come back
-- as a table), or, from the one-output forms, the output tensor itself with
-- nout == nil (its Variable comes back).
local function link(self, in_nodes, rank, outs, nout, in_data, d1, d2)
  self.rank = rank
  self.inputs = in_nodes
  local orank = rank + 1
  local ret
  if nout == nil then
    -- One output, from apply1/apply2 (built-in nodes only): the node's own
    -- array part is its outputs list, f.outputs == f with f[1] the output
    -- node (#f.outputs, f.outputs[1] and ipairs read it as a list), which
    -- saves a table per node.  The built-ins' constructors reserve [1].
    ret = output_variable(self, outs, orank)
    self[1] = ret._node
    self.outputs = self
  else
    ret = {}
    local out_nodes = {}
    for j = 1, nout do
      local v = output_variable(self, outs[j], orank)
      ret[j] = v
      out_nodes[j] = v._node
    end
    self.outputs = out_nodes
  end
  local ri = self._input_indexes_to_retain
  if ri then
    if in_data then retain_input_data(self, in_nodes, ri, in_data) else retain_form_data(self, in_nodes, ri, d1, d2) end
  end
  local ro = self._output_indexes_to_retain
  if ro then retain_output_data(self, outs, nout, ro) end
  return ret
end

-- Whether applying a node to inputs with this requires_grad would leave
-- any trace: a graph to record, a function hook to call, a debug check to
-- run.  When it would not, a built-in may compute its output tensor
-- directly and wrap it in a Variable, skipping the node altogether (the
-- arithmetic operators of functions/math/basic_math.lua do).
function FunctionNode.can_skip_node(requires_grad)
  return (not requires_grad or not config.enable_backprop) and global_hooks[1] == nil and not config.debug
    and not trace.active and not layout_state.live
end

---------------------------------------------------------------------------
-- apply
---------------------------------------------------------------------------
local function bad_input(f, i, x)
  local what = type(x)
  if what == 'table' and x._is_variable then what = 'a Variable without data (an uninitialised Parameter)' end
  error(string.format('%s: input %d must be a Variable or a tensor (got %s)', f:label(), i, what), 3)
end

local function bad_output(f, outs)
  if type(outs) ~= 'table' then
    error(string.format('%s: forward must return a table of tensors (got %s)', f:label(), type(outs)), 3)
  end
  for j = 1, #outs do
    if not is_tensor(outs[j]) then
      error(string.format('%s: forward output %d is not a tensor (got %s)', f:label(), j, type(outs[j])), 3)
    end
  end
end

local function check_elementwise_outputs(f, outs)
  local s1 = outs[1].shape
  for j = 2, #outs do
    local sj = outs[j].shape
    local same = #sj == #s1
    for d = 1, #s1 do if sj[d] ~= s1[d] then same = false end end
    if not same then
      local shapes = {}
      for k = 1, #outs do shapes[k] = T.shape_str(outs[k].shape) end
      error(string.format('%s: an elementwise function returned outputs with different shapes (%s)',
        f:label(), table.concat(shapes, ', ')), 3)
    end
  end
end

-- Applies the function to a table of Variables/tensors; returns a table of
-- output Variables.
function FunctionNode:apply(inputs)
  if self.inputs then
    error(string.format('%s: this FunctionNode has already been applied; create a new instance for every call',
      self:label()), 2)
  end
  local n = #inputs
  local in_data = {}
  local requires_grad = false
  for i = 1, n do
    local x = inputs[i]
    if type(x) == 'table' then
      local d = x._data
      if d == nil then bad_input(self, i, x) end
      in_data[i] = d
      if x._requires_grad then requires_grad = true end
    elseif is_tensor(x) then
      in_data[i] = x
    else
      bad_input(self, i, x)
    end
  end

  if layout_state.live then layouts_before_forward(self, inputs) end

  if config.type_check and self.check_type_forward ~= base_check_type_forward then
    run_type_check(self, in_data)
  end

  local hooked = global_hooks[1] ~= nil or rawget(self, 'local_function_hooks') ~= nil
  local hooks
  if hooked then
    hooks = hooks_of(self)
    for i = 1, #hooks do hooks[i]:forward_preprocess(self, in_data) end
  end

  local tracer = trace.active
  local template = tracer and trace.template(self)

  local outs = self:forward(in_data)

  if hooked then
    for i = 1, #hooks do hooks[i]:forward_postprocess(self, in_data) end
  end
  if type(outs) ~= 'table' or (outs[1] ~= nil and not is_tensor(outs[1])) then bad_output(self, outs) end
  local nout = #outs
  if nout > 1 and self.is_elementwise then check_elementwise_outputs(self, outs) end
  if tracer then tracer:node(self, template, inputs, in_data, outs) end

  if config.debug then
    for j = 1, nout do
      if not is_tensor(outs[j]) then bad_output(self, outs) end
      if has_nan(outs[j]) then
        error(string.format('NaN is detected on forward computation of %s (output %d)', self:label(), j), 2)
      end
    end
  end

  if not (requires_grad and config.enable_backprop) then
    local ret = {}
    for j = 1, nout do ret[j] = new_var(outs[j], requires_grad) end
    if layout_state.live then layouts_after_forward(self, ret, nout) end
    return ret
  end
  local in_nodes, rank = {}, 0
  for i = 1, n do
    local node = input_node(inputs[i])
    in_nodes[i] = node
    if node.rank > rank then rank = node.rank end
  end
  local ret = link(self, in_nodes, rank, outs, nout, in_data)
  if layout_state.live then layouts_after_forward(self, ret, nout) end
  if config.debug then self.stack = debug.traceback('', 2) end
  return ret
end

---------------------------------------------------------------------------
-- the one- and two-input forms of apply
---------------------------------------------------------------------------
-- Built-in one-output nodes may define forward1(x) / forward2(a, b), which
-- return the output tensor (and a forward(inputs) calling them).  Their
-- wrappers call apply1/apply2 once they know a graph is to be recorded
-- (FunctionNode.can_skip_node is false) and have checked the operands: the
-- same node as apply() builds (link), without the tables apply needs for
-- any number of inputs and outputs.  Whatever else apply does (hooks,
-- debug checks, static_graph's recording, memory layouts) sends them to apply() itself.  (Their classes define no
-- type check, and a new node has no local hook.)
-- x is a Variable (with data) or a tensor; d is its tensor.
function FunctionNode:apply1(x, d)
  if global_hooks[1] ~= nil or config.debug or trace.active or layout_state.live then return self:apply({ x })[1] end
  local y = self:forward1(d)
  local n1 = input_node(x)
  local v = link(self, { n1 }, n1.rank, y, nil, nil, d)
  return v
end

-- a, b are Variables or tensors; da, db their tensors.
function FunctionNode:apply2(a, b, da, db)
  if global_hooks[1] ~= nil or config.debug or trace.active or layout_state.live then return self:apply({ a, b })[1] end
  local y = self:forward2(da, db)
  local n1, n2 = input_node(a), input_node(b)
  local rank = n1.rank
  if n2.rank > rank then rank = n2.rank end
  local v = link(self, { n1, n2 }, rank, y, nil, nil, da, db)
  return v
end

FunctionNode.__tostring = function(f) return 'FunctionNode(' .. f:label() .. ')' end

return FunctionNode
