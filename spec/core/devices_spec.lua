-- Chainer 7's device API (chainer.backend, chainer.get_device,
-- chainer.using_device, chainer.backends.cuda's transfers,
-- print_runtime_info).  Everything that needs no GPU runs everywhere; the
-- GPU paths are in the block tagged `gpu`.
local chainer = require 'chainer'
local T = chainer.tensor
local backend = chainer.backend
local cuda = chainer.backends.cuda

local err_of = require('helpers').err_of

describe('chainer.get_device', function()
  it('names the host with every CPU spelling, as one Device', function()
    local d = chainer.get_device('@numpy')
    assert.is_true(chainer.isinstance(d, backend.CpuDevice))
    assert.is_true(chainer.isinstance(d, backend.Device))
    for _, spec in ipairs { 'cpu', -1, '-1', d } do
      assert.are.equal(d, chainer.get_device(spec))
    end
    assert.are.equal('@numpy', d.name)
    assert.are.equal('@numpy', tostring(d))
    assert.are.equal(-1, d.id)
    assert.are.equal(T, d.xp)
    assert.is_true(rawequal(d, d:use()))
  end)

  it('rejects what is not a device, saying what is', function()
    assert.matches('get_device: "cuda:x" is not a device: the GPU id after the colon must be an integer',
      err_of(chainer.get_device, 'cuda:x'), 1, true)
    assert.matches('get_device: "@cupy:" is not a device', err_of(chainer.get_device, '@cupy:'), 1, true)
    assert.matches([[get_device: "tpu" is not a device (expected '@numpy', 'cpu', -1, '@cupy:N', 'cuda:N']],
      err_of(chainer.get_device, 'tpu'), 1, true)
    assert.matches('get_device: 1.5 is not a device', err_of(chainer.get_device, 1.5), 1, true)
    assert.matches('get_device: -2 is not a device', err_of(chainer.get_device, -2), 1, true)
    assert.matches('iDeep (Intel64) is not supported', err_of(chainer.get_device, '@intel64'), 1, true)
    assert.matches('ChainerX is not supported', err_of(chainer.get_device, 'native:0'), 1, true)
    assert.matches('get_device: nil is not a device: no device given', err_of(chainer.get_device), 1, true)
    assert.matches('is not a device %(a table%)', err_of(chainer.get_device, {}))
  end)

  it("blames the caller's line", function()
    assert.matches('devices_spec.lua:%d+: get_device', err_of(function() chainer.get_device('tpu') end))
  end)

  it('says that no GPU is there when asked for one without a GPU', function()
    if cuda.available then return end
    for _, spec in ipairs { '@cupy:0', 'cuda:0', 0, '0' } do
      assert.matches('get_device: @cupy:0 (cuda:0) asked for, but no GPU is available',
        err_of(chainer.get_device, spec), 1, true)
    end
  end)
end)

describe('Device:send', function()
  local cpu = chainer.get_device('@numpy')

  it('passes host tensors through and makes numbers 0-d tensors', function()
    local x = T.array({ 1, 2, 3 })
    assert.is_true(rawequal(x, cpu:send(x)))
    local s = cpu:send(2.5)
    assert.is_true(T.is_tensor(s))
    assert.are.equal(0, s.ndim)
    assert.are.equal(2.5, s:item())
    assert.is_nil(cpu:send(nil))
  end)

  it('walks tables (lists and records), keeping shared objects shared', function()
    local x, y = T.zeros({ 2 }), T.ones({ 3 })
    local got = cpu:send({ x, { y, 4 }, named = x })
    assert.is_true(rawequal(x, got[1]))
    assert.is_true(rawequal(y, got[2][1]))
    assert.are.equal(4, got[2][2]:item())
    assert.is_true(rawequal(got[1], got.named))
    local inner = { x }
    local twice = cpu:send({ inner, inner })
    assert.is_true(rawequal(twice[1], twice[2]))
  end)

  it('moves Variables in place and returns them', function()
    local v = chainer.Variable(T.ones({ 2 }))
    assert.is_true(rawequal(v, cpu:send(v)))
    assert.are.equal('cpu', v.device)
  end)

  it('rejects other values by their path', function()
    assert.matches('send to @numpy: arrays%[b%]%[1%] must be a tensor, a number, a Variable, nil or a table of them %(got string%)',
      err_of(function() return cpu:send({ b = { 'x' } }) end))
    assert.matches('a Link %(use link:to_device%(device%)%)',
      err_of(function() return cpu:send(chainer.links.Linear(2, 3)) end))
  end)

  it('is a device spec for the rest of chainlua', function()
    local l = chainer.links.Linear(2, 3)
    l:to_device(cpu)
    assert.are.equal('cpu', l.device)
    assert.are.equal('cpu', T.zeros({ 2 }, 'float32', cpu).device)
    assert.are.equal('cpu', T.zeros({ 2 }):to_device(cpu).device)
    local batch = chainer.dataset.concat_examples({ { T.zeros({ 2 }), 1 }, { T.ones({ 2 }), 0 } }, cpu)
    assert.are.equal('cpu', batch[1].device)
    assert.is_true(cpu:is_array_supported(T.zeros({ 1 })))
    assert.is_false(cpu:is_array_supported(3))
  end)
end)

describe('chainer.using_device', function()
  it('makes the device current for the scope and returns what the scope returns', function()
    local cpu = chainer.get_device('cpu')
    assert.are.equal(cpu, backend.get_current_device())
    local a, b = chainer.using_device('@numpy', function()
      assert.are.equal(cpu, backend.get_current_device())
      return 1, 'two'
    end)
    assert.are.same({ 1, 'two' }, { a, b })
  end)

  it('restores the current device when the scope raises', function()
    assert.matches('inner failure', err_of(chainer.using_device, -1, function() error('inner failure') end))
    assert.are.equal(chainer.get_device('cpu'), backend.get_current_device())
  end)

  it('wants a device and a function', function()
    assert.matches('using_device: pass the scope as a function', err_of(chainer.using_device, 'cpu'), 1, true)
    assert.matches('using_device: "tpu" is not a device', err_of(chainer.using_device, 'tpu', function() end), 1, true)
  end)
end)

describe('chainer.backend array helpers', function()
  it('get_array_module is the tensor module for every argument', function()
    assert.are.equal(T, backend.get_array_module(T.zeros({ 1 })))
    assert.are.equal(T, backend.get_array_module(chainer.Variable(T.zeros({ 1 })), 3))
    assert.are.equal(T, backend.get_array_module())
    assert.are.equal(T, cuda.get_array_module(T.zeros({ 1 })))
  end)

  it('get_device_from_array reads tensors and Variables, and gives the CPU otherwise', function()
    local cpu = chainer.get_device('@numpy')
    assert.are.equal(cpu, backend.get_device_from_array(T.zeros({ 1 })))
    assert.are.equal(cpu, backend.get_device_from_array(chainer.Variable(T.zeros({ 1 }))))
    assert.are.equal(cpu, backend.get_device_from_array(nil))
    assert.are.equal(cpu, backend.get_device_from_array(3))
  end)

  it('copyto copies with broadcasting and casts of the same kind', function()
    local dst = T.zeros({ 2, 3 }, 'float64')
    assert.is_nil(backend.copyto(dst, T.array({ 1, 2, 3 }, 'int32')))
    assert.are.same({ { 1, 2, 3 }, { 1, 2, 3 } }, dst:totable())
    backend.copyto(dst, 7)
    assert.are.same({ { 7, 7, 7 }, { 7, 7, 7 } }, dst:totable())
    local ints = T.zeros({ 2 }, 'int32')
    backend.copyto(ints, T.array({ 5, 6 }, 'int64'))
    assert.are.same({ 5, 6 }, ints:totable())
    assert.matches("copyto: cannot copy float32 into int32 under the 'same_kind' rule",
      err_of(backend.copyto, ints, T.array({ 1.5, 2 }, 'float32')), 1, true)
    assert.matches('copyto: cannot assign a tensor of shape (4,) to one of shape (2, 3)',
      err_of(backend.copyto, dst, T.zeros({ 4 })), 1, true)
    assert.matches('copyto: dst must be a tensor (got a Variable)',
      err_of(backend.copyto, chainer.Variable(dst), dst), 1, true)
    assert.matches('copyto: src must be a tensor or a number (got table)', err_of(backend.copyto, dst, { 1 }), 1, true)
  end)
end)

describe('chainer.backends.cuda transfers', function()
  it('is chainer.cuda', function()
    assert.are.equal(chainer.cuda, cuda)
    assert.are.equal(backend.GpuDevice, cuda.GpuDevice)
  end)

  it('to_cpu passes host data through, tables included', function()
    local x = T.arange(4)
    assert.is_true(rawequal(x, cuda.to_cpu(x)))
    local got = cuda.to_cpu({ x, x })
    assert.is_true(rawequal(x, got[1]) and rawequal(x, got[2]))
    assert.is_nil(cuda.to_cpu(nil))
    assert.matches('to_cpu: stream must be a cuda.Stream or nil (got table)', err_of(cuda.to_cpu, x, {}), 1, true)
  end)

  it('to_gpu says that there is no CUDA device when there is none', function()
    if cuda.available then return end
    assert.matches('to_gpu: no CUDA device is available', err_of(cuda.to_gpu, T.zeros({ 2 })), 1, true)
    assert.matches('to_gpu: no CUDA device is available', err_of(cuda.to_gpu, T.zeros({ 2 }), 0), 1, true)
  end)
end)

describe('chainer.print_runtime_info', function()
  it('writes the versions and the hardware', function()
    local out = {}
    chainer.print_runtime_info({ write = function(_, ...) for _, s in ipairs { ... } do out[#out + 1] = s end end })
    local text = table.concat(out)
    assert.matches('chainlua: ' .. chainer.__version__:gsub('%p', '%%%0') .. '\n', text)
    assert.matches('LuaJIT: ' .. jit.version:gsub('%p', '%%%0'), text)
    assert.matches('\nBLAS: [^\n]+\n', text)
    assert.matches('\nThreads: ' .. chainer.get_num_threads() .. '\n', text)
    assert.matches('\nCUDA: ' .. (cuda.available and '%d+ device' or 'Not Available'), text)
    assert.matches('print_runtime_info: out must be a file or have a write method', err_of(chainer.print_runtime_info, 3),
      1, true)
  end)
end)

describe('devices on a GPU #gpu', function()
  if not cuda.available then
    pending('no CUDA device here')
    return
  end
  it('gives a GpuDevice for every GPU spelling', function()
    local d = chainer.get_device('@cupy:0')
    assert.is_true(chainer.isinstance(d, backend.GpuDevice))
    for _, spec in ipairs { 'cuda:0', 0, '0', d } do assert.are.equal(d, chainer.get_device(spec)) end
    assert.are.equal('@cupy:0', d.name)
    assert.are.equal(T, d.xp)
    assert.are_not.equal(d, chainer.get_device('cpu'))
  end)

  it('sends to the GPU and back', function()
    local d = chainer.get_device('@cupy:0')
    local x = T.arange(6):reshape({ 2, 3 })
    local g = d:send(x)
    assert.are.equal('cuda:0', g.device)
    assert.is_true(rawequal(g, d:send(g)))
    assert.are.equal(d, backend.get_device_from_array(g))
    assert.are.same(x:totable(), chainer.get_device('@numpy'):send(g):totable())
    local v = chainer.Variable(T.ones({ 2 }))
    d:send(v)
    assert.are.equal('cuda:0', v.device)
    local g2 = cuda.to_gpu(x)
    assert.are.equal('cuda:0', g2.device)
    assert.are.same(x:totable(), cuda.to_cpu(g2):totable())
    local dst = T.zeros({ 2, 3 }, 'float64', 'cuda:0')
    backend.copyto(dst, x)
    assert.are.same(x:totable(), dst:to_cpu():totable())
  end)

  it('using_device makes the GPU current and restores the previous one', function()
    local before = chainer.cuda.get_current_device_id()
    chainer.using_device('@cupy:0', function()
      assert.are.equal(0, chainer.cuda.get_current_device_id())
      assert.are.equal(chainer.get_device(0), backend.get_current_device())
    end)
    assert.are.equal(before, chainer.cuda.get_current_device_id())
  end)
end)
