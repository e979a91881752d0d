-- Specs for chainer.iterators.SerialIterator and ShuffleOrderSampler:
-- Chainer's epoch semantics (values worked out from Chainer's SerialIterator
-- code for a dataset of 10 and batches of 3), serialization, errors.
local chainer = require 'chainer'
local T = chainer.tensor
local I = chainer.iterators
local D = chainer.datasets
local H = require 'spec.dataset.helpers'
local concat = chainer.dataset.concat_examples

local function ten()
  return D.TupleDataset(T.arange(0, 20, 1, 'float32'):reshape(10, 2), T.arange(0, 10, 1, 'int32'))
end

local function close(a, b) return math.abs(a - b) < 1e-12 end

describe('SerialIterator without shuffle', function()
  it('follows Chainer: wrap-around batches, epoch_detail, previous_epoch_detail, is_new_epoch', function()
    local it = I.SerialIterator(ten(), 3, { shuffle = false })
    assert.equal(0, it.epoch)
    assert.equal(0, it.epoch_detail)
    assert.is_nil(it.previous_epoch_detail)
    assert.is_false(it.is_new_epoch)
    local expect = {
      { { 0, 1, 2 }, 0, 0.3, 0.0, false },
      { { 3, 4, 5 }, 0, 0.6, 0.3, false },
      { { 6, 7, 8 }, 0, 0.9, 0.6, false },
      { { 9, 0, 1 }, 1, 1.2, 0.9, true },
      { { 2, 3, 4 }, 1, 1.5, 1.2, false },
      { { 5, 6, 7 }, 1, 1.8, 1.5, false },
      { { 8, 9, 0 }, 2, 2.1, 1.8, true },
    }
    for k, e in ipairs(expect) do
      local b = it:next()
      assert.same(e[1], H.labels(b), 'batch ' .. k)
      assert.equal(e[2], it.epoch, 'epoch ' .. k)
      assert.truthy(close(e[3], it.epoch_detail), 'epoch_detail ' .. k)
      assert.truthy(close(e[4], it.previous_epoch_detail), 'previous_epoch_detail ' .. k)
      assert.equal(e[5], it.is_new_epoch, 'is_new_epoch ' .. k)
      assert.equal(k, it.iteration)
    end
  end)

  it('without repeat: a short last batch, then nil; for-in loops stop', function()
    local it = I.SerialIterator(ten(), 3, { loop = false, shuffle = false })
    local sizes = {}
    for b in it do sizes[#sizes + 1] = #b end
    assert.same({ 3, 3, 3, 1 }, sizes)
    assert.equal(1, it.epoch)
    assert.equal(1, it.epoch_detail)
    assert.is_true(it.is_new_epoch)
    assert.is_nil(it:next())
    -- Chainer's positional form and the ['repeat'] key
    local it2 = I.SerialIterator(ten(), 4, false, false)
    assert.same({ 0, 1, 2, 3 }, H.labels(it2:next()))
    assert.same({ 4, 5, 6, 7 }, H.labels(it2:next()))
    assert.same({ 8, 9 }, H.labels(it2:next()))
    assert.is_nil(it2:next())
    local it3 = I.SerialIterator(ten(), 10, { ['repeat'] = false, shuffle = false })
    assert.equal(10, #it3:next())
    assert.is_nil(it3:next())
  end)

  it('reset() starts over', function()
    local it = I.SerialIterator(ten(), 4, { loop = false, shuffle = false })
    it:next(); it:next(); it:next()
    assert.is_nil(it:next())
    it:reset()
    assert.equal(0, it.epoch)
    assert.is_nil(it.previous_epoch_detail)
    assert.same({ 0, 1, 2, 3 }, H.labels(it:next()))
  end)

  it('handles batches larger than the dataset (several epochs in one batch)', function()
    local it = I.SerialIterator(T.arange(0, 3, 1, 'int32'), 7, { shuffle = false })
    local b = it:next()
    assert.same({ 0, 1, 2, 0, 1, 2, 0 }, H.labels(b))
    assert.equal(2, it.epoch)
    assert.truthy(close(2 + 1 / 3, it.epoch_detail))
    local once = I.SerialIterator(T.arange(0, 3, 1, 'int32'), 7, { loop = false, shuffle = false })
    assert.same({ 0, 1, 2 }, H.labels(once:next()))
    assert.is_nil(once:next())
  end)

  it('works on Lua arrays, tensors and size-1 datasets', function()
    local it = I.SerialIterator({ 'a', 'b', 'c' }, 2, { shuffle = false })
    assert.same({ 'a', 'b' }, it:next())
    assert.same({ 'c', 'a' }, it:next())
    local one = I.SerialIterator(T.array({ 5 }, 'int32'), 1, { shuffle = false })
    assert.same({ 5 }, H.labels(one:next()))
    assert.is_true(one.is_new_epoch)
    assert.same({ 5 }, H.labels(one:next()))
    assert.equal(2, one.epoch)
  end)

  it('an empty dataset: nil at once without repeat, an error with it', function()
    local it = I.SerialIterator({}, 2, { loop = false })
    assert.is_nil(it:next())
    local r = I.SerialIterator({}, 2, { shuffle = false })
    H.errors_with(function() r:next() end, 'empty')
  end)
end)

describe('SerialIterator with shuffle', function()
  it('visits every example once per epoch, in a new order each epoch', function()
    T.random.seed(7)
    local it = I.SerialIterator(ten(), 5)
    local seen1, seen2 = {}, {}
    for _, v in ipairs(H.labels(it:next())) do seen1[#seen1 + 1] = v end
    for _, v in ipairs(H.labels(it:next())) do seen1[#seen1 + 1] = v end
    assert.is_true(it.is_new_epoch)
    for _, v in ipairs(H.labels(it:next())) do seen2[#seen2 + 1] = v end
    for _, v in ipairs(H.labels(it:next())) do seen2[#seen2 + 1] = v end
    local s1, s2 = { unpack(seen1) }, { unpack(seen2) }
    table.sort(s1); table.sort(s2)
    assert.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, s1)
    assert.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, s2)
    assert.are_not.same(seen1, seen2)
  end)

  it('is reproducible: a global seed or the sampler seed fixes the order', function()
    local function run(make)
      local it = make()
      local out = {}
      for _ = 1, 7 do for _, v in ipairs(H.labels(it:next())) do out[#out + 1] = v end end
      return out
    end
    local function seeded() T.random.seed(11) return I.SerialIterator(ten(), 3) end
    assert.same(run(seeded), run(seeded))
    local function own() return I.SerialIterator(ten(), 3, { order_sampler = I.ShuffleOrderSampler(5) }) end
    local a = run(own)
    T.random.uniform(0, 1, { 100 })   -- other draws do not disturb a private stream
    assert.same(a, run(own))
    local b = run(function() return I.SerialIterator(ten(), 3, { order_sampler = I.ShuffleOrderSampler{ seed = 6 } }) end)
    assert.are_not.same(a, b)
  end)

  it('takes a custom order sampler (called at reset and at each epoch end)', function()
    local calls = {}
    local reverse = function(order, pos)
      calls[#calls + 1] = pos
      return T.arange(order.size - 1, -1, -1, 'int64')
    end
    local it = I.SerialIterator(ten(), 4, { order_sampler = reverse })
    assert.same({ 9, 8, 7, 6 }, H.labels(it:next()))
    assert.same({ 5, 4, 3, 2 }, H.labels(it:next()))
    assert.same({ 1, 0, 9, 8 }, H.labels(it:next()))
    assert.same({ 0, 8 }, calls)
    H.errors_with(function()
      I.SerialIterator(ten(), 4, { order_sampler = function() return T.arange(0, 3, 1, 'int64') end })
    end, 'order_sampler', '3', '10')
  end)
end)

describe('SerialIterator.serialize', function()
  it('saves Chainer keys and a resumed iterator continues exactly', function()
    T.random.seed(3)
    local a = I.SerialIterator(ten(), 3)
    for _ = 1, 5 do a:next() end
    local store = {}
    a:serialize(H.dict_serializer(store))
    for _, k in ipairs({ 'current_position', 'epoch', 'is_new_epoch', 'order', 'previous_epoch_detail' }) do
      assert.is_not_nil(store[k], k)
    end
    assert.equal(5, store.current_position)
    assert.equal(1, store.epoch)
    assert.truthy(close(1.2, store.previous_epoch_detail))
    T.random.seed(99)          -- a different process state
    local b = I.SerialIterator(ten(), 3)
    b:serialize(H.dict_deserializer(store))
    assert.equal(a.epoch, b.epoch)
    assert.truthy(close(a.epoch_detail, b.epoch_detail))
    assert.truthy(close(a.previous_epoch_detail, b.previous_epoch_detail))
    for k = 1, 12 do   -- across two more epoch ends: the sampler state came along
      assert.same(H.labels(a:next()), H.labels(b:next()), 'batch ' .. k)
      assert.equal(a.is_new_epoch, b.is_new_epoch)
    end
  end)

  it('loads a file without previous_epoch_detail (older Chainer) by guessing it', function()
    local a = I.SerialIterator(ten(), 3, { shuffle = false })
    a:next(); a:next()
    local store = {}
    a:serialize(H.dict_serializer(store))
    store.previous_epoch_detail = nil
    local b = I.SerialIterator(ten(), 3, { shuffle = false })
    b:serialize(H.dict_deserializer(store))
    assert.truthy(close(0.3, b.previous_epoch_detail))
    assert.same({ 6, 7, 8 }, H.labels(b:next()))
  end)
end)

describe('SerialIterator errors', function()
  it('names the argument', function()
    H.errors_with(function() I.SerialIterator(ten(), 0) end, 'SerialIterator', 'batch_size')
    H.errors_with(function() I.SerialIterator(ten(), 2.5) end, 'batch_size')
    H.errors_with(function() I.SerialIterator(ten(), 2, { loop = 'yes' }) end, 'loop')
    H.errors_with(function() I.SerialIterator(ten(), 2, { shuffle = 1 }) end, 'shuffle')
    H.errors_with(function() I.SerialIterator(ten(), 2, { shuffle = true, order_sampler = I.ShuffleOrderSampler() }) end,
      'order_sampler')
    H.errors_with(function() I.SerialIterator(42, 2) end, 'SerialIterator', 'number')
    H.errors_with(function() I.ShuffleOrderSampler(-1) end, 'seed')
  end)
end)

describe('concat_examples with iterator batches', function()
  it('reuses the gathered arrays once, then stacks afresh (same values)', function()
    local ds = ten()
    local it = I.SerialIterator(ds, 4, { shuffle = false })
    local b = it:next()
    local xs = concat(b)
    assert.same({ 4, 2 }, xs[1].shape)
    assert.same({ { 0, 1 }, { 2, 3 }, { 4, 5 }, { 6, 7 } }, xs[1]:totable())
    assert.same({ 0, 1, 2, 3 }, xs[2]:totable())
    assert.equal('int32', xs[2].dtype)
    local again = concat(b)
    assert.same(xs[1]:totable(), again[1]:totable())
    -- a batch changed by the caller is stacked from its examples
    local b2 = it:next()
    b2[#b2 + 1] = b[1]
    assert.same({ 4, 5, 6, 7, 0 }, concat(b2)[2]:totable())
  end)
end)
