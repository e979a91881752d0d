-- Evaluator(iterator, target, {converter =, device =, eval_hook =,
-- eval_func =, progress_bar = false}): runs the target over a validation
-- iterator with chainer.config.train = false and backprop off, and reports
-- the means of what it reported under '<name>/...' (the extension's name,
-- 'validation' by default): validation/main/loss, validation/main/accuracy.
--
-- The mean is over batches, unweighted (a short last batch counts as much
-- as a full one), as Chainer's.  Standalone use: `local result = evaluator()`.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local reporter_mod = require 'chainer.reporter'
local cfg = require 'chainer.config'
local util = require 'chainer.training._util'

local Evaluator = extension.Extension:extend('Evaluator')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'converter', 'device', 'eval_hook', 'eval_func' }, { 'progress_bar' })
Evaluator.trigger = { 1, 'epoch' }
Evaluator.default_name = 'validation'
Evaluator.priority = extension.PRIORITY_WRITER

local sorted_keys, is_iterator = util.sorted_keys, util.is_iterator

local function default_converter(batch, device)
  return require('chainer.dataset').concat_examples(batch, device)
end

function Evaluator:init(iterator, target, ...)
  local opts = args.parse_at(3, 'Evaluator', SIGNATURE, select('#', ...), ...)
  iterator = util.main_table(iterator, is_iterator,
    'Evaluator: iterator must be an iterator or a table {main = iterator, ...}')
  if type(target) == 'table' and target._is_link then target = { main = target }
  elseif type(target) ~= 'table' or target.main == nil then
    error('Evaluator: target must be a Link or a table {main = link, ...}', 3)
  end
  -- The evaluation sweeps an iterator until it stops: one that repeats would
  -- never stop.  Chainer only warns and then hangs at the first evaluation;
  -- we refuse it here, unless a subclass brings its own evaluate (which may
  -- count its batches), where Chainer's warning is kept.
  local own_loop = getmetatable(self).evaluate ~= Evaluator.evaluate
  for _, k in ipairs(sorted_keys(iterator)) do
    local it = iterator[k]
    local rep = it['repeat']
    if rep == nil then rep = it._repeat end
    if rep == nil then rep = it.loop end
    if rep == true then
      local msg = 'Evaluator: the iterator "' .. k .. '" repeats, so the evaluation would never end; ' ..
        'make it with SerialIterator(dataset, batch_size, {loop = false, shuffle = false})'
      if not own_loop then error(msg, 3) end
      io.stderr:write(msg .. '\n')
    end
  end
  self._iterators = iterator
  self._targets = target
  self.converter = opts.converter or default_converter
  self.device = opts.device
  self.eval_hook = opts.eval_hook
  self.eval_func = opts.eval_func
  self._progress_bar = opts.progress_bar == true
  if opts.device ~= nil then
    for _, t in pairs(target) do if t.to_device then t:to_device(opts.device) end end
  end
end

function Evaluator:get_iterator(name) return self._iterators[name] end
function Evaluator:get_all_iterators() return self._iterators end
function Evaluator:get_target(name) return self._targets[name] end
function Evaluator:get_all_targets() return self._targets end

-- Runs the evaluation and returns {key = mean}.  Called under a current
-- reporter that has the targets registered.
function Evaluator:evaluate()
  local it = self._iterators.main
  local eval_func = self.eval_func or self._targets.main
  if self.eval_hook then self.eval_hook(self) end
  if it.reset then it:reset() end
  local summary = reporter_mod.DictSummary()
  local converter, device = self.converter, self.device
  local n, total = 0, nil
  if self._progress_bar and it.dataset and it.batch_size then
    local len = it.dataset.len and it.dataset:len() or #it.dataset
    total = math.ceil(len / it.batch_size)
  end
  local t0 = util.now()
  while true do
    local batch = it:next()
    if batch == nil then break end
    local observation = {}
    reporter_mod.report_scope(observation, function()
      local in_arrays = converter(batch, device)
      cfg.no_backprop_mode(function() util.call_with_arrays(eval_func, in_arrays) end)
    end)
    summary:add(observation)
    n = n + 1
    if self._progress_bar and n % 1 == 0 then
      local rate = total and math.min(n / total, 1) or 0
      local marks = math.floor(rate * 50)
      local speed = n / math.max(util.now() - t0, 1e-9)
      io.stdout:write(string.format('validation [%s%s] %5.2f%%\n%10d / %s iterations\n%10.5g iters/sec.\n',
        string.rep('#', marks), string.rep('.', 50 - marks), rate * 100, n, tostring(total or '?'), speed))
    end
  end
  return summary:compute_mean()
end

Evaluator.__call = function(self, trainer)
  local rep = reporter_mod.Reporter()
  local prefix = ''
  if self.name then prefix = self.name .. '/' end
  for _, name in ipairs(sorted_keys(self._targets)) do
    local target = self._targets[name]
    rep:add_observer(prefix .. name, target)
    if target.namedlinks then rep:add_observers(prefix .. name, target:namedlinks({ skipself = true })) end
  end
  local result = rep:use(function()
    return cfg.using_config('train', false, function() return self:evaluate() end)
  end)
  reporter_mod.report(result)
  return result
end

function Evaluator:finalize()
  util.finalize_iterators(self._iterators)
end

return Evaluator
