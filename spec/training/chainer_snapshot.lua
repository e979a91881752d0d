-- The key set of a trainer snapshot written by Chainer 7.8.1's
-- examples/mnist/train_mnist.py (read off Chainer's serialize methods:
-- Trainer, StandardUpdater, SerialIterator, Adam/UpdateRule, Link,
-- IntervalTrigger, DumpGraph, LogReport, DictSummary, PlotReport), with the
-- value types NumPy gives them, taken after `iteration` updates at the end
-- of epoch `epoch`.  What Chainer does not save is absent: the order
-- sampler's state, PlotReport's trigger, Evaluator/snapshot/PrintReport/
-- ProgressBar state, DumpGraph's trigger (a method, not a trigger object).
local T = require 'chainer.tensor'
local json = require 'chainer.utils.json'

local M = {}

local function int(v) return T.array(v, 'int64') end
local function float(v) return T.array(v, 'float64') end
local function bool(v) return T.array(v, 'bool') end

-- opts: n_in, units, n_out, n_train, iteration, epoch, log (LogReport's
-- entries), plots ({file name = {key = {{x, y}, ...}}}).  Returns the
-- key -> value table (strings are written as NumPy's 0-d '<U' arrays).
function M.train_mnist_snapshot(o)
  local s = {}
  local it, ep = o.iteration, o.epoch
  local up = 'updater/'
  -- SerialIterator (shuffle: an order; Chainer 7.8.1 names it 'order')
  s[up .. 'iterator:main/current_position'] = int(0)
  s[up .. 'iterator:main/epoch'] = int(ep)
  s[up .. 'iterator:main/is_new_epoch'] = bool(true)
  s[up .. 'iterator:main/order'] = T.arange(o.n_train - 1, -1, -1, 'int64')
  s[up .. 'iterator:main/previous_epoch_detail'] = float((it - 1) / it * ep)
  -- Adam: Optimizer t, epoch; per parameter UpdateRule t and state m, v
  s[up .. 'optimizer:main/t'] = int(it)
  s[up .. 'optimizer:main/epoch'] = int(0)
  local shapes = {
    ['predictor/l1/W'] = { o.units, o.n_in }, ['predictor/l1/b'] = { o.units },
    ['predictor/l2/W'] = { o.units, o.units }, ['predictor/l2/b'] = { o.units },
    ['predictor/l3/W'] = { o.n_out, o.units }, ['predictor/l3/b'] = { o.n_out },
  }
  local params = {}
  for name, shape in pairs(shapes) do
    local p = T.random.uniform(-0.1, 0.1, shape, 'float32')
    params[name] = p
    s[up .. 'model:main/' .. name] = p
    s[up .. 'optimizer:main/' .. name .. '/t'] = int(it)
    s[up .. 'optimizer:main/' .. name .. '/m'] = T.random.uniform(-1e-3, 1e-3, shape, 'float32')
    s[up .. 'optimizer:main/' .. name .. '/v'] = T.random.uniform(0, 1e-6, shape, 'float32')
  end
  s[up .. 'iteration'] = int(it)
  -- the stop trigger was last asked before this iteration's update
  s['stop_trigger/previous_iteration'] = int(it - 1)
  s['stop_trigger/previous_epoch_detail'] = float((it - 1) / it * ep)
  -- extensions with state
  s['extensions/dump_graph/_original_flag'] = bool(false)
  s['extensions/dump_graph/_flag_called'] = bool(true)
  s['extensions/LogReport/_trigger/previous_iteration'] = int(it)
  s['extensions/LogReport/_trigger/previous_epoch_detail'] = float(ep)
  s['extensions/LogReport/_summary/_names'] = '[]'
  s['extensions/LogReport/_log'] = json.encode(json.array(o.log or {}))
  local plots = o.plots or {}
  s['extensions/PlotReport/_plot_loss.png'] = json.encode(plots['loss.png'] or {})
  s['extensions/PlotReport_1/_plot_accuracy.png'] = json.encode(plots['accuracy.png'] or {})
  -- every extension's IntervalTrigger (DumpGraph's trigger is a method)
  for _, name in ipairs({ 'validation', '_Snapshot', 'LogReport', 'PlotReport', 'PlotReport_1', 'PrintReport',
    'ProgressBar' }) do
    s['extension_triggers/' .. name .. '/previous_iteration'] = int(it)
    s['extension_triggers/' .. name .. '/previous_epoch_detail'] = float(ep)
  end
  s['_snapshot_elapsed_time'] = float(12.5)
  return s, params
end

return M
