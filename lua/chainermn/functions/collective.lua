-- chainermn/functions/collective.lua: the differentiable collectives of
-- chainermn.functions (ChainerMN 7.8.1's): allgather, alltoall, bcast,
-- gather, scatter.  Every rank must call them, and later call backward
-- through them, in the same order: the backward passes are collectives too.
--
--   allgather(comm, x)      every rank's x; gradients summed back to each x
--   alltoall(comm, xs)      xs[j + 1] to rank j; gradients go back the same way
--   bcast(comm, x, root)    root's x (the others pass nothing); root's
--                           gradient is the sum of every rank's
--   gather(comm, x, root)   on root an array of every rank's x, elsewhere an
--                           empty variable; gradients scattered back
--   scatter(comm, xs, root) root's xs[r + 1] to rank r; gradients gathered back
--
-- (Their backward moves tensors, so there is no double backprop.)
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'

local M = {}

local new_var = Variable.new_var

-- The empty variable a rank passes where it has no input (ChainerMN's
-- dummy), so that the node still joins the graph.
local function dummy() return new_var(T.zeros({ 0 }, 'float32'), true) end
M.dummy = dummy

-- Gradients as tensors; an output that got none gives zeros of its shape.
local function grads_or_zeros(node, gys)
  local out = {}
  for i = 1, #node._out_shapes do
    local g = gys[i]
    out[i] = g and g.array or T.zeros(node._out_shapes[i], node._out_dtypes[i])
  end
  return out
end

local function remember_outputs(node, ys)
  node._out_shapes, node._out_dtypes = {}, {}
  for i, y in ipairs(ys) do node._out_shapes[i], node._out_dtypes[i] = y.shape, y.dtype end
  return ys
end

local function vars(tensors)
  local out = {}
  for i, t in ipairs(tensors) do out[i] = new_var(t, false) end
  return out
end

local function check_comm(comm, fn)
  if type(comm) ~= 'table' or type(comm.allgather) ~= 'function' then
    error(fn .. ': the first argument must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
end

---------------------------------------------------------------------------

local AllGather = FunctionNode:extend('AllGather')
function AllGather:forward(inputs) return remember_outputs(self, self.comm:allgather(inputs[1])) end
function AllGather:backward(_, gys)
  -- rank r's x went to every rank: its gradient is the sum of what each
  -- rank computed for its copy
  local back = self.comm:alltoall(grads_or_zeros(self, gys))
  local sum = back[1]:copy()
  for i = 2, #back do sum = sum + back[i] end
  return vars({ sum })
end

function M.allgather(comm, x)
  check_comm(comm, 'allgather')
  local f = setmetatable({ comm = comm }, AllGather)
  return f:apply({ x })
end

local AllToAll = FunctionNode:extend('AllToAll')
function AllToAll:forward(inputs) return remember_outputs(self, self.comm:alltoall(inputs)) end
function AllToAll:backward(_, gys) return vars(self.comm:alltoall(grads_or_zeros(self, gys))) end

function M.alltoall(comm, xs)
  check_comm(comm, 'alltoall')
  if type(xs) ~= 'table' or xs._is_variable or T.is_tensor(xs) or #xs ~= comm.size then
    error(string.format('alltoall: xs must be an array of %d variables, one per rank', comm.size), 2)
  end
  local f = setmetatable({ comm = comm }, AllToAll)
  return f:apply(xs)
end

local Bcast = FunctionNode:extend('Bcast')
function Bcast:forward(inputs)
  local x = self.comm.rank == self.root and inputs[1] or nil
  return remember_outputs(self, { self.comm:bcast(x, self.root) })
end
function Bcast:backward(_, gys)
  local gs = self.comm:gather(grads_or_zeros(self, gys)[1], self.root)
  if self.comm.rank ~= self.root then return vars({ T.zeros({ 0 }, 'float32') }) end
  local sum = gs[1]:copy()
  for i = 2, #gs do sum = sum + gs[i] end
  return vars({ sum })
end

-- bcast(comm, x, root): x is root's variable; the other ranks pass nil.
function M.bcast(comm, x, root)
  check_comm(comm, 'bcast')
  root = root or 0
  local f = setmetatable({ comm = comm, root = root }, Bcast)
  return f:apply({ comm.rank == root and x or dummy() })[1]
end

local Gather = FunctionNode:extend('Gather')
function Gather:forward(inputs)
  local x = inputs[1]
  self._in_shape, self._in_dtype = x.shape, x.dtype
  local ys = self.comm:gather(x, self.root)
  if ys then return remember_outputs(self, ys) end
  return remember_outputs(self, { T.zeros({ 0 }, x.dtype) })
end
function Gather:backward(_, gys)
  local gs = self.comm.rank == self.root and grads_or_zeros(self, gys) or nil
  return vars({ self.comm:scatter(gs, self.root) })
end

-- gather(comm, x, root): on root an array of every rank's x (variables);
-- elsewhere one empty variable (backward from it, or from anything
-- computed from it, to take part in the backward scatter).
function M.gather(comm, x, root)
  check_comm(comm, 'gather')
  root = root or 0
  local f = setmetatable({ comm = comm, root = root }, Gather)
  local ys = f:apply({ x })
  if comm.rank == root then return ys end
  return ys[1]
end

local Scatter = FunctionNode:extend('Scatter')
function Scatter:forward(inputs)
  local root = self.root
  self._in = {}
  for i, x in ipairs(inputs) do self._in[i] = { x.shape, x.dtype } end
  return remember_outputs(self, { self.comm:scatter(self.comm.rank == root and inputs or nil, root) })
end
function Scatter:backward(_, gys)
  local gs = self.comm:gather(grads_or_zeros(self, gys)[1], self.root)
  if gs then return vars(gs) end
  local zeros = {}
  for i, e in ipairs(self._in) do zeros[i] = T.zeros(e[1], e[2]) end
  return vars(zeros)
end

-- scatter(comm, xs, root): root passes an array of comm.size variables;
-- the others pass nil.
function M.scatter(comm, xs, root)
  check_comm(comm, 'scatter')
  root = root or 0
  local inputs
  if comm.rank == root then
    if type(xs) ~= 'table' or xs._is_variable or T.is_tensor(xs) then
      error(string.format('scatter: the root must pass an array of %d variables', comm.size), 2)
    end
    inputs = xs
  else
    inputs = { dummy() }
  end
  local f = setmetatable({ comm = comm, root = root }, Scatter)
  return f:apply(inputs)[1]
end

return M
