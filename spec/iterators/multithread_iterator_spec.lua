-- Specs for chainer.iterators.MultithreadIterator:
-- the same batches as SerialIterator for a seed, prefetching on worker
-- threads for tensor-backed datasets, early exit, serialize, errors.
local chainer = require 'chainer'
local T = chainer.tensor
local I = chainer.iterators
local D = chainer.datasets
local H = require 'spec.dataset.helpers'
local concat = chainer.dataset.concat_examples

local function data(n)
  local x = T.arange(0, n * 3, 1, 'float32'):reshape(n, 3)
  local t = T.arange(0, n, 1, 'int32')
  return D.TupleDataset(x, t)
end

-- Runs two iterators side by side: the same x and t in every batch.
local function same_run(make_a, make_b, steps)
  return H.same_run(make_a, make_b, steps, function(ba, bb, k)
    local xa, xb = concat(ba), concat(bb)
    assert.same(xa[1]:totable(), xb[1]:totable(), 'x of batch ' .. k)
    assert.same(xa[2]:totable(), xb[2]:totable(), 't of batch ' .. k)
  end)
end

describe('MultithreadIterator', function()
  it('prefetches tensor-backed datasets and yields exactly SerialIterator batches', function()
    local ds = data(23)
    for _, nt in ipairs({ 1, 2, 3 }) do
      local _, b = same_run(function() return I.SerialIterator(ds, 5) end,
        function() return I.MultithreadIterator(ds, 5, { n_threads = nt }) end, 20)
      assert.is_true(b:is_prefetching())
      b:finalize()
    end
  end)

  it('matches without repeat (short last batch, then nil) and for SubDatasets and DictDatasets', function()
    local ds = data(11)
    same_run(function() return I.SerialIterator(ds, 4, { loop = false }) end,
      function() return I.MultithreadIterator(ds, 4, { loop = false }) end, 6)
    local train = D.split_dataset_random(data(40), 25, 3)
    local _, b = same_run(function() return I.SerialIterator(train, 6) end,
      function() return I.MultithreadIterator(train, 6, { n_threads = 2, n_prefetch = 3 }) end, 12)
    assert.is_true(b:is_prefetching())
    local dd = D.DictDataset{ x = T.arange(0, 12, 1, 'float64'):reshape(6, 2), y = T.arange(0, 6, 1, 'int64') }
    local m = I.MultithreadIterator(dd, 4, { shuffle = false })
    local batch = m:next()
    assert.same({ 0, 1 }, batch[1].x:totable())
    local arrays = concat(batch)
    assert.same({ 0, 1, 2, 3 }, arrays.y:totable())
    assert.same({ 4, 2 }, arrays.x.shape)
  end)

  it('handles non-contiguous tensors and any dtype', function()
    local base = T.arange(0, 24, 1, 'int16'):reshape(4, 6)
    local ds = D.TupleDataset(base:transpose(), T.arange(0, 6, 1, 'uint8'))   -- rows not contiguous
    local m = I.MultithreadIterator(ds, 2, { shuffle = false, loop = false })
    local arrays = concat(m:next())
    assert.same({ { 0, 6, 12, 18 }, { 1, 7, 13, 19 } }, arrays[1]:totable())
    assert.equal('int16', arrays[1].dtype)
    assert.equal('uint8', arrays[2].dtype)
  end)

  it('reads other datasets on the calling thread, with the same order', function()
    local list = {}
    for i = 1, 9 do list[i] = { T.array({ i }, 'float32'), i } end
    local tr = D.TransformDataset(list, function(ex) return ex end)
    local a, b = same_run(function() return I.SerialIterator(tr, 4) end,
      function() return I.MultithreadIterator(tr, 4, { n_threads = 2 }) end, 8)
    assert.is_false(b:is_prefetching())
  end)

  it('can be abandoned mid-epoch, finalized twice, reset and garbage collected', function()
    local ds = data(50)
    for _ = 1, 5 do
      local m = I.MultithreadIterator(ds, 7, { n_threads = 2, n_prefetch = 6 })
      m:next()
      m = nil
      collectgarbage()
    end
    local m = I.MultithreadIterator(ds, 7, { shuffle = false })
    m:next(); m:next()
    m:finalize()
    m:finalize()
    m:reset()
    assert.same({ 0, 1, 2, 3, 4, 5, 6 }, H.labels(m:next()))   -- works again after finalize
    for b in m do if m.epoch >= 2 then break end end
    assert.equal(2, m.epoch)
  end)

  it('serializes the state of the batches handed out, not the prefetched ones', function()
    local ds = data(17)
    T.random.seed(8)
    local a = I.MultithreadIterator(ds, 5, { n_prefetch = 4 })
    for _ = 1, 6 do a:next() end
    local store = {}
    a:serialize(H.dict_serializer(store))
    assert.equal(a.current_position, store.current_position)
    assert.equal(a.epoch, store.epoch)
    T.random.seed(1)
    local b = I.MultithreadIterator(ds, 5)
    b:next()
    b:serialize(H.dict_deserializer(store))
    local c = I.SerialIterator(ds, 5)
    c:serialize(H.dict_deserializer(store))
    for k = 1, 10 do
      local la, lb, lc = H.labels(a:next()), H.labels(b:next()), H.labels(c:next())
      assert.same(la, lb, 'batch ' .. k)
      assert.same(la, lc, 'batch ' .. k)
    end
  end)

  it('accepts n_processes for n_threads', function()
    local m = I.MultithreadIterator(data(6), 3, { n_processes = 2, shuffle = false })
    assert.same({ 0, 1, 2 }, H.labels(m:next()))
    assert.equal(2, m.n_threads)
  end)

  it('rejects bad options', function()
    H.errors_with(function() I.MultithreadIterator(data(4), 2, { n_threads = 0 }) end, 'MultithreadIterator',
      'n_threads')
    H.errors_with(function() I.MultithreadIterator(data(4), 2, { n_prefetch = -1 }) end, 'n_prefetch')
    H.errors_with(function() I.MultithreadIterator(data(4), -2) end, 'batch_size')
  end)
end)

describe('runtime batch loader (ch_gather_rows / ch_loader_*)', function()
  it('gathers rows and checks indices', function()
    local gather = require 'chainer.dataset.gather'
    local x = T.arange(0, 12, 1, 'float32'):reshape(4, 3)
    local out = gather.gather({ x, T.arange(0, 4, 1, 'int64') }, T.array({ 3, 0, 3 }, 'int64'))
    assert.same({ { 9, 10, 11 }, { 0, 1, 2 }, { 9, 10, 11 } }, out[1]:totable())
    assert.same({ 3, 0, 3 }, out[2]:totable())
    H.errors_with(function() gather.gather({ x }, T.array({ 4 }, 'int64')) end, 'gather_rows', 'out of range')
    H.errors_with(function() gather.gather({ x, T.arange(0, 3, 1, 'int64') }, T.array({ 0 }, 'int64')) end,
      'rows')
  end)
end)
