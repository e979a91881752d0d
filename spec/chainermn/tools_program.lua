-- The second program chainermn_spec.lua starts alone and under
-- `mpirun -np 2`: the double-buffering optimizer, the multi-node and
-- synchronized iterators, GenericMultiNodeEvaluator, ObservationAggregator,
-- MultiNodeEarlyStoppingTrigger, create_mnbn_model and
-- create_multi_node_n_step_rnn.  Output as ranks_program.lua's:
--   check <name> rank <r> ok | FAIL <message>
local chainer = require 'chainer'
local chainermn = require 'chainermn'
local T, L, F = chainer.tensor, chainer.links, chainer.functions

local comm = chainermn.create_communicator(arg[1] or 'flat')
local rank, size = comm.rank, comm.size

local check, expect = require('spec.chainermn.rank_checks')(rank)
local function max_diff(a, b) return (a - b):abs():max():item() end

local function mlp(seed, dtype)
  chainer.config.dtype = dtype
  T.random.seed(seed)
  local m = chainer.Sequential(L.Linear(5, 16), F.tanh, L.Linear(16, 3))
  chainer.config.dtype = 'float32'
  return m
end

local function worst_difference(a, b)
  local qs, worst = {}, 0
  for name, q in b:namedparams() do qs[name] = q end
  for name, p in a:namedparams() do worst = math.max(worst, max_diff(p.array, qs[name].array)) end
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
