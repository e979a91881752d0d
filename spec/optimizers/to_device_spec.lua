-- Optimizer:to_device / to_cpu / to_gpu and cuda.get_device_from_array:
-- the CPU side everywhere, the GPU side (tagged #gpu) where there is one.
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local cuda = chainer.backends.cuda

local function trained_adam()
  T.random.seed(1)
  local model = chainer.links.Linear(2, 3)
  local opt = chainer.optimizers.Adam():setup(model)
  opt:update(function() return F.sum(model(T.ones({ 1, 2 }))) end)
  return model, opt
end

describe('Optimizer:to_device', function()
  it('on the CPU keeps the link and the state as they are and returns the optimizer', function()
    local model, opt = trained_adam()
    local m_before = model.W.update_rule.state.m:copy()
    assert.are.equal(opt, opt:to_device('@numpy'))
    assert.are.equal(opt, opt:to_cpu())
    assert.are.equal(-1, model.W.array.ptr.dev)
    assert.are.equal(0, (model.W.update_rule.state.m - m_before):abs():max():item())
  end)

  it('names itself and the device when it cannot move there', function()
    local _, opt = trained_adam()
    assert.has_error(function() opt:to_device('tpu') end,
      [[Adam.to_device: "tpu" is not a device (expected '@numpy', 'cpu', -1, '@cupy:N', 'cuda:N', N (an integer >= 0) or a Device)]])
    if not cuda.available then
      local ok, err = pcall(opt.to_gpu, opt)
      assert.is_false(ok)
      assert.truthy(tostring(err):find('Adam.to_device: @cupy:0 (cuda:0) asked for, but no GPU is available', 1, true), err)
    end
  end)

  it('moves the link and every state tensor to the GPU and back #gpu', function()
    if not cuda.available then pending('no CUDA device here') return end
    local model, opt = trained_adam()
    local m_before = model.W.update_rule.state.m:copy()
    opt:to_gpu()
    assert.are.equal(0, model.W.array.ptr.dev)
    for _, v in pairs(model.W.update_rule.state) do
      if T.is_tensor(v) then assert.are.equal(0, v.ptr.dev) end
    end
    opt:update(function() return F.sum(model(T.ones({ 1, 2 }):to_device('cuda:0'))) end)
    opt:to_cpu()
    assert.are.equal(-1, model.W.update_rule.state.m.ptr.dev)
    assert.is_true((model.W.update_rule.state.m - m_before):abs():max():item() > 0)
  end)
end)

describe('cuda.get_device_from_array', function()
  it('is DummyDevice (id -1) for host tensors, other values and no argument', function()
    assert.are.equal(cuda.DummyDevice, cuda.get_device_from_array(T.ones({ 2 })))
    assert.are.equal(cuda.DummyDevice, cuda.get_device_from_array(3, 'x'))
    assert.are.equal(-1, cuda.get_device_from_array().id)
    assert.are.equal(cuda.DummyDevice, cuda.DummyDevice:use())
  end)

  it('is the device of the first GPU tensor #gpu', function()
    if not cuda.available then pending('no CUDA device here') return end
    local d = cuda.get_device_from_array(T.ones({ 2 }), T.ones({ 2 }):to_device('cuda:0'))
    assert.are.equal(0, d.id)
  end)
end)
