-- Specs for chainer.iterators.MultiprocessIterator: forked workers run
-- get_example; the batches are SerialIterator's for the same seed; random
-- transforms get a distinct, repeatable stream per worker; serialize,
-- reset, finalize (no zombies); faults (a raising, a dying worker, the
-- parent killed); options.
local chainer = require 'chainer'
local ffi = require 'ffi'
local libc = require 'chainer._libc'
local T = chainer.tensor
local I = chainer.iterators
local D = chainer.datasets
local H = require 'spec.dataset.helpers'

-- A Lua dataset (runs get_example in the workers): {x * 10, label, tag}.
local function lua_dataset(n, transform)
  local x = T.arange(0, n * 3, 1, 'float32'):reshape(n, 3)
  local base = D.TupleDataset(x, T.arange(0, n, 1, 'int32'))
  return D.TransformDataset(base, transform or function(ex)
    return { ex[1] * 10, ex[2]:item(), 'row' .. ex[2]:item() }
  end)
end

local function labels(batch)
  local out = {}
  for i, ex in ipairs(batch) do out[i] = ex[2] end
  return out
end

-- Runs a SerialIterator and a MultiprocessIterator side by side: the same
-- examples ({x, label, tag}) in every batch.
local function same_run(ds, batch_size, opts, steps)
  return H.same_run(function() return I.SerialIterator(ds, batch_size, { loop = opts.loop, shuffle = opts.shuffle }) end,
    function() return I.MultiprocessIterator(ds, batch_size, opts) end, steps,
    function(ba, bb, k)
      assert.same(labels(ba), labels(bb), 'batch ' .. k)
      for j = 1, #ba do
        assert.same(ba[j][1]:totable(), bb[j][1]:totable())
        assert.equal(ba[j][3], bb[j][3])
      end
    end)
end

-- Whether process pid is gone (a zombie counts as there: it was not reaped).
local function gone(pid)
  local f = io.open('/proc/' .. pid .. '/stat')
  if f == nil then return true end
  f:close()
  return false
end

local function state_of(pid)
  local f = io.open('/proc/' .. pid .. '/stat')
  if f == nil then return nil end
  local s = f:read('*a'); f:close()
  return s:match('^%d+ %b() (%a)')
end

local function sleep_ms(ms) libc.C.poll(nil, 0, ms) end

describe('MultiprocessIterator', function()
  it('yields exactly SerialIterator batches and epoch fields, for any worker count', function()
    local ds = lua_dataset(23)
    for _, np in ipairs({ 1, 2, 3 }) do
      local _, b = same_run(ds, 5, { n_processes = np }, 14)
      assert.equal(np, #b:worker_pids())
      b:finalize()
    end
    -- reset after the look-ahead crossed into the next epoch: the same new order as SerialIterator's
    T.random.seed(9)
    local a = I.SerialIterator(ds, 5)
    T.random.seed(9)
    local c = I.MultiprocessIterator(ds, 5, { n_processes = 2, n_prefetch = 3 })
    for _ = 1, 3 do a:next(); c:next() end
    a:reset(); c:reset()
    for k = 1, 6 do assert.same(labels(a:next()), labels(c:next()), 'batch ' .. k .. ' after reset') end
    c:finalize()
    -- batches larger than the dataset, n_prefetch > 1, no shuffle, no repeat
    local _, b = same_run(lua_dataset(4), 9, { n_processes = 2, n_prefetch = 3 }, 5)
    b:finalize()
    _, b = same_run(ds, 4, { n_processes = 2, shuffle = false, loop = false }, 8)
    assert.is_nil(b:next())
    assert.equal(1, b.epoch)
    b:finalize()
  end)

  it('hands back tensors of any dtype, numbers, strings, int64s and nested tables', function()
    local list = {}
    for i = 1, 6 do
      list[i] = { T.arange(0, 4, 1, 'int16'):reshape(2, 2) + i, i + 0.5, { name = 'n' .. i, flag = i % 2 == 0,
        deep = { 7LL * i } }, T.array({ i }, 'float64'):transpose() }
    end
    local m = I.MultiprocessIterator(list, 6, { n_processes = 2, shuffle = false, loop = false })
    local batch = m:next()
    for i = 1, 6 do
      local ex = batch[i]
      assert.equal('int16', ex[1].dtype)
      assert.same({ { i, 1 + i }, { 2 + i, 3 + i } }, ex[1]:totable())
      assert.equal(i + 0.5, ex[2])
      assert.same({ name = 'n' .. i, flag = i % 2 == 0 }, { name = ex[3].name, flag = ex[3].flag })
      assert.is_true(ex[3].deep[1] == 7LL * i)
      assert.same({ i }, ex[4]:totable())
    end
    m:finalize()
  end)

  it('stacks examples of tensors into the batch arrays (rows), and falls back when layouts differ', function()
    local x = T.arange(0, 20 * 6, 1, 'float32'):reshape(20, 2, 3)
    local base = D.TupleDataset(x, T.arange(0, 20, 1, 'int32'))
    local crop = D.TransformDataset(base, function(ex) return { ex[1]:slice({}, { 1, 3 }):flip(1), ex[2] } end)
    local concat = chainer.dataset.concat_examples
    T.random.seed(4)
    local a = I.SerialIterator(crop, 6)
    T.random.seed(4)
    local b = I.MultiprocessIterator(crop, 6, { n_processes = 2, n_prefetch = 2 })
    for k = 1, 7 do
      local xa, xb = concat(a:next()), concat(b:next())
      assert.same(xa[1]:totable(), xb[1]:totable(), 'x of batch ' .. k)
      assert.same(xa[2]:totable(), xb[2]:totable(), 't of batch ' .. k)
      assert.equal('int32', xb[2].dtype)
    end
    b:finalize()
    -- dicts of tensors; shapes that differ between examples; a tiny shared_mem
    local dict = D.TransformDataset(T.arange(0, 8, 1, 'int64'), function(i)
      local n = i:item()
      return { v = T.full({ 1 + n % 2 }, n, 'float64'), w = T.array({ n, -n }, 'int64') }
    end)
    for _, opts in ipairs({ { n_processes = 2, shuffle = false }, { n_processes = 2, shuffle = false, shared_mem = 8 } }) do
      local m = I.MultiprocessIterator(dict, 4, opts)
      for round = 0, 1 do
        local batch = m:next()
        for j = 1, 4 do
          local n = round * 4 + j - 1
          assert.same(n % 2 == 0 and { n } or { n, n }, batch[j].v:totable())
          assert.same({ n, -n }, batch[j].w:totable())
        end
      end
      m:finalize()
    end
    local same = D.TransformDataset(T.arange(0, 4, 1, 'int64'), function(i) return { w = T.full({ 2 }, i:item()) } end)
    local m = I.MultiprocessIterator(same, 4, { n_processes = 2, shuffle = false })
    assert.same({ { 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 3 } }, concat(m:next()).w:totable())
    m:finalize()
  end)

  it('gives each worker its own random stream, the same in every run with the same seed', function()
    local noisy = D.TransformDataset(T.arange(0, 40, 1, 'int64'), function(i)
      return { T.random.uniform(0, 1, { 1 }):item(), i:item(), math.random() }
    end)
    local function run()
      T.random.seed(5)
      local m = I.MultiprocessIterator(noisy, 8, { n_processes = 2, shuffle = false })
      local draws = {}
      for _ = 1, 3 do
        for _, ex in ipairs(m:next()) do draws[#draws + 1] = { ex[1], ex[3] } end
      end
      m:finalize()
      return draws
    end
    local first, second = run(), run()
    assert.same(first, second)
    -- chunks of max(8 // 2 // 2, 1) = 2 examples: 1-2 from worker 1, 3-4 from worker 2
    assert.are_not.equal(first[1][1], first[3][1])
    assert.are_not.equal(first[1][2], first[3][2])
    T.random.seed(6)
    local other = I.MultiprocessIterator(noisy, 8, { n_processes = 2, shuffle = false })
    assert.are_not.equal(first[1][1], other:next()[1][1])
    other:finalize()
  end)

  it('serializes the state of the batches handed out (Chainer keys) and resumes the same batches', function()
    local ds = lua_dataset(17)
    T.random.seed(8)
    local a = I.MultiprocessIterator(ds, 5, { n_processes = 2, n_prefetch = 3 })
    for _ = 1, 6 do a:next() end
    local store = {}
    a:serialize(H.dict_serializer(store))
    for _, k in ipairs({ 'current_position', 'epoch', 'is_new_epoch', 'order', 'previous_epoch_detail' }) do
      assert.is_not_nil(store[k], k)
    end
    assert.equal(a.current_position, store.current_position)
    T.random.seed(1)
    local b = I.MultiprocessIterator(ds, 5, { n_processes = 2 })
    b:next()
    b:serialize(H.dict_deserializer(store))
    assert.same({}, b:worker_pids())   -- a load stops the workers; next() starts fresh ones
    local c = I.SerialIterator(ds, 5)
    c:serialize(H.dict_deserializer(store))
    for k = 1, 8 do
      local la, lb, lc = labels(a:next()), labels(b:next()), labels(c:next())
      assert.same(la, lb, 'batch ' .. k)
      assert.same(la, lc, 'batch ' .. k)
      assert.equal(a.epoch_detail, b.epoch_detail)
    end
    a:finalize(); b:finalize()
  end)

  it('reset starts over; finalize reaps every worker (no zombies); a finalized iterator starts again', function()
    local m = I.MultiprocessIterator(lua_dataset(10), 3, { n_processes = 2, shuffle = false })
    assert.same({}, m:worker_pids())   -- workers start on the first next()
    m:next(); m:next()
    local pids = m:worker_pids()
    assert.equal(2, #pids)
    m:reset()
    for _, pid in ipairs(pids) do assert.is_true(gone(pid), 'worker ' .. pid .. ' after reset') end
    assert.same({ 0, 1, 2 }, labels(m:next()))
    assert.equal(1, m.iteration)
    pids = m:worker_pids()
    m:finalize()
    m:finalize()
    for _, pid in ipairs(pids) do assert.is_true(gone(pid), 'worker ' .. pid .. ' after finalize') end
    assert.same({ 3, 4, 5 }, labels(m:next()))
    -- abandoned iterators are stopped by the garbage collector
    local m2 = I.MultiprocessIterator(lua_dataset(10), 3, { n_processes = 2 })
    m2:next()
    pids = m2:worker_pids()
    m2 = nil
    collectgarbage(); collectgarbage()
    for _, pid in ipairs(pids) do assert.is_true(gone(pid), 'worker ' .. pid .. ' after collection') end
    m:finalize()
  end)

  it('raises a worker\'s get_example error in the parent with the index; the batch is retried after', function()
    local broken = { on = true }
    local ds = lua_dataset(12, function(ex)
      if broken.on and ex[2]:item() == 7 then error('cannot decode row 7') end
      return { ex[1], ex[2]:item(), '' }
    end)
    local m = I.MultiprocessIterator(ds, 4, { n_processes = 2, shuffle = false })
    assert.same({ 0, 1, 2, 3 }, labels(m:next()))
    local err = H.errors_with(function() m:next() end, 'MultiprocessIterator', 'worker process', 'example 8',
      'cannot decode row 7')
    assert.is_nil(err:find('traceback', 1, true))
    assert.equal(1, m.iteration)            -- the failed batch was not handed out
    assert.equal(4, m.current_position)
    broken.on = false                       -- fresh workers are forked from this state
    assert.same({ 4, 5, 6, 7 }, labels(m:next()))
    assert.same({ 8, 9, 10, 11 }, labels(m:next()))
    m:finalize()
    -- values a worker cannot hand back
    local bad = D.TransformDataset(T.arange(0, 4, 1, 'int64'), function(i) return { i, print } end)
    local b = I.MultiprocessIterator(bad, 2, { n_processes = 1 })
    H.errors_with(function() b:next() end, 'example', '[2] is a function')
    b:finalize()
  end)

  it('reports a worker that dies (kill -9, exit) with its pid, signal and examples, and recovers', function()
    local ds = lua_dataset(12, function(ex)
      local i = ex[2]:item()
      if i == 5 then libc.C.kill(libc.getpid(), 9) end
      if i == 10 then os.exit(3) end
      return { ex[1], i, '' }
    end)
    local m = I.MultiprocessIterator(ds, 4, { n_processes = 2, shuffle = false })
    m:next()
    local pids = m:worker_pids()
    H.errors_with(function() m:next() end, 'worker process', 'was killed by signal 9 (SIGKILL)',
      'while loading example', '6')
    for _, pid in ipairs(pids) do assert.is_true(gone(pid), 'worker ' .. pid) end
    assert.equal(1, m.iteration)
    H.errors_with(function() m:next() end, 'worker process', 'was killed by signal 9')
    m:finalize()
    local e = I.MultiprocessIterator(ds, 4, { n_processes = 2, shuffle = false })
    e:next(); e:serialize(H.dict_deserializer({ current_position = 8, epoch = 0, is_new_epoch = false,
      previous_epoch_detail = 4 / 12 }))
    -- under ASan, LeakSanitizer's check at the worker's exit replaces its code
    local code = require('helpers').under_asan() and 'exited with code' or 'exited with code 3'
    H.errors_with(function() e:next() end, 'worker process 1', code, 'example 11')
    e:finalize()
  end)

  it('leaves no worker behind when the parent process is killed', function()
    local script = [[
      package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path
      local chainer = require 'chainer'
      local ds = chainer.datasets.TransformDataset(chainer.tensor.arange(0, 100, 1, 'int64'),
        function(i) return i:item() end)
      local m = chainer.iterators.MultiprocessIterator(ds, 10, {n_processes = 2})
      m:next()
      io.write(table.concat(m:worker_pids(), ' '), '\n'); io.flush()
      require('chainer._libc').C.kill(require('chainer._libc').getpid(), 9)
    ]]
    local path = os.tmpname()
    local f = assert(io.open(path, 'w')); f:write(script); f:close()
    local p = io.popen(require('helpers').lua_interpreter() .. ' ' .. path .. ' 2>&1')
    local out = p:read('*a')
    p:close()
    os.remove(path)
    local pids = {}
    for pid in out:gmatch('%d+') do pids[#pids + 1] = tonumber(pid) end
    assert.equal(2, #pids, out)
    for _, pid in ipairs(pids) do
      for _ = 1, 100 do     -- PR_SET_PDEATHSIG kills them at once; allow 5 s for a busy machine
        local st = state_of(pid)
        if st == nil or st == 'Z' then break end
        sleep_ms(50)
      end
      local st = state_of(pid)
      assert.is_true(st == nil or st == 'Z', 'worker ' .. pid .. ' still running (' .. tostring(st) .. ')')
    end
  end)

  it('replaces workers after maxtasksperchild examples and sends big examples past a small shared_mem', function()
    local _, b = same_run(lua_dataset(23), 6, { n_processes = 2, maxtasksperchild = 4, n_prefetch = 2 }, 9)
    b:finalize()
    local big = D.TransformDataset(T.arange(0, 8, 1, 'int64'), function(i)
      return { T.full({ 50, 20 }, i:item(), 'float64'), i:item() }
    end)
    local m = I.MultiprocessIterator(big, 4, { n_processes = 2, shared_mem = 64, shuffle = false })
    for round = 0, 1 do
      local batch = m:next()
      for j = 1, 4 do
        assert.equal(round * 4 + j - 1, batch[j][2])
        assert.equal((round * 4 + j - 1) * 1000, batch[j][1]:sum():item())
      end
    end
    m:finalize()
  end)

  it('warns about a stalled dataset after dataset_timeout seconds and keeps waiting', function()
    local slow = D.TransformDataset(T.arange(0, 2, 1, 'int64'), function(i)
      if i:item() == 0 then sleep_ms(500) end
      return i:item()
    end)
    local captured = {}
    local real = io.stderr
    io.stderr = { write = function(_, s) captured[#captured + 1] = s end, flush = function() end }
    local ok, batch = pcall(function()
      local m = I.MultiprocessIterator(slow, 2, { n_processes = 1, shuffle = false, dataset_timeout = 0.1 })
      local b = m:next()
      m:finalize()
      return b
    end)
    io.stderr = real
    assert.is_true(ok, tostring(batch))
    assert.same({ 0, 1 }, batch)
    local text = table.concat(captured)
    assert.truthy(text:find('stalled dataset', 1, true), text)
  end)

  it('takes Chainer\'s positional arguments and rejects bad options', function()
    local ds = lua_dataset(6)
    local m = I.MultiprocessIterator(ds, 3, false, false, 2, 2)
    assert.same({ 0, 1, 2 }, labels(m:next()))
    assert.equal(2, m.n_processes)
    assert.equal(2, m.n_prefetch)
    m:finalize()
    local d = I.MultiprocessIterator(ds, 3)
    assert.equal(1, d.n_prefetch)
    assert.equal(30, d.dataset_timeout)
    assert.is_true(d.n_processes >= 1)
    H.errors_with(function() I.MultiprocessIterator(ds, 2, { n_processes = 0 }) end, 'MultiprocessIterator',
      'n_processes', 'positive integer')
    H.errors_with(function() I.MultiprocessIterator(ds, 2, { n_prefetch = 1.5 }) end, 'n_prefetch')
    H.errors_with(function() I.MultiprocessIterator(ds, 2, { shared_mem = -1 }) end, 'shared_mem')
    H.errors_with(function() I.MultiprocessIterator(ds, 2, { dataset_timeout = 'soon' }) end, 'dataset_timeout')
    H.errors_with(function() I.MultiprocessIterator(ds, 2, { maxtasksperchild = 0 }) end, 'maxtasksperchild')
    H.errors_with(function() I.MultiprocessIterator(ds, 2, { n_threads = 2 }) end, "unknown option 'n_threads'")
    H.errors_with(function() I.MultiprocessIterator(ds, 0) end, 'batch_size')
    H.errors_with(function() I.MultiprocessIterator(ds, 2, { shuffle = true, order_sampler = function() end }) end,
      'order_sampler')
  end)
end)
