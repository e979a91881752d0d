-- Specs for F.embed_id: row lookup, ignore_label, gradient (scatter-add
-- with repeated ids), double backprop, errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

local function ref(x, W, il)
  local ids = x:reshape(-1):totable()
  local rows = W:totable()
  local out = {}
  for i, id in ipairs(ids) do
    local r = {}
    for j = 1, W.shape[2] do r[j] = (id == il) and 0 or rows[id + 1][j] end
    out[i] = r
  end
  local shape = x.shape
  shape[#shape + 1] = W.shape[2]
  return T.array(out, W.dtype):reshape(shape)
end

-- the ids are closed over: they are not differentiable inputs
local ids1 = T.array({ { 0, 2, 2 }, { 5, 1, 0 } }, 'int32')
function_spec.describe('F.embed_id', {
  fn = function(W) return F.embed_id(ids1, W) end,
  inputs = function(dt) return { T.random.uniform(-1, 1, { 6, 4 }, dt) } end,
  reference = function(W) return ref(ids1, W) end,
  double_backward = true,
})

local ids2 = T.array({ 3, -1, 0, 3 }, 'int64')
function_spec.describe('F.embed_id ignore_label', {
  fn = function(W) return F.embed_id(ids2, W, { ignore_label = -1 }) end,
  inputs = function(dt) return { T.random.uniform(-1, 1, { 4, 3 }, dt) } end,
  reference = function(W) return ref(ids2, W, -1) end,
  double_backward = true,
})

describe('F.embed_id', function()
  it('adds the gradients of repeated ids and skips ignored ones', function()
    local W = chainer.Variable(T.zeros({ 3, 2 }, 'float64'))
    local y = F.embed_id(T.array({ 1, 1, 2, -1 }, 'int32'), W, { ignore_label = -1 })
    y.grad = T.array({ { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 } }, 'float64')
    y:backward()
    assert.same({ { 0, 0 }, { 4, 6 }, { 5, 6 } }, W.grad:totable())
  end)

  it('takes a 0-d id and Chainer positional ignore_label', function()
    local W = T.array({ { 1, 2 }, { 3, 4 } }, 'float32')
    assert.same({ 3, 4 }, F.embed_id(T.array(1, 'int64'), W).array:totable())
    assert.same({ { 0, 0 }, { 1, 2 } }, F.embed_id(T.array({ 1, 0 }, 'int32'), W, 1).array:totable())
  end)

  it('rejects bad ids with clear messages', function()
    local W = T.ones({ 3, 2 })
    R.errors_with(function() F.embed_id(T.array({ 0, 3 }, 'int32'), W) end, 'embed_id', 'id 3', 'out of range')
    R.errors_with(function() F.embed_id(T.array({ -1 }, 'int32'), W) end, 'embed_id', 'id -1')
    R.errors_with(function() F.embed_id(T.array({ 0.0 }, 'float32'), W) end, 'embed_id', 'integer ids')
    R.errors_with(function() F.embed_id(T.array({ 0 }, 'int32'), T.ones({ 3 })) end, 'embed_id', 'W must be 2-d')
  end)
end)
