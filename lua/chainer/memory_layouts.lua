-- memory_layouts.lua: chainer.memory_layouts, Chainer 7's experimental
-- memory layouts.
--
-- A Variable may hold its array in a non-standard layout: with
-- CUDNN_CHANNEL_LAST_X an image batch whose semantic shape is (N, C, H, W)
-- is stored as an (N, H, W, C) array.  Such a Variable carries the layout
-- in its `layout` field (nil is the standard layout); its `shape` is the
-- semantic shape and its `raw_array` the stored array.  x:as_layout(l)
-- converts (differentiably, through the AsLayout node below).  Functions
-- refuse inputs in a non-standard layout unless they declare that they
-- accept them (FunctionNode.check_layout_forward); convolution_2d,
-- deconvolution_2d and batch_normalization accept channel-last inputs and
-- give their output in the input's layout.
--
-- `state.live` turns true once any Variable has a non-standard layout:
-- until then the autograd's hot paths skip every layout check with one
-- table read.
local M = {}

M.CUDNN_CHANNEL_FIRST_X = nil   -- the standard layout of data:    (N, C, H, W)
M.CUDNN_CHANNEL_LAST_X = 'CUDNN_CHANNEL_LAST_X'   -- stored as (N, H, W, C)
M.CUDNN_CHANNEL_FIRST_W = nil   -- the standard layout of filters: (O, I, kH, kW)
M.CUDNN_CHANNEL_LAST_W = 'CUDNN_CHANNEL_LAST_W'   -- stored as (O, kH, kW, I)

local FunctionNode = require 'chainer.function_node'
M.state = FunctionNode._layout_state

local KNOWN = { CUDNN_CHANNEL_LAST_X = true, CUDNN_CHANNEL_LAST_W = true }


-- The layout's printed name (Chainer prints None for the standard one).
local function layout_name(l) return l == nil and 'None' or tostring(l) end
M.layout_name = layout_name

-- Raises unless l is nil or one of the layouts above.
function M.check_layout(fn, l, level)
  if l ~= nil and not KNOWN[l] then
    error(string.format("%s: unknown memory layout %s (expected nil, 'CUDNN_CHANNEL_LAST_X' or " ..
      "'CUDNN_CHANNEL_LAST_W')", fn, type(l) == 'string' and ("'" .. l .. "'") or tostring(l)), (level or 1) + 1)
  end
end

-- The permutation (0-based axes) turning an array of ndim axes stored in
-- layout src into one stored in layout dst; nil when they are the same.
-- A channel-last layout moves axis 1 (channels) to the end.
function M.transpose_axes(ndim, src, dst, fn)
  if src == dst then return nil end
  if ndim < 3 then
    error(string.format('%s: a memory layout needs an array of 3 or more axes (got %d)', fn or 'memory_layouts', ndim), 3)
  end
  local axes = { 0 }
  if src == nil then            -- channel first -> channel last
    for i = 2, ndim - 1 do axes[#axes + 1] = i end
    axes[#axes + 1] = 1
  elseif dst == nil then        -- channel last -> channel first
    axes[2] = ndim - 1
    for i = 1, ndim - 2 do axes[#axes + 1] = i end
  else
    error(string.format("%s: unknown layout conversion: from '%s' to '%s'", fn or 'memory_layouts',
      layout_name(src), layout_name(dst)), 3)
  end
  return axes
end

-- shape (a Lua list) permuted by 0-based axes.
local function permute(shape, axes)
  if axes == nil then return shape end
  local out = {}
  for i = 1, #axes do out[i] = shape[axes[i] + 1] end
  return out
end

-- The semantic shape of a raw shape stored in layout l.
function M.semantic_shape_of(raw_shape, l)
  return permute(raw_shape, M.transpose_axes(#raw_shape, l, nil))
end

-- The raw shape of a semantic shape to be stored in layout l.
function M.raw_shape_of(shape, l)
  return permute(shape, M.transpose_axes(#shape, nil, l))
end

local function is_variable(x) return type(x) == 'table' and x._is_variable == true end

-- get_raw_shape(x): the shape of the array as stored.
function M.get_raw_shape(x)
  if is_variable(x) then
    local d = x._data
    return d and d.shape or nil
  end
  return x.shape
end

-- get_semantic_shape(x, {assumed_layout =}): a Variable's shape; for an
-- array, its shape read as stored in assumed_layout (when given).
function M.get_semantic_shape(x, opts)
  local has_assumed = type(opts) == 'table' and opts.assumed_layout ~= nil
  if opts ~= nil and type(opts) ~= 'table' then
    error('memory_layouts.get_semantic_shape: the second argument must be an options table {assumed_layout =}', 2)
  end
  if is_variable(x) then
    if has_assumed and x.layout ~= opts.assumed_layout then
      error(string.format('memory_layouts.get_semantic_shape: the variable has layout %s, not the assumed %s',
        layout_name(x.layout), layout_name(opts.assumed_layout)), 2)
    end
    return x.shape
  end
  if has_assumed then return M.semantic_shape_of(x.shape, opts.assumed_layout) end
  return x.shape
end

-- Marks the layout machinery live (the first non-standard Variable).
function M.set_layout(v, l)
  if l ~= nil then M.state.live = true end
  rawset(v, '_layout', l)
end

---------------------------------------------------------------------------
-- AsLayout: the one node that changes a Variable's layout.  Its backward
-- transposes the gradient back; gradients are always raw arrays without a
-- layout tag (their shape is the raw shape of their variable).
---------------------------------------------------------------------------
local transpose -- F.transpose, loaded on first use (a require cycle otherwise)

local AsLayout = FunctionNode:extend('AsLayout')
M.AsLayout = AsLayout

function AsLayout:init(layout)
  M.check_layout('AsLayout', layout, 2)
  M.state.live = true   -- apply must run this node's check_layout_forward
  self.out_layout = layout
end

function AsLayout:label() return 'AsLayout' end

function AsLayout:check_layout_forward(inputs)
  if #inputs ~= 1 then
    error(string.format('AsLayout: expected 1 input (got %d)', #inputs), 3)
  end
  local x = inputs[1]
  local d = type(x) == 'table' and rawget(x, '_data') or x
  local src = self.input_layouts[1]
  self.in_layout = src
  self.axes = M.transpose_axes(d.ptr.nd, src, self.out_layout, 'AsLayout')
  self.output_layouts = { self.out_layout, n = 1 }
end

function AsLayout:forward(inputs)
  local axes = self.axes
  if axes == nil then return { inputs[1] } end
  return { inputs[1]:transpose(axes):contiguous() }
end

function AsLayout:backward(indexes, grad_outputs)
  local axes = self.axes
  if axes == nil then return { grad_outputs[1] } end
  local inverse = {}
  for i = 1, #axes do inverse[axes[i] + 1] = i - 1 end
  transpose = transpose or require('chainer.functions.array.transpose').transpose
  return { transpose(grad_outputs[1], inverse) }
end

-- x:as_layout(layout): x itself when it already has the layout.
function M.as_layout(x, layout)
  M.check_layout('Variable.as_layout', layout, 2)
  if x.layout == layout then return x end
  return AsLayout(layout):apply({ x })[1]
end

---------------------------------------------------------------------------
-- For the functions that accept channel-last inputs: they compute in the
-- standard layout and give the result in the data input's layout.
---------------------------------------------------------------------------

-- Raises unless x (a Variable, a tensor or nil) is in one of the allowed
-- layouts (a set: [l] = true, with `standard = true` for nil).
function M.expect_layout(fn, what, x, allowed)
  local l = is_variable(x) and x.layout or nil
  if l == nil or allowed[l] then return end
  error(string.format('%s: invalid memory layout for %s: %s (expected None%s)', fn, what, layout_name(l),
    allowed.CUDNN_CHANNEL_LAST_X and ' or CUDNN_CHANNEL_LAST_X' or
    allowed.CUDNN_CHANNEL_LAST_W and ' or CUDNN_CHANNEL_LAST_W' or ''), 3)
end

-- x in the standard layout (x itself when it is).
local function to_standard(x)
  if is_variable(x) and x.layout ~= nil then return M.as_layout(x, nil) end
  return x
end

local DATA_LAYOUTS = { CUDNN_CHANNEL_LAST_X = true }
local FILTER_LAYOUTS = { CUDNN_CHANNEL_LAST_W = true }
local STANDARD_ONLY = {}

-- f(x, second, ...) accepting x in CUDNN_CHANNEL_LAST_X and, when
-- second_is_filter, its second argument in CUDNN_CHANNEL_LAST_W (the
-- filter of a convolution); the other arguments keep the standard layout.
-- It computes f in the standard layout and returns the result in x's
-- layout: the same numbers and gradients as the standard computation.
-- Before any non-standard layout exists it costs one table read.
function M.accept_channel_last(name, f, second_is_filter)
  local state = M.state
  return function(x, second, ...)
    if not state.live then return f(x, second, ...) end
    M.expect_layout(name, 'x', x, DATA_LAYOUTS)
    M.expect_layout(name, second_is_filter and 'W' or 'argument 2', second,
      second_is_filter and FILTER_LAYOUTS or STANDARD_ONLY)
    local xl = is_variable(x) and x.layout or nil
    local y = f(to_standard(x), to_standard(second), ...)
    if xl ~= nil then y = M.as_layout(y, xl) end
    return y
  end
end

return M
