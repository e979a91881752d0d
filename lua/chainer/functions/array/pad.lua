-- functions/array/pad.lua: F.pad(x, pad_width, mode, {constant_values})
-- (numpy.pad with modes 'constant', 'edge' and 'reflect').
--
-- Constant padding's gradient is the slice of gy that holds x (get_item,
-- differentiable).  Edge and reflect padding are a gather of x's elements
-- (the padded positions come from padding arange(x.size) the same way), so
-- their gradient is the scatter-add TakeGrad, which accumulates the
-- gradients of the copied border elements.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'

local M = {}

local SIGNATURE = args.signature { 'pad_width', 'mode', 'constant_values' }

local Pad = FunctionNode:extend('Pad')
M.Pad = Pad

function Pad:forward(inputs)
  return { T.pad(inputs[1], self.widths, { mode = 'constant', constant_values = self.value }) }
end

function Pad:backward(_, gys)
  local get_item = require('chainer.functions.array.get_item').get_item
  local terms = {}
  for d = 1, #self.widths do
    terms[d] = { self.widths[d][1], self.widths[d][1] + self.in_shape[d] }
  end
  return { get_item(gys[1], terms) }
end

-- pad_width in any of numpy's forms -> one {before, after} per axis
local function normalise(pw, nd)
  local function int(v)
    if type(v) ~= 'number' or v ~= math.floor(v) or v < 0 then
      error(string.format('pad: pad widths must be non-negative integers (got %s)', tostring(v)), 4)
    end
    return v
  end
  local r = {}
  if type(pw) == 'number' then
    for d = 1, nd do r[d] = { int(pw), pw } end
  elseif type(pw) == 'table' and type(pw[1]) == 'number' then
    local b, a = int(pw[1]), int(pw[2] or pw[1])
    for d = 1, nd do r[d] = { b, a } end
  elseif type(pw) == 'table' and (#pw == 1 or #pw == nd) then
    for d = 1, nd do
      local p = pw[#pw == 1 and 1 or d]
      if type(p) == 'number' then p = { p, p } end
      if type(p) ~= 'table' then error('pad: pad_width entries must be integers or {before, after} pairs', 3) end
      r[d] = { int(p[1]), int(p[2] or p[1]) }
    end
  elseif type(pw) == 'table' then
    error(string.format('pad: pad_width has %d pairs for a %d-d input', #pw, nd), 3)
  else
    error('pad: pad_width must be an integer or a table (got ' .. tostring(pw) .. ')', 3)
  end
  return r
end

-- F.pad(x, pad_width, mode = 'constant', {constant_values = 0})
function M.pad(x, pad_width, mode, opts)
  local v = args.parse('pad', SIGNATURE, 3, pad_width, mode, opts)
  local d = args.array('pad', 'x', x)
  pad_width, mode = v.pad_width, v.mode
  local value = v.constant_values
  if mode == nil or mode == false then mode = 'constant' end
  if value == nil or value == false then value = 0 end
  if pad_width == nil then error('pad: pad_width is required', 2) end
  if type(value) ~= 'number' then error('pad: constant_values must be a number', 2) end
  local widths = normalise(pad_width, d.ptr.nd)
  if mode == 'constant' then
    local f = setmetatable({}, Pad)
    f.widths, f.value, f.in_shape = widths, value, d.shape
    return f:apply({ x })[1]
  elseif mode == 'edge' or mode == 'reflect' then
    local idx = T.pad(T.arange(0, d.size, 1, 'int64'):reshape(d.shape), widths, { mode = mode })
    return require('chainer.functions.array._take')._take(x, idx, nil, 'Pad')
  end
  error(string.format("pad: unknown mode '%s' (expected 'constant', 'edge' or 'reflect')", tostring(mode)), 2)
end

return M
