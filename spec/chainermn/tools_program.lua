-- The second program chainermn_spec.lua starts alone and under
-- `mpirun -np 2`: the double-buffering optimizer, the multi-node and
-- synchronized iterators, GenericMultiNodeEvaluator, ObservationAggregator,
-- MultiNodeEarlyStoppingTrigger, create_mnbn_model and
-- create_multi_node_n_step_rnn.  Output as ranks_program.lua's:
--   check <name> rank <r> ok | FAIL <message>
local S = require 'spec.chainermn.program_setup'
local chainer, chainermn, T, L, F = S.chainer, S.chainermn, S.T, S.L, S.F
local comm, rank, size = S.comm, S.rank, S.size
local check, expect, max_diff, mlp = S.check, S.expect, S.max_diff, S.mlp

-- The largest difference between two models' parameters (field 'array',
-- the default) or gradients ('grad'), matched by name.
local function worst_difference(a, b, field)
  field = field or 'array'
  local qs, worst = {}, 0
  for name, q in b:namedparams() do qs[name] = q end
  for name, p in a:namedparams() do worst = math.max(worst, max_diff(p[field], qs[name][field])) end
  return worst
end

-- Double buffering, by its definition: each rank takes half of every batch;
-- update k applies the mean gradient of update k - 1 (computed at the
-- parameters before update k - 1 was applied), and the first update after
-- the broadcast applies nothing.  The reference is one process that keeps
-- the whole batch's gradient for one update.
local function double_buffering_check(dtype, tol)
  local batch, steps = 8, 6
  local model = mlp(200 + rank, dtype)
  local reference = mlp(200, dtype)
  local opt = chainermn.create_multi_node_optimizer(chainer.optimizers.MomentumSGD({ lr = 0.1 }), comm,
    { double_buffering = true })
  opt:setup(model)
  local ref_opt = chainer.optimizers.MomentumSGD({ lr = 0.1 })
  ref_opt:setup(reference)
  local function loss_of(m, x, t) return F.softmax_cross_entropy(m(x), t) end

  opt:update()                                -- the broadcast
  expect(worst_difference(model, reference) == 0, 'the broadcast did not give rank 0 parameters')
  T.random.seed(7)
  local per_rank = batch / size
  local held                                  -- the reference's gradients of the previous step
  for _ = 1, steps do
    local x = T.random.normal(0, 1, { batch, 5 }):astype(dtype)
    local t = T.random.randint(0, 3, { batch }):astype('int32')
    local lo = rank * per_rank
    opt:update(loss_of, model, x:slice({ lo, lo + per_rank }), t:slice({ lo, lo + per_rank }))
    reference:cleargrads()
    loss_of(reference, x, t):backward()
    local now = {}
    for name, p in reference:namedparams() do now[name] = p.grad:copy() end
    if held then
      for name, p in reference:namedparams() do p.grad = held[name] end
      ref_opt:update()
    end
    held = now
  end
  expect(opt.t == steps - 1, 't = ' .. opt.t .. ' (expected ' .. (steps - 1) .. ')')
  -- backward wrote into the model's gradient bucket (chainer/_grad_bucket.lua)
  for name, p in model:namedparams() do
    expect(p.grad ~= nil and p.grad == rawget(p, '_grad_slot'), name .. ': its gradient is not its bucket slot')
  end
  local worst = worst_difference(model, reference)
  expect(worst <= tol, dtype .. ': parameters differ from the delayed one-process run by ' .. worst)
  expect(max_diff(model[1].W.array, mlp(200, dtype)[1].W.array) > 1e-3, 'the parameters did not move')
  -- without the delay the trajectory differs: the check can fail
  local undelayed = mlp(200, dtype)
  local plain = chainer.optimizers.MomentumSGD({ lr = 0.1 })
  plain:setup(undelayed)
  T.random.seed(7)
  for _ = 1, steps - 1 do
    local x = T.random.normal(0, 1, { batch, 5 }):astype(dtype)
    local t = T.random.randint(0, 3, { batch }):astype('int32')
    plain:update(loss_of, undelayed, x, t)
  end
  expect(worst_difference(model, undelayed) > 1e-3, 'the delayed and undelayed runs agree')
  opt:wait()
end

check('double buffering float64', function() double_buffering_check('float64', 1e-10) end)
check('double buffering float32', function() double_buffering_check('float32', 1e-5) end)

check('double buffering refusals', function()
  local function err(...)
    local ok, e = pcall(chainermn.create_multi_node_optimizer, ...)
    expect(not ok, 'no error')
    return e
  end
  local sgd = chainer.optimizers.SGD()
  local e = err(sgd, comm, { double_buffering = 1 })
  expect(e:find('create_multi_node_optimizer: double_buffering must be a boolean (got number)', 1, true), e)
  e = err(sgd, { multi_node_mean_grad = function() end }, { double_buffering = true })
  expect(e:find('create_multi_node_optimizer: This communicator does not support double buffering.', 1, true), e)
  -- different models on the ranks: every rank raises in the exchange
  local m = chainer.Sequential(L.Linear(2, rank == size - 1 and 3 or 2))
  local opt = chainermn.create_multi_node_optimizer(chainer.optimizers.SGD(), comm, { double_buffering = true })
  opt:setup(m)
  local ok
  ok, e = pcall(opt.update, opt)            -- the broadcast compares the layouts
  if size > 1 then
    expect(not ok and e:find('bcast_data: the ranks passed different arguments', 1, true), tostring(e))
  else
    expect(ok, tostring(e))
  end
  expect(comm:allreduce_obj(1) == size, 'out of step after the refusals')
end)

-- The batches of an iterator until it ends (a non-repeating one) or n batches.
local function batches(it, n)
  local out = {}
  while not n or #out < n do
    local b = it:next()
    if b == nil then break end
    out[#out + 1] = b
  end
  return out
end

-- A batch of TupleDataset examples as text: every value and dtype.
local function describe(batch)
  local parts = {}
  for i, ex in ipairs(batch) do
    parts[i] = string.format('(%s %s, %s %s)', tostring(ex[1]:tolist()[1]), ex[1].dtype, tostring(ex[2]:item()),
      ex[2].dtype)
  end
  return table.concat(parts, ' ')
end

check('multi node iterator', function()
  -- the master is the last rank; only it has the dataset (the examples
  -- i * 10 with label i); the others pass nil
  local master = size - 1
  local function dataset()
    local x = T.arange(0, 7, 1, 'float64'):reshape({ 7, 1 }) * 10
    return chainer.datasets.TupleDataset(x, T.arange(0, 7, 1, 'int32'))
  end
  local function serial(loop)
    T.random.seed(3)
    return chainer.iterators.SerialIterator(dataset(), 3, { loop = loop, shuffle = true })
  end
  local it = chainermn.iterators.create_multi_node_iterator(rank == master and serial(false) or nil, comm, master)
  local reference = serial(false)            -- what the master's iterator gives, made here too
  expect(it.dataset_size == 7 and it.batch_size == 3 and it.epoch == 0, 'fields before the first batch')
  local got, want = batches(it), batches(reference)
  expect(#got == 3 and #want == 3, #got .. ' batches')
  for i = 1, 3 do
    expect(describe(got[i]) == describe(want[i]), 'batch ' .. i .. ': ' .. describe(got[i]) .. ' vs ' ..
      describe(want[i]))
  end
  expect(it.epoch == 1 and it.is_new_epoch == true and it.epoch_detail == 1 and it.iteration == 3,
    string.format('after the epoch: epoch %s detail %s new %s', it.epoch, it.epoch_detail, tostring(it.is_new_epoch)))
  it:reset()
  expect(it.epoch == 0 and it.iteration == 0, 'reset')
  expect(#batches(it) == 3, 'after reset')
  -- serialize: a repeating iterator saved after 2 batches and loaded after 4
  -- gives batches 3 and 4 again, on every rank
  it = chainermn.iterators.create_multi_node_iterator(rank == master and serial(true) or nil, comm, master)
  batches(it, 2)
  local file = os.tmpname()
  chainer.serializers.save_npz(file, it)
  local later = batches(it, 2)
  local position = it.current_position
  chainer.serializers.load_npz(file, it)
  os.remove(file)
  expect(it.iteration == 2 or it.current_position ~= position, 'load did not restore the position')
  local again = batches(it, 2)
  for i = 1, 2 do
    expect(describe(again[i]) == describe(later[i]), 'after load, batch ' .. i .. ': ' .. describe(again[i]) ..
      ' vs ' .. describe(later[i]))
  end
  -- bad arguments
  local ok, e = pcall(chainermn.iterators.create_multi_node_iterator, nil, comm, size)
  expect(not ok and e:find('create_multi_node_iterator: rank_master must be a rank in 0..' .. (size - 1) ..
    ' (got ' .. size .. ')', 1, true), tostring(e))
  ok, e = pcall(chainermn.iterators.create_multi_node_iterator, 'x', comm, master)
  expect(not ok and e:find(rank == master and 'create_multi_node_iterator: the master must pass a chainer iterator' or
    'create_multi_node_iterator: the master (rank ' .. master .. ') passed a bad iterator', 1, true), tostring(e))
  -- a batch that cannot be sent: an error on every rank
  it = chainermn.iterators.create_multi_node_iterator(rank == master and
    chainer.iterators.SerialIterator({ print }, 1, { shuffle = false }) or nil, comm, master)
  ok, e = pcall(it.next, it)
  expect(not ok and e:find('MultiNodeIterator.next: the master (rank ' .. master .. ') could not send the batch',
    1, true), tostring(e))
  expect(comm:allreduce_obj(1) == size, 'out of step after the refusals')
end)

check('synchronized iterator', function()
  local ds = {}
  for i = 1, 10 do ds[i] = i - 1 end
  local function orders(it, n)
    local out = {}
    for _, b in ipairs(batches(it, n)) do out[#out + 1] = table.concat(b, ',') end
    return table.concat(out, ' | ')
  end
  -- each rank seeds differently: unsynchronised, their orders differ
  T.random.seed(50 + rank)
  local alone = orders(chainer.iterators.SerialIterator(ds, 5), 6)
  local all = comm:bcast_obj(comm:gather_obj(alone, 0), 0)
  if size > 1 then expect(all[1] ~= all[2], 'the unsynchronised orders agree') end
  T.random.seed(50 + rank)
  local it = chainermn.iterators.create_synchronized_iterator(
    chainer.iterators.SerialIterator(ds, 5, { shuffle = false }), comm)
  local synced = orders(it, 6)
  all = comm:bcast_obj(comm:gather_obj(synced, 0), 0)
  for r = 2, size do expect(all[r] == all[1], 'rank ' .. (r - 1) .. ' has another order: ' .. all[r]) end
  -- every epoch is a permutation, and it shuffles (shuffle = false is replaced, as ChainerMN)
  local identity = '0,1,2,3,4 | 5,6,7,8,9'
  local epochs = {}
  for e in (synced .. ' | '):gmatch('([^|]+|[^|]+) | ') do epochs[#epochs + 1] = e end
  local shuffled = false
  for _, e in ipairs(epochs) do
    local seen = {}
    for v in e:gmatch('%d+') do seen[#seen + 1] = tonumber(v) end
    table.sort(seen)
    expect(table.concat(seen, ',') == '0,1,2,3,4,5,6,7,8,9', 'not a permutation: ' .. e)
    if e:gsub('%s+$', '') ~= identity then shuffled = true end
  end
  expect(#epochs == 3 and shuffled, 'epochs: ' .. synced)
  local ok, e = pcall(chainermn.iterators.create_synchronized_iterator, chainer.iterators.SerialIterator(ds, 5),
    'comm')
  expect(not ok and e:find('create_synchronized_iterator: the second argument must be a chainermn communicator',
    1, true), tostring(e))
  local Plain = require('chainer.dataset.iterator'):extend('PlainIterator')
  function Plain:next() return nil end
  function Plain:reset() end
  ok, e = pcall(chainermn.iterators.create_synchronized_iterator, Plain(), comm)
  expect(not ok and e:find('create_synchronized_iterator: actual_iterator must have order_sampler', 1, true),
    tostring(e))
  expect(comm:allreduce_obj(1) == size, 'out of step after the refusals')
end)

check('generic evaluator', function()
  -- 40 examples x = i (i = 0..39), split without equal lengths: each rank
  -- evaluates its shard in batches of 2 (more than one round of 8 batches);
  -- calc_local returns the batch's sum (a Variable), aggregate adds them all
  local x = T.arange(0, 40, 1, 'float64'):reshape({ 40, 1 })
  local ds = chainermn.scatter_dataset(chainer.datasets.TupleDataset(x, T.zeros({ 40 }, 'int32')), comm,
    { force_equal_length = false })
  local Sum = chainermn.extensions.GenericMultiNodeEvaluator:extend('SumEvaluator')
  function Sum:calc_local(xs, _) return F.sum(xs) end
  function Sum:aggregate(results)
    local total = 0
    for _, r in ipairs(results) do total = total + r:item() end
    return { total = total, count = #results }
  end
  local hooked = 0
  local function iterator() return chainer.iterators.SerialIterator(ds, 2, { loop = false, shuffle = false }) end
  local ev = Sum(comm, iterator(), function() end, nil, nil, size - 1, { progress_hook = function() hooked = hooked + 1 end })
  expect(ev.default_name == 'validation' and ev.priority == 300, 'default name and priority')
  for _ = 1, 2 do                              -- twice: the iterator is reset
    local got = ev()
    if rank == size - 1 then
      expect(got and got.total == 780 and got.count == 20, 'aggregate: ' .. tostring(got and got.total))
    else
      expect(got == nil, 'a result on a non-root rank')
    end
  end
  -- (on the root, once per batch of its own, twice)
  expect(hooked == (rank == size - 1 and 2 * math.ceil(ds:len() / 2) or 0), 'progress_hook ran ' .. hooked .. ' times')
  -- the default calc_local (the target) and aggregate (the list of results)
  local plain = chainermn.extensions.GenericMultiNodeEvaluator(comm, iterator(), function(xs) return F.max(xs) end)
  local results = plain()
  if rank == 0 then
    expect(#results == 20 and results[1].ndim == 0, 'default aggregate: ' .. #results .. ' results')
  end
  -- an error in one rank's calc_local is an error on every rank
  local Failing = chainermn.extensions.GenericMultiNodeEvaluator:extend('FailingEvaluator')
  function Failing:calc_local(xs)
    if rank == size - 1 then error('bad batch on purpose', 0) end
    return F.sum(xs)
  end
  local ok, e = pcall(Failing(comm, iterator(), print))
  expect(not ok and e:find('GenericMultiNodeEvaluator: rank ' .. (size - 1) .. ': bad batch on purpose', 1, true),
    tostring(e))
  local function err(...)
    local ok2, e2 = pcall(chainermn.extensions.GenericMultiNodeEvaluator, ...)
    expect(not ok2, 'no error')
    return e2
  end
  e = err(comm, chainer.iterators.SerialIterator(ds, 2), print)
  expect(e:find('GenericMultiNodeEvaluator: iterator must not repeat', 1, true), e)
  e = err(comm, iterator(), print, nil, nil, size)
  expect(e:find('GenericMultiNodeEvaluator: root must be a rank in 0..' .. (size - 1), 1, true), e)
  e = err(comm, iterator(), 3)
  expect(e:find('GenericMultiNodeEvaluator: target must be callable (got number)', 1, true), e)
  expect(comm:allreduce_obj(1) == size, 'out of step after the refusals')
end)

-- A stand-in for a trainer at iteration i (what triggers and extensions read).
local function trainer_at(i, observation)
  return { observation = observation, updater = { iteration = i, epoch_detail = i / 100,
    previous_epoch_detail = (i - 1) / 100 } }
end

check('observation aggregator', function()
  -- rank r observes 10 r + i at iteration i; every 2 iterations the ranks
  -- get the mean of everything observed since the last time
  local every_second = function(trainer) return trainer.updater.iteration % 2 == 0 end
  local agg = chainermn.extensions.ObservationAggregator(comm, 'loss', 'loss/all', { comm_trigger = every_second })
  expect(agg.priority == 200, 'priority ' .. tostring(agg.priority))
  for i = 1, 4 do
    local obs = { loss = i % 2 == 0 and chainer.Variable(T.array(10 * rank + i, 'float64')) or 10 * rank + i }
    local trainer = trainer_at(i, obs)
    agg(trainer)
    local mean_rank = 10 * (size - 1) / 2
    local want = i % 2 == 0 and mean_rank + (i - 1 + i) / 2 or nil
    local got = obs['loss/all']
    if want == nil then
      expect(got == nil, 'aggregated at iteration ' .. i)
    else
      got = T.is_tensor(got) and got:item() or got
      expect(got == want, string.format('iteration %d: %s (expected %s)', i, tostring(got), tostring(want)))
      expect(obs.loss ~= nil and obs['loss/all'] ~= obs.loss, 'the original key was replaced')
    end
  end
  -- a custom aggregator (the largest value) replacing the key itself
  local largest = chainermn.extensions.ObservationAggregator(comm, 'acc', nil, { aggregator = function(lists)
    local m = -math.huge
    for _, l in ipairs(lists) do for _, v in ipairs(l) do m = math.max(m, v) end end
    return m
  end })
  local obs = { acc = rank }
  largest(trainer_at(1, obs))
  expect(obs.acc == size - 1, 'custom aggregator: ' .. tostring(obs.acc))
  -- nothing observed anywhere: an error on every rank
  local ok, e = pcall(agg, trainer_at(6, {}))
  expect(not ok and e:find("ObservationAggregator: cannot aggregate 'loss' (no rank observed a value", 1, true),
    tostring(e))
  ok, e = pcall(chainermn.extensions.ObservationAggregator, comm, 'loss', nil, { bad = 1 })
  expect(not ok and e:find("ObservationAggregator: unknown option 'bad'", 1, true), tostring(e))
  expect(comm:allreduce_obj(1) == size, 'out of step after the refusals')
end)

check('early stopping', function()
  -- rank 0's loss improves at every check (10 - i); rank 1's worsens (3 i),
  -- so the mean over two ranks (5 + i) never improves after the first check:
  -- with patience 3 every rank stops at iteration 4.  Alone, rank 0 never stops.
  local trigger = chainermn.extensions.MultiNodeEarlyStoppingTrigger(comm, { check_trigger = { 1, 'iteration' },
    patience = 3, max_trigger = { 10, 'iteration' } })
  expect(select(1, trigger:get_training_length()) == 10, 'training length')
  local stopped
  for i = 1, 10 do
    local obs = { ['main/loss'] = rank == 0 and 10 - i or 3 * i }
    if trigger(trainer_at(i, obs)) then stopped = i; break end
    expect(obs['main/loss_aggregated'] ~= nil, 'no aggregated value at iteration ' .. i)
  end
  local want = size > 1 and 4 or 10
  expect(stopped == want, 'stopped at ' .. tostring(stopped) .. ' (expected ' .. want .. ')')
  local ok, e = pcall(chainermn.extensions.MultiNodeEarlyStoppingTrigger, comm, { mode = 'best' })
  expect(not ok and e:find("MultiNodeEarlyStoppingTrigger: mode must be 'auto', 'max' or 'min' (got best)", 1, true),
    tostring(e))
end)

check('mnbn model', function()
  local MNBN = chainermn.links.MultiNodeBatchNormalization
  local isinstance = require('chainer.class').Object.isinstance
  chainer.config.dtype = 'float64'
  T.random.seed(31)
  local model = chainer.Sequential(L.Linear(3, 4), L.BatchNormalization(4, { dtype = 'float64', decay = 0.8 }), F.relu,
    L.Linear(4, 2), L.BatchNormalization(2, { dtype = 'float64', use_beta = false }))
  chainer.config.dtype = 'float32'
  model[2].gamma.array:copy_(T.array({ 1.5, -0.5, 2, 0.25 }, 'float64'))
  model[2].avg_mean:fill_(0.5)
  rawset(model[2], 'N', 3)
  local mn = chainermn.links.create_mnbn_model(model, comm)
  expect(isinstance(mn[2], MNBN) and isinstance(mn[5], MNBN), 'not replaced')
  expect(not isinstance(model[2], MNBN) and mn[2] ~= model[2], 'the original model changed')
  expect(mn[2].decay == 0.8 and mn[5].beta == nil and mn[5].gamma ~= nil, 'options not carried over')
  expect(max_diff(mn[2].gamma.array, model[2].gamma.array) == 0 and mn[2].N == 3 and
    max_diff(mn[2].avg_mean, model[2].avg_mean) == 0, 'parameters or statistics not copied')
  expect(mn[1].W.array ~= model[1].W.array and max_diff(mn[1].W.array, model[1].W.array) == 0, 'Linear not copied')
  expect(mn[3] == F.relu, 'the function layer moved')
  -- each rank's half of a batch through the converted model gives the
  -- original model's output on the whole batch (training mode)
  T.random.seed(32)
  local x = T.random.normal(0, 1, { 8, 3 }):astype('float64')
  local whole = model(x)
  local per = 8 / size
  local half = mn(x:slice({ rank * per, (rank + 1) * per }))
  expect(max_diff(half.array, whole.array:slice({ rank * per, (rank + 1) * per })) < 1e-12, 'outputs differ')
  expect(max_diff(mn[2].avg_mean, model[2].avg_mean) < 1e-12, 'population statistics differ')
  -- Chains and ChainLists at any depth; the parameter names stay
  local nested = chainer.Chain({ norm = L.BatchNormalization(3), block = chainer.ChainList(L.Linear(2, 2),
    L.BatchNormalization(2)) })
  local mnested = chainermn.links.create_mnbn_model(nested, comm)
  expect(isinstance(mnested.norm, MNBN) and isinstance(mnested.block[2], MNBN) and mnested.block[2].name == '1',
    'nested links not replaced')
  local names, mnames = {}, {}
  for name in nested:namedparams() do names[#names + 1] = name end
  for name in mnested:namedparams() do mnames[#mnames + 1] = name end
  expect(table.concat(names, ' ') == table.concat(mnames, ' '), 'names ' .. table.concat(mnames, ' '))
  expect(isinstance(chainermn.links.create_mnbn_model(L.BatchNormalization(2), comm), MNBN), 'a bare link')
  -- bad input
  local function err(...)
    local ok, e = pcall(chainermn.links.create_mnbn_model, ...)
    expect(not ok, 'no error')
    return e
  end
  local e = err('model', comm)
  expect(e:find('create_mnbn_model: link must be a chainer.Link (got string)', 1, true), e)
  e = err(chainer.Sequential(L.BatchNormalization()), comm)
  expect(e:find("create_mnbn_model: the BatchNormalization at '/0' has no size yet", 1, true), e)
  e = err(L.BatchNormalization(2), comm, 'nccl')
  expect(e:find("communication_backend 'nccl' is not built", 1, true), e)
end)

check('n step rnn', function()
  local function lstm(seed)
    chainer.config.dtype = 'float64'
    T.random.seed(seed)
    local l = L.NStepLSTM(1, 3, 4, 0)
    chainer.config.dtype = 'float32'
    return l
  end
  T.random.seed(41)
  local xs0 = { T.random.normal(0, 1, { 3, 3 }):astype('float64'), T.random.normal(0, 1, { 2, 3 }):astype('float64') }
  local xs1 = { T.random.normal(0, 1, { 2, 3 }):astype('float64'), T.random.normal(0, 1, { 4, 3 }):astype('float64') }
  local function loss_of(hy, ys) return F.sum(hy * hy) + F.sum(ys[1]) + F.sum(ys[2] * 2) end
  -- the reference, one process: A's final states start B
  local RA, RB = lstm(1), lstm(2)
  local rh, rc = RA(nil, nil, xs0)
  local hy_ref, _, ys_ref = RB(rh, rc, xs1)
  loss_of(hy_ref, ys_ref):backward()
  if size == 1 then
    -- without ranks to talk to, it is the RNN itself (and no delegate)
    local A = lstm(1)
    local mn = chainermn.links.create_multi_node_n_step_rnn(A, comm)
    local h, c, ys, delegate = mn(xs0)
    expect(delegate == nil and max_diff(h.array, rh.array) == 0 and max_diff(c.array, rc.array) == 0 and #ys == 2,
      'alone')
  elseif rank <= 1 then
    -- rank 0 runs A and sends its states to rank 1, which runs B from them
    if rank == 0 then
      local A = lstm(1)
      local mn = chainermn.links.create_multi_node_n_step_rnn(A, comm, nil, 1)
      local _, _, _, delegate = mn(xs0)
      expect(delegate ~= nil, 'no delegate variable')
      delegate:backward()
      expect(worst_difference(A, RA, 'grad') < 1e-12, 'rank 0 gradients differ')
    else
      local B = lstm(2)
      local mn = chainermn.links.create_multi_node_n_step_rnn(B, comm, 0, nil)
      local hy, _, ys, delegate = mn(xs1)
      expect(delegate == nil, 'a delegate variable without rank_out')
      expect(max_diff(hy.array, hy_ref.array) < 1e-12, 'rank 1 output differs')
      loss_of(hy, ys):backward()
      expect(worst_difference(B, RB, 'grad') < 1e-12, 'rank 1 gradients differ')
    end
  end
  local function err(...)
    local ok, e = pcall(chainermn.links.create_multi_node_n_step_rnn, ...)
    expect(not ok, 'no error')
    return e
  end
  local e = err(L.Linear(2, 2), comm)
  expect(e:find('create_multi_node_n_step_rnn: link must be NStepRNN and its inherited link', 1, true), e)
  e = err(lstm(1), comm, rank)
  expect(e:find('create_multi_node_n_step_rnn: rank_in must be nil or another rank in 0..' .. (size - 1) ..
    ' (got ' .. rank .. ')', 1, true), e)
end)
