-- chainermn/functions/point_to_point.lua: the differentiable send and recv
-- of chainermn.functions and pseudo_connect (ChainerMN 7.8.1's).
--
--   local phi = send(h, comm, 1)      -- rank 0: h to rank 1
--   phi:backward()                    -- receives dL/dh from rank 1, continues
--
--   local h = recv(comm, 0)           -- rank 1: h from rank 0
--   loss:backward()                   -- sends dL/dh back to rank 0
--
-- send returns a "delegate variable": an empty variable whose backward
-- waits for the gradient from the receiving rank.  Pass it to the next
-- recv (or join it to other outputs with pseudo_connect) so that one
-- backward call reaches every part of a graph split across ranks.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local collective = require 'chainermn.functions.collective'

local M = {}

local new_var, dummy = Variable.new_var, collective.dummy

local function as_list(v) if T.is_tensor(v) then return { v } end return v end

local function check_peer(comm, rank, fn)
  if type(comm) ~= 'table' or type(comm.send) ~= 'function' then
    error(fn .. ': expected a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
  if rank == comm.rank then
    error(string.format('%s: rank must differ from this rank (%d): sending to oneself would wait forever', fn, rank), 3)
  end
end

local Send = FunctionNode:extend('Send')
function Send:forward(inputs)
  local xs = {}
  for i = 1, #inputs - 1 do xs[i] = inputs[i] end   -- the last input is the dummy
  self._in = {}
  for i, x in ipairs(inputs) do self._in[i] = { x.shape, x.dtype } end
  self.comm:send(#xs == 1 and xs[1] or xs, self.peer, self.tag)
  return { T.zeros({ 0 }, 'float32') }
end
function Send:backward()
  local gs = as_list(self.comm:recv(self.peer, self.tag))
  local out = {}
  for i = 1, #self._in - 1 do out[i] = new_var(gs[i], false) end
  local d = self._in[#self._in]
  out[#self._in] = new_var(T.zeros(d[1], d[2]), false)
  return out
end

-- send(x, comm, rank, tag): x (a variable or an array of variables) to
-- rank; returns the delegate variable.
function M.send(x, comm, rank, tag)
  check_peer(comm, rank, 'send')
  local inputs = {}
  if type(x) == 'table' and not x._is_variable and not T.is_tensor(x) then
    for i, v in ipairs(x) do inputs[i] = v end
  else
    inputs[1] = x
  end
  inputs[#inputs + 1] = dummy()
  local f = setmetatable({ comm = comm, peer = rank, tag = tag or 0 }, Send)
  local delegate = f:apply(inputs)[1]
  delegate.name = 'delegate_variable'
  -- an empty output gets no automatic initial gradient: give it its own,
  -- so that delegate:backward() starts the backward pass
  delegate.grad = T.zeros({ 0 }, 'float32')
  return delegate
end

local Recv = FunctionNode:extend('Recv')
function Recv:forward(inputs)
  self._in = { inputs[1].shape, inputs[1].dtype }
  local ys = as_list(self.comm:recv(self.peer, self.tag))
  self._out = {}
  for i, y in ipairs(ys) do self._out[i] = { y.shape, y.dtype } end
  return ys
end
function Recv:backward(_, gys)
  local gs = {}
  for i, o in ipairs(self._out) do gs[i] = gys[i] and gys[i].array or T.zeros(o[1], o[2]) end
  self.comm:send(#gs == 1 and gs[1] or gs, self.peer, self.tag)
  return { new_var(T.zeros(self._in[1], self._in[2]), false) }
end

local RECV_SIGNATURE = args.signature({ 'delegate_variable', 'tag', 'force_tuple' })

-- recv(comm, rank, {delegate_variable = nil, tag = 0, force_tuple = false})
-- (or positionally): what rank sent with send, a variable or an array of
-- them (always an array with force_tuple).
function M.recv(comm, rank, ...)
  check_peer(comm, rank, 'recv')
  local o = args.parse_at(3, 'recv', RECV_SIGNATURE, select('#', ...), ...)
  local f = setmetatable({ comm = comm, peer = rank, tag = o.tag or 0 }, Recv)
  local ys = f:apply({ o.delegate_variable or dummy() })
  if #ys == 1 and not o.force_tuple then return ys[1] end
  return ys
end

local PseudoConnect = FunctionNode:extend('PseudoConnect')
function PseudoConnect:forward(inputs)
  self._delegate = { inputs[1].shape, inputs[1].dtype }
  local out = {}
  self._out = {}
  for i = 2, #inputs do out[i - 1], self._out[i - 1] = inputs[i], { inputs[i].shape, inputs[i].dtype } end
  return out
end
function PseudoConnect:backward(_, gys)
  local out = { new_var(T.zeros(self._delegate[1], self._delegate[2]), false) }
  for i, o in ipairs(self._out) do out[i + 1] = gys[i] or new_var(T.zeros(o[1], o[2]), false) end
  return out
end

-- pseudo_connect(delegate_variable, ...): the variables after the first,
-- unchanged, joined in the graph to delegate_variable (whose backward then
-- runs when theirs does).  One variable gives one, more give an array.
function M.pseudo_connect(delegate_variable, ...)
  local inputs = { delegate_variable, ... }
  if #inputs < 2 then error('pseudo_connect: give the delegate variable and at least one variable', 2) end
  local f = setmetatable({}, PseudoConnect)
  local ys = f:apply(inputs)
  if #ys == 1 then return ys[1] end
  return ys
end

return M
