-- functions/array/cast.lua: F.cast(x, typ): x converted to dtype typ
-- ('float32', 'float64', 'float16', ...); the gradient is cast back.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'

local M = {}

local SIGNATURE = args.signature { 'typ' }

local Cast = FunctionNode:extend('Cast')
M.Cast = Cast

function Cast:forward(inputs)
  local x = inputs[1]
  self._in_type = x.dtype
  return { x:astype(self.typ) }
end

function Cast:backward(_, gys)
  return { M.cast(gys[1], self._in_type) }
end

-- F.cast(x, typ): x itself (as a Variable) when it already has dtype typ.
function M.cast(x, typ)
  local v = args.parse('cast', SIGNATURE, 1, typ)
  local d = args.array('cast', 'x', x)
  typ = v.typ
  if type(typ) ~= 'string' then error('cast: typ must be a dtype name such as \'float32\' (got ' .. tostring(typ) .. ')', 2) end
  typ = T.dtype_names[T.dtype_code(typ, 'cast')]
  if d.dtype == typ then return Variable.as_variable(x) end
  local f = setmetatable({}, Cast)
  f.typ = typ
  return f:apply({ x })[1]
end

return M
