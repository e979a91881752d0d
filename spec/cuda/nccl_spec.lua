-- chainer.cuda.nccl where there is no GPU (CI): every call says why it
-- cannot run, and the arguments are checked before anything is loaded.
-- spec/cuda/multi_gpu_spec.lua (tag gpu) runs the collectives on a GPU.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local nccl = require 'chainer.cuda.nccl'

describe('chainer.cuda.nccl', function()
  local ID = string.rep('\0', 128)

  it('checks its arguments before asking the backend', function()
    assert.has_error(function() nccl.NcclCommunicator(0, ID, 0, 0) end,
      'NcclCommunicator: nranks must be an integer >= 1 (got 0)')
    assert.has_error(function() nccl.NcclCommunicator(2, ID, 2, 0) end,
      'NcclCommunicator: rank 2 of 2 ranks is out of range')
    assert.has_error(function() nccl.NcclCommunicator(2, 'short', 0, 0) end,
      'NcclCommunicator: id must be the 128-byte string of get_unique_id() (got 5 bytes)')
    assert.has_error(function() nccl.NcclCommunicator(2, ID, 0, -1) end,
      'NcclCommunicator: device must be an integer >= 0 (got -1)')
    assert.has_error(function() nccl.init_all({}) end, 'nccl.init_all: expected a list of device ids (got table)')
    assert.has_error(function() nccl.init_all({ 0, 1.5 }) end,
      'nccl.init_all: devices[2] must be an integer >= 0 (got 1.5)')
  end)

  describe('without a GPU', function()
    if cuda.available then
      it('(skipped)', function() pending('a GPU is present: spec/cuda/multi_gpu_spec.lua runs NCCL') end)
      return
    end

    it('reports NCCL unavailable, saying why, and every call fails the same way', function()
      local ok, why = nccl.available()
      assert.is_false(ok)
      assert.matches('nccl version: NCCL runs on GPUs, and the CUDA backend is not available (', why, 1, true)
      assert.has_error(function() nccl.get_version() end)
      local _, err = pcall(nccl.get_unique_id)
      assert.matches('nccl unique id: NCCL runs on GPUs', err, 1, true)
      _, err = pcall(nccl.init_all, { 0, 1 })
      assert.matches('nccl communicators: NCCL runs on GPUs', err, 1, true)
      _, err = pcall(nccl.NcclCommunicator, 2, ID, 1, 0)
      assert.matches('nccl communicator: NCCL runs on GPUs', err, 1, true)
      _, err = pcall(nccl.group, function() end)
      assert.matches('nccl group start: NCCL runs on GPUs', err, 1, true)
    end)

    it('a communicator handle checks its tensors and op first', function()
      -- a stand-in handle: the C side fails before using it, for want of a backend
      local comm = setmetatable({ _h = require('ffi').new('void *[1]', require('ffi').cast('void *', 1)), rank = 0,
        size = 1, device = 0 }, nccl.Communicator)
      local x = T.ones({ 3 }, 'float32')
      assert.has_error(function() comm:all_reduce(x, x, 'mean') end,
        "nccl all_reduce: op must be 'sum', 'prod', 'max', 'min' or 'avg' (got mean)")
      assert.has_error(function() comm:all_reduce({ 1 }) end, 'nccl all_reduce: send must be a tensor (got table)')
      assert.has_error(function() comm:reduce(x, nil, 'sum', -1) end, 'nccl reduce: root must be an integer >= 0 (got -1)')
      local _, err = pcall(comm.bcast, comm, x)
      assert.matches('nccl broadcast: NCCL runs on GPUs', err, 1, true)
      comm._h[0] = nil   -- destroyed
      assert.has_error(function() comm:all_reduce(x) end, 'nccl all_reduce: this communicator has been destroyed')
    end)
  end)
end)
