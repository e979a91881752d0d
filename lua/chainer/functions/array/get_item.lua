-- functions/array/get_item.lua: F.get_item(x, slices), NumPy indexing of
-- a Variable.
--
-- slices is one index term or a Lua array of terms (Python's tuple), with
-- the terms of tensor:slice / tensor:index: integers (0-based, negative
-- from the end), {start, stop, step} tables (nil or '_' for a hole, {} is
-- ':'), T.newaxis or 'newaxis', '...', Python-syntax strings ('1:3, ::-1'),
-- integer index tensors (advanced indexing; T.ints{0, 2, 0} from a Lua
-- array) and bool masks (bool tensors or Lua arrays of booleans).
--
-- Basic indexing gives a view; its gradient writes gy into the same view
-- of zeros (GetItemGrad).  Advanced indexing is a gather of the flat
-- positions arange(x.size):reshape(x.shape)[slices]; its gradient is the
-- scatter-add TakeGrad, so repeated positions accumulate.  Both gradient
-- nodes differentiate back into get_item (double backprop).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'slices' }

local GetItem = FunctionNode:extend('GetItem')
local GetItemGrad = FunctionNode:extend('GetItemGrad')
M.GetItem, M.GetItemGrad = GetItem, GetItemGrad

function GetItem:forward(inputs)
  local x = inputs[1]
  self._in_shape = x.shape
  return { T.slice_terms(x, self.terms) }
end

function GetItem:backward(_, gys)
  local g = setmetatable({}, GetItemGrad)
  g.terms, g.shape = self.terms, self._in_shape
  return { g:apply({ gys[1] })[1] }
end

function GetItemGrad:forward(inputs)
  local gy = inputs[1]
  local gx = T.zeros(self.shape, gy.dtype, gy.ptr.dev)
  T.slice_terms(gx, self.terms):copy_(gy)
  return { gx }
end

function GetItemGrad:backward(_, ggs)
  local f = setmetatable({}, GetItem)
  f.terms = self.terms
  return { f:apply({ ggs[1] })[1] }
end

local function is_bool_list(v)
  return type(v) == 'table' and not T.is_tensor(v) and #v > 0 and type(v[1]) == 'boolean'
end

local function is_single_term(s)
  return type(s) == 'number' or type(s) == 'string' or s == T.newaxis or T.is_tensor(s)
    or (type(s) == 'table' and s._is_variable) or is_bool_list(s)
end

-- The Lua array of terms for `slices` (strings expanded; Variables and
-- Lua arrays of booleans become tensors).  Returns terms, advanced?
local function parse_terms(fn, slices)
  if slices == nil then error(fn .. ': slices is required', 3) end
  local raw
  if is_single_term(slices) then raw = { slices }
  elseif type(slices) == 'table' then raw = slices
  else error(string.format('%s: slices must be an index term or a Lua array of terms (got %s)', fn, type(slices)), 3) end
  local list = {}
  for i = 1, #raw do
    local t = raw[i]
    if type(t) == 'table' and t._is_variable then t = t.array end
    if is_bool_list(t) then t = T.array(t, 'bool') end
    list[i] = t
  end
  local terms = T.index_terms(unpack(list, 1, #list))
  local adv = false
  for i = 1, #terms do
    local t = terms[i]
    if T.is_tensor(t) then
      if t.dtype ~= 'bool' and not t.dtype:find('int') then
        error(string.format('%s: index arrays must be integer or bool (got %s)', fn, t.dtype), 3)
      end
      adv = true
    elseif type(t) == 'table' and t ~= T.newaxis then
      if #t > 3 then error(string.format('%s: a slice table holds at most {start, stop, step} (got %d entries)', fn, #t), 3) end
    elseif type(t) ~= 'number' and t ~= T.newaxis and t ~= 'newaxis' and t ~= '...' then
      error(string.format('%s: unsupported index term %s', fn, tostring(t)), 3)
    end
  end
  return terms, adv
end
M._parse_terms = parse_terms

-- The flat positions of x's elements selected by advanced terms (int64),
-- on x's device (index tensors on another device are moved there).
local function flat_positions(d, terms)
  local dev = d.ptr.dev
  local ids = T.arange(0, d.size, 1, 'int64', dev):reshape(d.shape)
  local moved = {}
  for i = 1, #terms do
    local t = terms[i]
    moved[i] = T.is_tensor(t) and t:to_device(dev) or t
  end
  return ids:index(unpack(moved, 1, #terms))
end
M._flat_positions = flat_positions

-- Runs f(a, b), turning a tensor-level error ("slice: index 5 is out of
-- bounds ...") into one that names fn, raised at the caller of fn.
local function named(fn, f, a, b)
  local ok, res = pcall(f, a, b)
  if not ok then
    local msg = tostring(res):gsub('^[^\n]-%.lua:%d+: ', '')
    error(fn .. ': ' .. msg, 3)
  end
  return res
end
M._named = named

-- F.get_item(x, slices)
function M.get_item(x, slices)
  local d = args.array('get_item', 'x', x)
  -- Chainer's keyword form get_item(x, slices=...) arrives as {slices = ...}
  slices = H.keyword_form('get_item', slices, OPTIONS, 'slices')
  local terms, adv = parse_terms('get_item', slices)
  if adv then
    local take = require('chainer.functions.array._take')._take
    return take(x, named('get_item', flat_positions, d, terms), nil, 'GetItem')
  end
  -- validate now so that errors name get_item and the caller's line
  named('get_item', T.slice_terms, d, terms)
  local f = setmetatable({}, GetItem)
  f.terms = terms
  return f:apply({ x })[1]
end

return M
