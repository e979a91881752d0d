-- bench/mnist_phases.lua: examples/chainermn/mnist/train_mnist.lua with
-- per-phase timers, to see where a rank's time goes.
--   [mpirun -np 2] chainlua bench/mnist_phases.lua [the example's options]
-- The example runs unchanged; the timers wrap, at class level, the training
-- iterator's next, the converter (concat_examples), the communicator's
-- multi_node_mean_grad and bcast_data, the wrapped optimizer's update (Adam),
-- the Evaluator's evaluate, and the updater's update_core, whose own time
-- (excluding the regions inside it) is the forward, backward and cleargrads.
-- Times are exclusive (a region nested in another is not counted twice; one
-- inside evaluate is counted as evaluate's), wall clock and process CPU time
-- (os.clock), summed over the run; "loop rest" is the trainer loop minus the
-- updates and evaluations (the other extensions: LogReport, PrintReport,
-- ProgressBar, DumpGraph on rank 0).  Each rank prints its own table at the
-- end, after the example's report.
--
-- BENCH_NO_EXCHANGE=1 makes multi_node_mean_grad do nothing (the ranks'
-- models drift apart; the accuracy means nothing): the time two ranks take
-- with the same work and no gradient exchange, i.e. what sharing the
-- machine's cores, caches and memory bandwidth costs by itself.
-- BENCH_SKEW=1 puts a timed barrier ('skew (barrier)') just before every
-- multi_node_mean_grad: the exchange's wait for the slower rank is then
-- counted there, and 'mean_grad' is the transfer and reduction alone.
local now = require('chainer.training._util').now
local phases, order, stack = {}, {}, {}

local function region(label, f)
  return function(...)
    local top = stack[#stack]
    if top and top.label == 'evaluate' then return f(...) end   -- evaluate's own
    local entry = { label = label, wall = 0, cpu = 0 }
    stack[#stack + 1] = entry
    local w0, c0 = now(), os.clock()
    local function finish(...)
      local dw, dc = now() - w0, os.clock() - c0
      stack[#stack] = nil
      local p = phases[label]
      if p == nil then
        p = { wall = 0, cpu = 0, n = 0 }
        phases[label] = p
        order[#order + 1] = label
      end
      p.wall, p.cpu, p.n = p.wall + dw - entry.wall, p.cpu + dc - entry.cpu, p.n + 1
      local parent = stack[#stack]
      if parent then parent.wall, parent.cpu = parent.wall + dw, parent.cpu + dc end
      return ...
    end
    return finish(f(...))
  end
end

local function wrap(tbl, key, label) tbl[key] = region(label, tbl[key]) end

local dataset = require 'chainer.dataset'
wrap(dataset, 'concat_examples', 'converter')
wrap(require('chainer.iterators.serial_iterator').SerialIterator, 'next', 'iterator')
local StandardUpdater = require('chainer.training').StandardUpdater
wrap(StandardUpdater, 'update_core', 'forward+backward')
wrap(require('chainer.training.extensions').Evaluator, 'evaluate', 'evaluate')
local chainermn = require 'chainermn'
local comm_class = getmetatable(chainermn.create_communicator('flat'))
if os.getenv('BENCH_NO_EXCHANGE') == '1' then comm_class.multi_node_mean_grad = function() end end
wrap(comm_class, 'multi_node_mean_grad', 'mean_grad')
if os.getenv('BENCH_SKEW') == '1' then
  -- a barrier just before each exchange, timed apart: the wait for the
  -- slower rank (skew), leaving mean_grad the transfer and reduction itself
  local skew = region('skew (barrier)', function(c) c:barrier() end)
  local mean_grad = comm_class.multi_node_mean_grad
  comm_class.multi_node_mean_grad = function(c, ...) skew(c); return mean_grad(c, ...) end
end
wrap(comm_class, 'bcast_data', 'bcast_data')
local create = chainermn.create_multi_node_optimizer
chainermn.create_multi_node_optimizer = function(opt, ...)
  rawset(opt, 'update', region('optimizer', opt.update))
  return create(opt, ...)
end
local Trainer = require('chainer.training').Trainer
local run = Trainer.run
local comm
Trainer.run = function(self, ...)
  local w0, c0 = now(), os.clock()
  run(self, ...)
  local total = { wall = now() - w0, cpu = os.clock() - c0 }
  comm = comm or chainermn.create_communicator('flat')
  local lines = { string.format('rank %d phases (%d updates): %-18s %10s %10s %10s', comm.rank,
    phases['forward+backward'] and phases['forward+backward'].n or 0, 'phase', 'wall s', 'cpu s', 'calls') }
  local sw, sc = 0, 0
  for _, label in ipairs(order) do
    local p = phases[label]
    sw, sc = sw + p.wall, sc + p.cpu
    lines[#lines + 1] = string.format('rank %d %-38s %10.3f %10.3f %10d', comm.rank, label, p.wall, p.cpu, p.n)
  end
  lines[#lines + 1] = string.format('rank %d %-38s %10.3f %10.3f', comm.rank, 'loop rest', total.wall - sw, total.cpu - sc)
  lines[#lines + 1] = string.format('rank %d %-38s %10.3f %10.3f', comm.rank, 'trainer:run', total.wall, total.cpu)
  -- ranks print in turn
  for r = 0, comm.size - 1 do
    if r == comm.rank then io.write(table.concat(lines, '\n'), '\n'); io.flush() end
    comm:barrier()
  end
end

arg[0] = 'examples/chainermn/mnist/train_mnist.lua'
dofile('examples/chainermn/mnist/train_mnist.lua')
