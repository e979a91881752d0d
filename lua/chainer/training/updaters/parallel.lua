-- ParallelUpdater(iterator, optimizer, {devices =, models =, converter =,
-- loss_func =, loss_scale =, auto_new_epoch =}): synchronous data
-- parallelism.  The model is copied once per device (devices = {main = 0,
-- second = 1}; the key 'main' is the optimizer's model); every step splits
-- the batch into strided sub-batches (examples i, i+n, ...), each copy
-- computes its loss and gradients, the gradients are summed into the main
-- model, the optimizer updates it, and the copies take its parameters.
-- Devices may repeat (for example {main = -1, second = -1} on a CPU-only
-- machine), which gives the same arithmetic on one device.
--
-- On distinct GPUs ({main = 0, second = 1}) the copies compute at once: each
-- copy's forward and backward are queued on its device before the next copy
-- starts (kernel launches return without waiting, and nothing on the way
-- reads a value back to the host), and the gradients are summed on the main
-- device and the copies refreshed through NCCL when its library is present,
-- by copies between the devices otherwise (_device_exchange.lua).
local args = require 'chainer._args'
local StandardUpdater = require 'chainer.training.updaters.standard'
local cfg = require 'chainer.config'
local exchange = require 'chainer.training.updaters._device_exchange'

local ParallelUpdater = StandardUpdater:extend('ParallelUpdater')
local sorted_keys = require('chainer.training._util').sorted_keys

-- Chainer's (iterator, optimizer, converter, models, devices, loss_func,
-- loss_scale, auto_new_epoch).  A table of models or devices given as the
-- last positional argument reads as the options table: name it instead.
local SIGNATURE = args.signature { 'converter', 'models', 'devices', 'loss_func', 'loss_scale', 'auto_new_epoch' }

function ParallelUpdater:init(iterator, optimizer, ...)
  local opts = args.parse_at(3, 'ParallelUpdater', SIGNATURE, select('#', ...), ...)
  local devices, models = opts.devices, opts.models
  local sopts = {}
  for k, v in pairs(opts) do if k ~= 'devices' and k ~= 'models' then sopts[k] = v end end
  StandardUpdater.init(self, iterator, optimizer, sopts)
  if models == nil then
    if type(devices) ~= 'table' or devices.main == nil then
      error('ParallelUpdater: pass {devices = {main = <device>, <name> = <device>, ...}} (or models =)', 3)
    end
    local main = self._optimizers.main.target
    models = { main = main }
    for _, name in ipairs(sorted_keys(devices)) do
      if name ~= 'main' then models[name] = main:copy() end
    end
    for _, name in ipairs(sorted_keys(devices)) do
      if models[name].to_device then models[name]:to_device(devices[name]) end
    end
  else
    if type(models) ~= 'table' or models.main == nil then
      error("ParallelUpdater: models must be a table with a 'main' model", 3)
    end
    devices = devices or {}
  end
  self._models = models
  self._devices = devices
  self._model_names = sorted_keys(models)
  -- one GPU per model: the copies run concurrently (the device ids in rank order)
  self._gpus = exchange.gpu_devices(devices, exchange.rank_order(self._model_names))
end

-- The copies report under their own names (second/loss, ...).
function ParallelUpdater:connect_trainer(trainer)
  local main = self._optimizers.main.target
  for _, name in ipairs(self._model_names) do
    local m = self._models[name]
    if m ~= main then trainer.reporter:add_observer(name, m) end
  end
end

local call_loss = require('chainer.training._util').call_with_arrays   -- spreads a Lua array of arrays

function ParallelUpdater:update_core()
  local opt = self._optimizers.main
  local main = opt.target
  local it = self._iterators.main
  local batch = it:next()
  if batch == nil then error('ParallelUpdater: the main iterator is exhausted', 0) end
  local names = self._model_names
  local n = #names
  local in_list = {}
  for i, name in ipairs(names) do
    local sub = {}
    for j = i, #batch, n do sub[#sub + 1] = batch[j] end
    in_list[name] = self.converter(sub, self._devices[name])
  end
  for _, name in ipairs(names) do self._models[name]:cleargrads() end
  if self._gpus then return self:_update_on_gpus(in_list) end
  local losses = {}
  for i, name in ipairs(names) do
    local model = self._models[name]
    local f = self.loss_func or model
    losses[i] = cfg.force_backprop_mode(function() return call_loss(f, in_list[name]) end)
  end
  for _, name in ipairs(names) do self._models[name]:cleargrads() end
  for i = 1, n do
    if self.loss_scale then losses[i]:backward({ loss_scale = self.loss_scale }) else losses[i]:backward() end
  end
  for _, name in ipairs(names) do
    local m = self._models[name]
    if m ~= main then main:addgrads(m) end
  end
  opt:update()
  for _, name in ipairs(names) do
    local m = self._models[name]
    if m ~= main then m:copyparams(main) end
  end
  if self.auto_new_epoch and it.is_new_epoch and opt.new_epoch then opt:new_epoch({ auto = true }) end
end

-- NCCL communicators over the updater's GPUs (rank 0 on the main model's
-- device), made on the first update; false when NCCL is not there.
function ParallelUpdater:_communicators()
  if self._comms == nil then
    local nccl = require 'chainer.cuda.nccl'
    self._comms = nccl.available() and nccl.init_all(self._gpus) or false
  end
  return self._comms or nil
end

local function nccl_group(fn) require('chainer.cuda.nccl').group(fn) end

-- The step on distinct GPUs: each copy's forward and backward in turn, each
-- queued on its own device without waiting for the others.
function ParallelUpdater:_update_on_gpus(in_list)
  local opt = self._optimizers.main
  local it = self._iterators.main
  for _, name in ipairs(exchange.rank_order(self._model_names)) do
    local model = self._models[name]
    local f = self.loss_func or model
    local loss = cfg.force_backprop_mode(function() return call_loss(f, in_list[name]) end)
    model:cleargrads()   -- parameters initialised by this forward start without a gradient
    if self.loss_scale then loss:backward({ loss_scale = self.loss_scale }) else loss:backward() end
  end
  local plan = exchange.plan(self._models, self._model_names)
  local comms = self:_communicators()
  exchange.sum_grads(plan, comms, nccl_group)
  opt:update()
  exchange.refresh(plan, self._models, comms, nccl_group)
  if self.auto_new_epoch and it.is_new_epoch and opt.new_epoch then opt:new_epoch({ auto = true }) end
end

return ParallelUpdater
