-- CUDAProfileHook: NVTX ranges around each function's forward and backward.
-- The ranges themselves go to a profiler, so the order is checked through a
-- subclass that records the pushes and pops (the hook's test seam), and the
-- real NVTX path runs where the CUDA backend is present.
local chainer = require 'chainer'
local F = chainer.functions
local T = chainer.tensor
local Hook = chainer.function_hooks.CUDAProfileHook
local err_of = require('helpers').err_of

local function recording_hook()
  local Recording = Hook:extend('RecordingProfileHook')
  local events = {}
  function Recording.nvtx_available() return true end
  function Recording.range_push(name) events[#events + 1] = 'push ' .. name end
  function Recording.range_pop() events[#events + 1] = 'pop' end
  return Recording(), events
end

-- A node whose forward applies another function inside it.
local Outer = chainer.FunctionNode:extend('Outer')
function Outer:forward(inputs)
  return { F.tanh(chainer.Variable(inputs[1])).array }
end
function Outer:backward(_, grads) return { grads[1] } end

describe('function_hooks.CUDAProfileHook', function()
  it('brackets each forward and backward with a range named after the function', function()
    local hook, events = recording_hook()
    local x = chainer.Variable(T.array({ -1, 0.5, 2 }))
    hook:scope(function()
      local y = F.sum(F.relu(F.tanh(x)))
      y:backward()
    end)
    -- a backward that applies functions (differentiable backward) holds
    -- their ranges inside its own
    assert.are.same({
      'push Tanh.forward', 'pop', 'push ReLU.forward', 'pop', 'push Sum.forward', 'pop',
      'push Sum.backward', 'push BroadcastTo.forward', 'pop', 'pop',
      'push ReLU.backward', 'push ReLUGrad2.forward', 'pop', 'pop',
      'push Tanh.backward', 'push TanhGrad.forward', 'pop', 'pop',
    }, events)
  end)

  it('nests the range of a function called inside another one', function()
    local hook, events = recording_hook()
    local x = chainer.Variable(T.array({ 1, 2 }))
    hook:scope(function() Outer():apply({ x }) end)
    assert.are.same({ 'push Outer.forward', 'push Tanh.forward', 'pop', 'pop' }, events)
  end)

  it('pushes real NVTX ranges with the CUDA backend, else says it needs it', function()
    local ok, why = Hook.nvtx_available()
    if not ok then
      assert.matches('CUDAProfileHook: needs the CUDA backend for NVTX ranges %(', err_of(Hook))
      assert.is_string(why)
      return
    end
    local hook = Hook()
    local x = chainer.Variable(T.array({ 1, 2 }))
    hook:scope(function() F.sum(F.exp(x)):backward() end)   -- no profiler: the ranges go nowhere
    assert.are.same({ 'float32' }, { x.grad.dtype })
  end)
end)
