-- variable.lua: chainer.Variable and chainer.variable.VariableNode.
--
-- A Variable is a Lua table holding a tensor (`array`, alias `data`) and,
-- once it takes part in a graph, a VariableNode.  The node is what the graph
-- keeps: FunctionNodes point at the nodes of their inputs and outputs, and a
-- node points at its Variable only weakly, so the data of a Variable nobody
-- holds any more is freed even while the graph lives (unless a function
-- retained it for backward, which stores it in `node.data`).
--
-- Raw fields (read directly by the autograd hot paths):
--   _data           the tensor (nil for an uninitialised Parameter)
--   _node           the VariableNode, or false until one is needed
--   _grad_var       the gradient Variable, or false
--   _requires_grad  boolean
--   name            string or nil
-- Everything else users see (grad, shape, creator, ...) is a computed
-- property served by __index/__newindex.
local T = require 'chainer.tensor'
local class = require 'chainer.class'
local cfgmod = require 'chainer.config'
local args = require 'chainer._args'
local config = cfgmod.config

local ffi = T.ffi
local is_tensor = T.is_tensor
local shape_str = T.shape_str

---------------------------------------------------------------------------
-- Weak references from nodes to their Variables
---------------------------------------------------------------------------
-- The graph must not keep a Variable (and its data) alive, so a node reaches
-- its Variable through a weak table.  A weak table per node would be one more
-- object per graph node to allocate, mark, re-traverse in the collector's
-- atomic phase and free; instead consecutive nodes share a page: a
-- weak-valued array of PAGE_SLOTS Variables.  A node keeps its page in _vref
-- (false: none yet) and its slot in its array part, node[VSLOT] (a ninth
-- hash field would double the node's hash part, see VariableNode).  Only
-- nodes hold a page (and this module the page being filled), so a page goes
-- when all its nodes have gone; a slot empties when its Variable is
-- collected, independently of the page's other slots.  (A page keyed by the
-- nodes themselves, weak keys and values, saved nothing: its hash inserts
-- and lookups cost what the per-node tables did.)
local PAGE_SLOTS = 64
local VSLOT = 1
local WEAK_PAGE = { __mode = 'v' }
local tab_new = require 'table.new'
local page, page_used = false, PAGE_SLOTS

-- Makes v the Variable that node refers to (weakly).
local function refer(node, v)
  local p = node._vref
  if p then
    p[node[VSLOT]] = v
    return
  end
  if page_used == PAGE_SLOTS then
    page = setmetatable(tab_new(PAGE_SLOTS, 0), WEAK_PAGE)
    page_used = 0
  end
  local slot = page_used + 1
  page_used = slot
  page[slot] = v
  node[VSLOT] = slot
  node._vref = page
end

-- The Variable node refers to, or nil when it has been collected.
local function live_variable(node)
  local p = node._vref
  return p and p[node[VSLOT]] or nil
end

---------------------------------------------------------------------------
-- VariableNode
---------------------------------------------------------------------------
local VariableNode = class.Object:extend('VariableNode')

-- Nodes are made by the autograd (node_of); users see them as x.node.
-- Fields: creator (FunctionNode or false), rank, requires_grad, data (the
-- retained tensor or false), name, and _meta: the dtype, rank, size and
-- device of the data at creation packed into one number (meta_of), used to
-- check gradients after the data itself is gone; _vref and node[1] (the
-- weak page and slot of its Variable, above).
-- The autograd makes one node per function output, so their tables are
-- kept to eight fields (LuaJIT sizes a table's hash part to a power of two:
-- nine fields would double it): requires_grad, true for every output, is
-- a class default there and stored only on the nodes of leaves.
VariableNode.requires_grad = true

-- meta = ((numel * 32 + ndim) * 16 + dtype) * 32 + device + 1: exact in a
-- double for tensors of fewer than 2^39 elements.
local function meta_of(p)
  return ((tonumber(p.numel) * 32 + p.nd) * 16 + p.dt) * 32 + p.dev + 1
end
local function unpack_meta(m)
  local dev = m % 32 - 1
  m = (m - dev - 1) / 32
  local dt = m % 16
  m = (m - dt) / 16
  local nd = m % 32
  return dt, nd, (m - nd) / 32, dev
end
VariableNode.meta_of, VariableNode.unpack_meta = meta_of, unpack_meta

local function new_node(var, data, requires_grad)
  local node = setmetatable({ 0,   -- [VSLOT], set by refer
    creator = false, rank = 0, requires_grad = requires_grad,
    data = false, name = var and var.name or nil,
    _vref = false, _meta = meta_of(data.ptr), _grad = false, _gown = false, _bp = 0,
  }, VariableNode)
  if var then refer(node, var) end
  return node
end
VariableNode.refer, VariableNode.live_variable = refer, live_variable

-- The Variable of this node, or nil when it has been collected.
VariableNode.get_variable_or_none = live_variable

local Variable -- forward declaration

-- The Variable of this node; when it has been collected, a new Variable is
-- made from the retained data (it shares this node, so gradients still flow).
function VariableNode:get_variable()
  local v = live_variable(self)
  if v then return v end
  local d = self.data
  if not d then
    error(string.format("VariableNode.get_variable: the variable of node %s is gone and its data was not " ..
      "retained (call retain_inputs/retain_outputs in forward to keep it)", self:label()), 2)
  end
  v = setmetatable({ _data = d, _node = self, _grad_var = false, _requires_grad = self.requires_grad,
    name = self.name }, Variable)
  refer(self, v)
  return v
end

-- The tensor behind this node: the retained data or the live Variable's.
local function node_tensor(node)
  local d = node.data
  if d then return d end
  local v = live_variable(node)
  return v and v._data or nil
end
VariableNode.tensor = node_tensor

function VariableNode:retain_data()
  local v = live_variable(self)
  if not v then error('VariableNode.retain_data: the variable is gone', 2) end
  self.data = v._data
end

function VariableNode:set_creator(f)
  self.creator = f or false
  self.rank = f and f.rank + 1 or 0
end
VariableNode.set_creator_node = VariableNode.set_creator

function VariableNode:unchain()
  self.creator = false
  self.rank = 0
end

-- Shape of the data (nil when neither the data nor the Variable remains).
function VariableNode:shape()
  local d = node_tensor(self)
  return d and d.shape or nil
end

function VariableNode:dtype() return T.dtype_names[(unpack_meta(self._meta))] end

-- Chainer's label: "(2, 3), float32"; a 0-d node shows only the dtype.  A
-- 1-d node is "(3), float32": Chainer joins the dims itself rather than
-- printing the Python tuple "(3,)", and the DOT graph uses this label.
local function label_of(shape, dtype)
  if shape == nil then return dtype end
  if #shape == 0 then return dtype end
  local parts = {}
  for i = 1, #shape do parts[i] = tostring(shape[i]) end
  return '(' .. table.concat(parts, ', ') .. '), ' .. dtype
end

function VariableNode:label()
  return label_of(self:shape(), self:dtype())
end

VariableNode.__tostring = function(n)
  return 'VariableNode(' .. n:label() .. (n.name and (', name=' .. n.name) or '') .. ')'
end

---------------------------------------------------------------------------
-- Variable
---------------------------------------------------------------------------
Variable = class.Object:extend('Variable')
class.check_self(Variable)   -- model.cleargrads() (a dot) names the method
Variable._is_variable = true

local props, setters = {}, {}
Variable.__props, Variable.__setters = props, setters

-- v[i] is an error, as t[i] is for tensors: Python's v[i] is F.get_item,
-- and a silent nil would hide the mistake.
local index_error = 'Variable: v[%s] is not supported; index a Variable with F.get_item(v, slices) ' ..
  '(0-based, differentiable) or read its values with v.array:get(i, ...)'

Variable.__index = function(self, k)
  local m = getmetatable(self)[k]
  if m ~= nil then return m end
  local p = props[k]
  if p ~= nil then return p(self) end
  if type(k) == 'number' then error(string.format(index_error, tostring(k)), 2) end
  return nil
end

Variable.__newindex = function(self, k, v)
  local s = setters[k]
  if s ~= nil then s(self, v) else rawset(self, k, v) end
end

-- The fast constructor used by every function: no checks.
-- (No tail calls on the operator paths: LuaJIT counts them against the
-- loop-unroll limit of a trace, and a loop of a few operators then never
-- compiles.)
local function new_var(data, requires_grad)
  local v = setmetatable({ _data = data, _node = false, _grad_var = false, _requires_grad = requires_grad }, Variable)
  return v
end

-- The node of v, made on first use.
local function node_of(v)
  local n = v._node
  if n then return n end
  local d = v._data
  if d == nil then
    error('Variable: this variable has no data yet (an uninitialised Parameter); initialise it first', 3)
  end
  n = new_node(v, d, v._requires_grad)
  v._node = n
  return n
end

local function is_variable(v) return type(v) == 'table' and v._is_variable == true end

local function to_tensor(data, fn)
  if is_tensor(data) then return data end
  if type(data) == 'table' and not data._is_variable then return T.array(data) end
  error(string.format('%s: data must be a tensor or a nested Lua table of numbers (got %s)', fn,
    is_variable(data) and 'a Variable' or type(data)), 3)
end

-- Variable(data, {name =, requires_grad =, grad =, layout =}) or
-- Variable(data, name).  With a layout (chainer.memory_layouts), data is
-- the array as stored in that layout.
function Variable:init(data, opts)
  local name, rg, grad, layout
  if type(opts) == 'string' then name = opts
  elseif type(opts) == 'table' then
    name, grad, layout = opts.name, opts.grad, opts.layout
    if opts.requires_grad ~= nil then rg = opts.requires_grad end
  elseif opts ~= nil then
    error('Variable: the second argument must be an options table or a name (got ' .. type(opts) .. ')', 3)
  end
  if data ~= nil then data = to_tensor(data, 'Variable') end
  rawset(self, '_data', data)
  rawset(self, '_node', false)
  rawset(self, '_grad_var', false)
  rawset(self, '_requires_grad', rg ~= false)
  if name ~= nil then rawset(self, 'name', name) end
  if layout ~= nil then
    local layouts = require 'chainer.memory_layouts'
    layouts.check_layout('Variable', layout, 3)
    if data ~= nil then layouts.transpose_axes(data.ptr.nd, nil, layout, 'Variable') end
    layouts.set_layout(self, layout)
  end
  if grad ~= nil then self.grad = grad end
end

---------------------------------------------------------------------------
-- properties
---------------------------------------------------------------------------
-- A Variable in a non-standard memory layout (`layout`, stored as _layout
-- only when not nil) hides its array, as Chainer's does: its shape is not the
-- array's.  raw_array gives the array as stored.
local function layout_array_error(v, what)
  error(string.format('Variable.%s: cannot directly access the array of a variable with the non-standard ' ..
    'layout %s; read x.raw_array (the array as stored) or x:as_layout(nil).array', what, tostring(v.layout)), 3)
end
function props.array(v)
  if rawget(v, '_layout') ~= nil then layout_array_error(v, 'array') end
  return v._data
end
function props.data(v)
  if rawget(v, '_layout') ~= nil then layout_array_error(v, 'data') end
  return v._data
end
function props.raw_array(v) return v._data end
function props.layout(v) return rawget(v, '_layout') end
function setters.layout()
  error('Variable.layout is read-only; x:as_layout(layout) gives the variable in another layout', 3)
end

local function check_same_meta(v, g, what)
  local d = v._data
  if d == nil then return end
  local pd, pg = d.ptr, g.ptr
  if pd.dt ~= pg.dt then
    error(string.format('Variable.%s: dtype %s does not match the data dtype %s', what,
      T.dtype_names[pg.dt], T.dtype_names[pd.dt]), 4)
  end
  local same = pd.nd == pg.nd
  if same then
    for i = 0, pd.nd - 1 do if pd.dim[i] ~= pg.dim[i] then same = false break end end
  end
  if not same then
    error(string.format('Variable.%s: shape %s does not match the data shape %s', what,
      shape_str(g.shape), shape_str(d.shape)), 4)
  end
  if pd.dev ~= pg.dev then
    error(string.format('Variable.%s: the gradient is on %s but the data is on %s', what,
      T.device_name(pg.dev), T.device_name(pd.dev)), 4)
  end
end

-- A parameter's gradient slot (_grad_bucket.lua) fits the array it was
-- made for: a new array of another shape, dtype or device drops it.
local function drop_unfitting_slot(v, d)
  local slot = rawget(v, '_grad_slot')
  if slot == nil then return end
  local ps = slot.ptr
  local same = d ~= nil and d.ptr.dt == ps.dt and d.ptr.dev == ps.dev and d.ptr.nd == ps.nd
  if same then
    for i = 0, ps.nd - 1 do if d.ptr.dim[i] ~= ps.dim[i] then same = false break end end
  end
  if not same then rawset(v, '_grad_slot', nil) end
end

function setters.array(v, d)
  if rawget(v, '_layout') ~= nil then layout_array_error(v, 'array') end
  if d ~= nil then d = to_tensor(d, 'Variable.array') end
  drop_unfitting_slot(v, d)
  rawset(v, '_data', d)
  local n = v._node
  if n and d then
    local p = d.ptr
    n._meta = meta_of(p)
    if n.data then n.data = d end
  end
end
setters.data = setters.array

function props.grad(v)
  local g = v._grad_var
  return g and g._data or nil
end
function setters.grad(v, g)
  if g == nil or g == false then v._grad_var = false return end
  if is_variable(g) then g = g._data end
  if not is_tensor(g) then
    error('Variable.grad: expected a tensor or nil (got ' .. type(g) .. ')', 3)
  end
  check_same_meta(v, g, 'grad')
  v._grad_var = new_var(g, true)
end

function props.grad_var(v) return v._grad_var or nil end
function setters.grad_var(v, g)
  if g == nil or g == false then v._grad_var = false return end
  if not is_variable(g) then
    error('Variable.grad_var: expected a Variable or nil (got ' .. type(g) .. ')', 3)
  end
  if g._data then check_same_meta(v, g._data, 'grad_var') end
  v._grad_var = g
end

-- The semantic shape: for a non-standard layout, not the array's.
function props.shape(v)
  local d = v._data
  if d == nil then return nil end
  local l = rawget(v, '_layout')
  if l ~= nil then return require('chainer.memory_layouts').semantic_shape_of(d.shape, l) end
  return d.shape
end
function props.ndim(v) local d = v._data return d and d.ptr.nd or nil end
function props.size(v) local d = v._data return d and tonumber(d.ptr.numel) or nil end
function props.dtype(v) local d = v._data return d and T.dtype_names[d.ptr.dt] or nil end
function props.device(v) local d = v._data return d and T.device_name(d.ptr.dev) or nil end
function props.xp() return T end
function props.node(v) return node_of(v) end
function props.requires_grad(v) return v._requires_grad end
function setters.requires_grad(v, rg)
  rg = rg and true or false
  rawset(v, '_requires_grad', rg)
  local n = v._node
  if n then n.requires_grad = rg end
end
function props.creator_node(v)
  local n = v._node
  return n and n.creator or nil
end
function setters.creator_node(v, f) node_of(v):set_creator(f) end
-- Chainer's `creator` is the old-style Function when there is one.
function props.creator(v)
  local n = v._node
  local f = n and n.creator
  if not f then return nil end
  return f._function or f
end
function setters.creator(v, f)
  if type(f) == 'table' and f._function == nil and rawget(f, 'node') then f = f.node end  -- old-style Function
  node_of(v):set_creator(f)
end
function props.rank(v)
  local n = v._node
  return n and n.rank or 0
end
function props.label(v)
  local d = v._data
  if d == nil then return 'None' end
  return label_of(d.shape, T.dtype_names[d.ptr.dt])
end
function props.T(v) return v:transpose() end
function props.is_initialized(v) return v._data ~= nil end

---------------------------------------------------------------------------
-- methods
---------------------------------------------------------------------------
function Variable:cleargrad() self._grad_var = false end

-- Sets the gradient to zeros of the data's shape (a new tensor: gradients
-- are never modified in place by the framework, so they may be shared).
function Variable:zerograd()
  local d = self._data
  if d == nil then
    rawset(self, '_zeroed', true)
    return
  end
  self._grad_var = new_var(T.zeros_like(d), true)
end

-- self.grad += var.grad (across devices); a missing grad counts as zeros.
function Variable:addgrad(var)
  if not is_variable(var) then error('Variable.addgrad: expected a Variable (got ' .. type(var) .. ')', 2) end
  local src = var._grad_var
  if not src then return end
  local d = self._data
  if d == nil then
    if self.initialize then self:initialize(var._data.shape) d = self._data
    else error('Variable.addgrad: this variable has no data', 2) end
  end
  local g = src._data
  if g.ptr.dev ~= d.ptr.dev then g = g:to_device(d.ptr.dev) end
  local mine = self._grad_var
  if mine then
    self._grad_var = new_var(T.add(mine._data, g), true)
  else
    self._grad_var = new_var(g:copy(), true)
  end
end

-- Copies the values of var's data into this variable's data (in place).
function Variable:copydata(var)
  local src = is_variable(var) and var._data or var
  if not is_tensor(src) then error('Variable.copydata: expected a Variable or a tensor', 2) end
  local d = self._data
  if d == nil then
    if self.initialize then self:initialize(src.shape) d = self._data
    else error('Variable.copydata: this variable has no data', 2) end
  end
  if src.ptr.dev ~= d.ptr.dev then src = src:to_device(d.ptr.dev) end
  d:copy_(src)
end

-- Forgets the creator: the variable becomes a root of the graph.
function Variable:unchain()
  local n = self._node
  if n then n.creator = false n.rank = 0 end
end

-- Deletes every reference backward from this variable (truncated BPTT);
-- iterative, so graphs of any depth are fine.
function Variable:unchain_backward()
  local n = self._node
  local f = n and n.creator
  if not f then return end
  local stack, seen, top = { f }, { [f] = true }, 1
  while top > 0 do
    local fn = stack[top]
    stack[top] = nil
    top = top - 1
    local ins = fn.inputs
    if ins then
      for i = 1, #ins do
        local c = ins[i].creator
        if c and not seen[c] then
          seen[c] = true
          top = top + 1
          stack[top] = c
        end
      end
    end
    fn:unchain()
  end
end

function Variable:set_creator(f) self.creator = f end
function Variable:set_creator_node(f) node_of(self):set_creator(f) end

function Variable:to_device(device)
  local d = self._data
  if d ~= nil then
    rawset(self, '_data', d:to_device(device))
    drop_unfitting_slot(self, self._data)
    local n = self._node
    if n then n._meta = meta_of(self._data.ptr) end
  end
  local g = self._grad_var
  if g then self._grad_var = new_var(g._data:to_device(device), true) end
  return self
end
function Variable:to_cpu() return self:to_device(-1) end
function Variable:to_gpu(device) return self:to_device(device or 0) end

function Variable:item()
  local d = self._data
  if d == nil then error('Variable.item: this variable has no data', 2) end
  return d:item()
end

-- Length of the first axis (Python's len(variable)).
function Variable:len()
  local d = self._data
  if d == nil or d.ptr.nd == 0 then error('Variable.len: a 0-d variable has no length', 2) end
  return tonumber(d.ptr.dim[0])
end

-- shape manipulation and products (FunctionNodes, so differentiable)
function Variable:reshape(shape, ...)
  return require('chainer.functions.array.reshape').reshape(self, shape, ...)
end
function Variable:transpose(axes, ...)
  return require('chainer.functions.array.transpose').transpose(self, axes, ...)
end
-- x:as_layout(layout): x in another memory layout (chainer.memory_layouts),
-- through a differentiable AsLayout node; x itself when it has the layout.
function Variable:as_layout(layout)
  return require('chainer.memory_layouts').as_layout(self, layout)
end

-- retain_data(): the node keeps this variable's data, so that the graph can
-- still give it (node.data, get_variable) after the Variable is gone.
function Variable:retain_data()
  node_of(self).data = self._data
end

-- x:mean(axis, {weights =, keepdims =}) or x:mean{axis =, weights =,
-- keepdims =}: Chainer's Variable.mean, the weighted average F.average.
local MEAN_OPTIONS = args.accept { 'weights', 'keepdims' }
function Variable:mean(axis, opts)
  local average = require('chainer.functions.math.average').mean
  if type(axis) == 'table' and axis[1] == nil and not axis._is_variable then
    if opts ~= nil then error('Variable.mean: give the options once, as mean{axis =, ...} or mean(axis, {...})', 2) end
    return average(self, axis)
  end
  opts = args.options('Variable.mean', opts, MEAN_OPTIONS)
  return average(self, { axis = axis, weights = opts.weights, keepdims = opts.keepdims })
end
function Variable:matmul(other, opts)
  return require('chainer.functions.math.matmul').matmul(self, other, opts)
end

-- comparisons give bool tensors (they are not differentiable)
local function cmp_operand(x)
  if type(x) == 'table' and x._is_variable then return x._data end
  return x
end
function Variable:eq(o) return T.eq(self._data, cmp_operand(o)) end
function Variable:ne(o) return T.ne(self._data, cmp_operand(o)) end
function Variable:lt(o) return T.lt(self._data, cmp_operand(o)) end
function Variable:le(o) return T.le(self._data, cmp_operand(o)) end
function Variable:gt(o) return T.gt(self._data, cmp_operand(o)) end
function Variable:ge(o) return T.ge(self._data, cmp_operand(o)) end

local function stats_line(t)
  if t.ptr.numel == 0 then return 'empty' end
  local x = t:astype('float64')
  local ok, mean, std = pcall(function() return T.mean(x):item(), T.std(x):item() end)
  if not ok then return 'unavailable' end
  return string.format('mean=%.8f, std=%.8f', mean, std)
end

-- A multi-line summary of the data and gradient (Chainer's debug_print).
function Variable:debug_print()
  local d = self._data
  local lines = { 'variable' .. (self.name and (' ' .. self.name) or '') }
  if d == nil then
    lines[#lines + 1] = '- data: None'
  else
    lines[#lines + 1] = '- device: ' .. T.device_name(d.ptr.dev)
    lines[#lines + 1] = '- backend: chainer.tensor'
    lines[#lines + 1] = '- shape: ' .. shape_str(d.shape)
    lines[#lines + 1] = '- dtype: ' .. T.dtype_names[d.ptr.dt]
    lines[#lines + 1] = '- statistics: ' .. stats_line(d)
  end
  local g = self._grad_var
  if g then
    lines[#lines + 1] = '- grad: ' .. stats_line(g._data)
  else
    lines[#lines + 1] = '- grad: None'
  end
  return table.concat(lines, '\n')
end

function Variable:summary()
  return (self.name or '') .. ' ' .. self.label
end

Variable.__tostring = function(v)
  local d = rawget(v, '_data')
  local head = 'variable' .. (rawget(v, 'name') and (' ' .. rawget(v, 'name')) or '')
  if d == nil then return head .. '(None)' end
  local body = T.format_body and T.format_body(d) or tostring(d)
  body = body:gsub('\n', '\n' .. string.rep(' ', #head + 1))
  return head .. '(' .. body .. ')'
end
Variable.__concat = function(a, b) return tostring(a) .. tostring(b) end

-- #v on LuaJIT tables is the raw length; use v:len() for the first axis.

---------------------------------------------------------------------------
-- helpers for other modules
---------------------------------------------------------------------------
Variable.new_var = new_var
Variable.node_of = node_of
Variable.is_variable = is_variable
Variable.VariableNode = VariableNode
Variable.label_of = label_of
Variable._props = props
Variable._setters = setters

-- chainer.as_variable(x): Variables pass through; tensors are wrapped
-- (requires_grad = false, as in Chainer).
function Variable.as_variable(x)
  if is_variable(x) then return x end
  if is_tensor(x) then return new_var(x, false) end
  error('as_variable: expected a Variable or a tensor (got ' .. type(x) .. ')', 2)
end

-- chainer.as_array(x): the tensor of a Variable, or x itself.
function Variable.as_array(x)
  if is_variable(x) then return x._data end
  return x
end

-- Register before loading the operators: they require this module back.
package.loaded['chainer.variable'] = Variable

-- The operators (+ - * / ^ % and unary minus), matmul, reshape and
-- transpose are FunctionNodes; they install themselves into Variable.
require 'chainer.functions.math.basic_math'

return Variable
