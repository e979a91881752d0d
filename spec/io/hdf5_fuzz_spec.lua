-- Corrupt HDF5 files: 200 truncations and byte flips of a saved model.
-- Loading must raise a Lua error naming the file, or (for a flip in bytes
-- nobody can check: HDF5 has no checksum over raw data, nor over version-0
-- object headers) succeed with tensors no bigger than the file holds.
-- Never a crash, an abort or a hang.
local chainer = require 'chainer'
local L = require 'chainer.links'
local S = chainer.serializers
local T = require 'chainer.tensor'
local H = require 'io.helpers'

describe('HDF5 corruption fuzzing', function()
  it('turns 200 truncations and byte flips of a saved model into errors naming the file', function()
    local good, bad = H.tmp('.h5'), H.tmp('.h5')
    T.random.seed(3)
    local Net = chainer.Chain:extend('FuzzNet')
    function Net:init()
      self.l1 = L.Linear(6, 8)
      self.bn = L.BatchNormalization(8)
      self.l2 = L.Linear(8, 3)
    end
    local model = Net()
    S.save_hdf5(good, model)
    local bytes = H.read_file(good)
    local saved = T.load_hdf5(good)
    local math_random = math.random
    math.randomseed(20240602)
    local errors, loaded, truncations_loaded = 0, 0, 0
    for round = 1, 200 do
      local mutated
      if round % 4 == 0 then
        mutated = bytes:sub(1, math_random(0, #bytes - 1))           -- truncation
      else
        -- the first 2 KiB hold the superblock, group B-trees, heaps and
        -- object headers: aim every other round's flips there
        mutated = bytes
        local lim = round % 2 == 0 and math.min(#bytes, 2048) or #bytes
        for _ = 1, math_random(1, 4) do
          local i = math_random(1, lim)
          local v = (mutated:byte(i) + math_random(1, 255)) % 256      -- flip a byte
          mutated = mutated:sub(1, i - 1) .. string.char(v) .. mutated:sub(i + 1)
        end
      end
      H.write_file(bad, mutated)
      -- both entry points: the tensor reader and the model deserializer
      local ok, res = pcall(T.load_hdf5, bad)
      if ok then
        -- whatever loads is a real tensor no bigger than the file allows
        -- (a damaged shape is caught against the dataset's stored bytes;
        -- uint16/uint32 widen, hence the factor 2)
        for k, v in pairs(res) do
          assert.is_true(T.is_tensor(v), k)
          assert.is_true(v.nbytes <= 2 * #mutated, k)
        end
        loaded = loaded + 1
        if round % 4 == 0 then truncations_loaded = truncations_loaded + 1 end
      else
        assert.is_truthy(tostring(res):find(bad, 1, true), res)
        errors = errors + 1
      end
      local ok2, res2 = pcall(S.load_hdf5, bad, Net())
      if not ok2 then
        assert.is_truthy(tostring(res2):find(bad, 1, true), res2)
      end
    end
    -- a truncated file always fails (HDF5 checks the end-of-file address);
    -- most single-byte flips land in padding, free heap space or raw data
    assert.are.equal(0, truncations_loaded)
    assert.is_true(errors >= 50, 'errors ' .. errors .. ', loaded ' .. loaded)
    -- the reader still works after all those failures (no leaked HDF5 state)
    local back = T.load_hdf5(good)
    assert.are.equal(0, (back['l1/W'] - model.l1.W.array):abs():max():item())
    os.remove(good)
    os.remove(bad)
  end)
end)
