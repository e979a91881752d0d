-- StandardUpdater(iterator, optimizer, {converter =, device =, loss_func =,
-- loss_scale =, auto_new_epoch = true, input_device =}).
--
-- device moves the model; input_device (default: device) is where batches go.
-- One step: batch = iterator:next(); in_arrays = converter(batch, input_device);
-- optimizer:update(loss_func or optimizer.target, in_arrays...).  The
-- iterator and the optimizer may be tables of named ones ({main = ..., ...});
-- a single one is named 'main'.  Subclasses override update_core() (the
-- DCGAN and PTB examples do) and use get_iterator / get_optimizer.
local args = require 'chainer._args'
local Updater = require 'chainer.training.updater'
local T = require 'chainer.tensor'

local StandardUpdater = Updater:extend('StandardUpdater')
local props = Updater.__props

local util = require 'chainer.training._util'
local sorted_keys, is_iterator = util.sorted_keys, util.is_iterator

local function is_optimizer(x)
  return type(x) == 'table' and type(x.update) == 'function' and type(x.setup) == 'function'
end

local function default_converter(batch, device)
  local ok, ds = pcall(require, 'chainer.dataset')
  if ok and type(ds) == 'table' and ds.concat_examples then return ds.concat_examples(batch, device) end
  error('StandardUpdater: chainer.dataset.concat_examples is not available; pass {converter = fn}', 0)
end
StandardUpdater._default_converter = default_converter

-- Chainer's (iterator, optimizer, converter, device, loss_func, loss_scale,
-- auto_new_epoch), the ones after optimizer positional or by name, and the
-- keyword-only input_device (where batches go; default: device).
local SIGNATURE = args.signature({ 'converter', 'device', 'loss_func', 'loss_scale', 'auto_new_epoch' },
  { 'input_device' })

function StandardUpdater:init(iterator, optimizer, ...)
  local opts = args.parse_at(3, 'StandardUpdater', SIGNATURE, select('#', ...), ...)
  iterator = util.main_table(iterator, is_iterator,
    'StandardUpdater: iterator must be an iterator (with :next()) or a table {main = iterator, ...}')
  optimizer = util.main_table(optimizer, is_optimizer,
    'StandardUpdater: optimizer must be an optimizer (set up with :setup(model)) or a table {main = optimizer, ...}')
  self._iterators = iterator
  self._optimizers = optimizer
  self.converter = opts.converter or default_converter
  self.device = opts.device
  self.input_device = opts.input_device
  if self.input_device == nil then self.input_device = opts.device end
  self.loss_func = opts.loss_func
  self.loss_scale = opts.loss_scale
  -- Chainer's: every optimizer scales its losses by it (static loss scaling)
  if opts.loss_scale ~= nil then
    for _, k in ipairs(sorted_keys(optimizer)) do optimizer[k]:set_loss_scale(opts.loss_scale) end
  end
  self.auto_new_epoch = opts.auto_new_epoch ~= false
  self.iteration = 0
  if opts.device ~= nil then
    for _, k in ipairs(sorted_keys(optimizer)) do
      local target = optimizer[k].target
      if target and target.to_device then target:to_device(opts.device) end
    end
  end
  if self.auto_new_epoch then
    for _, o in pairs(optimizer) do
      if o.use_auto_new_epoch ~= nil then o.use_auto_new_epoch = true end
    end
  end
end

-- the main iterator's epoch state
local function epoch_detail_of(it)
  local ed = it.epoch_detail
  if type(ed) == 'function' then ed = ed(it) end
  return ed
end
local function main_it(self) return rawget(self, '_iterators').main end

function props.epoch(self) return main_it(self).epoch end
function props.epoch_detail(self) return epoch_detail_of(main_it(self)) end
function props.previous_epoch_detail(self)
  local it = main_it(self)
  local p = it.previous_epoch_detail
  if type(p) == 'function' then p = p(it) end
  return p
end
function props.is_new_epoch(self) return main_it(self).is_new_epoch end

-- A new table with t's entries (callers may change it freely).
local function copy(t)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  return out
end

function StandardUpdater:get_iterator(name)
  local it = self._iterators[name]
  if it == nil then error("StandardUpdater:get_iterator: no iterator named '" .. tostring(name) .. "'", 2) end
  return it
end
function StandardUpdater:get_all_iterators() return copy(self._iterators) end
function StandardUpdater:get_optimizer(name)
  local o = self._optimizers[name]
  if o == nil then error("StandardUpdater:get_optimizer: no optimizer named '" .. tostring(name) .. "'", 2) end
  return o
end
function StandardUpdater:get_all_optimizers() return copy(self._optimizers) end

function StandardUpdater:update()
  self:update_core()
  self.iteration = self.iteration + 1
end

-- Calls f with the converted batch: a Lua array is spread as arguments, a
-- table of named arrays or a single array is passed as one argument.
local function call_with(f, in_arrays, opt)
  if type(in_arrays) == 'table' and not in_arrays._is_variable and in_arrays[1] ~= nil then
    return opt:update(f, unpack(in_arrays, 1, #in_arrays))
  end
  return opt:update(f, in_arrays)
end
StandardUpdater._call_with = call_with

function StandardUpdater:update_core()
  local it = self._iterators.main
  local batch = it:next()
  if batch == nil then
    error('StandardUpdater: the main iterator is exhausted (use a repeating iterator for training)', 0)
  end
  local in_arrays = self.converter(batch, self.input_device)
  local opt = self._optimizers.main
  local loss_func = self.loss_func or opt.target
  call_with(loss_func, in_arrays, opt)
  if self.auto_new_epoch and it.is_new_epoch and opt.new_epoch then
    opt:new_epoch({ auto = true })
  end
end

function StandardUpdater:finalize()
  util.finalize_iterators(self._iterators)
end

function StandardUpdater:serialize(serializer)
  local child = function(name) return serializer.child and serializer:child(name) or serializer[name] end
  for _, k in ipairs(sorted_keys(self._iterators)) do
    local it = self._iterators[k]
    if it.serialize then it:serialize(child('iterator:' .. k)) end
  end
  for _, k in ipairs(sorted_keys(self._optimizers)) do
    local o = self._optimizers[k]
    o:serialize(child('optimizer:' .. k))
    o.target:serialize(child('model:' .. k))
  end
  self.iteration = util.ser_number(serializer, 'iteration', self.iteration)
end

return StandardUpdater
