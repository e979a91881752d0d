-- functions/array/tile.lua: F.tile(x, reps) (numpy.tile).  The gradient
-- views gy as (r0, s0, r1, s1, ...) and sums over the repetition axes,
-- composed of reshape and sum so it is differentiable again.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local U = require 'chainer.functions.array._util'

local M = {}

local SIGNATURE = args.signature { 'reps' }

local Tile = FunctionNode:extend('Tile')
M.Tile = Tile

function Tile:forward(inputs)
  local x = inputs[1]
  self._in_shape = x.shape
  return { T.tile(x, self.reps) }
end

function Tile:backward(_, gys)
  local reshape = require('chainer.functions.array.reshape').reshape
  local sum = require('chainer.functions.math.sum').sum
  local s, reps = self._in_shape, self.reps
  local n = math.max(#s, #reps)
  local split, axes = {}, {}
  for i = 1, n do
    local r = reps[#reps - n + i] or 1
    local d = s[#s - n + i] or 1
    split[#split + 1] = r
    axes[#axes + 1] = #split - 1
    split[#split + 1] = d
  end
  local g = sum(reshape(gys[1], split), axes)
  return { reshape(g, s) }
end

-- F.tile(x, reps): reps a number or a table of non-negative integers.
function M.tile(x, reps)
  local v = args.parse('tile', SIGNATURE, 1, reps)
  args.array('tile', 'x', x)
  reps = v.reps
  if type(reps) == 'number' then reps = { reps } end
  if type(reps) ~= 'table' then error('tile: reps must be an integer or a table of integers', 2) end
  for i = 1, #reps do
    if type(reps[i]) ~= 'number' or reps[i] ~= math.floor(reps[i]) or reps[i] < 0 then
      error(string.format('tile: reps must hold non-negative integers (entry %d is %s)', i, tostring(reps[i])), 2)
    end
  end
  local f = setmetatable({}, Tile)
  f.reps = U.copy_shape(reps)
  return f:apply({ x })[1]
end

return M
