-- testing/training.lua: Chainer's get_trainer_with_mock_updater: a Trainer
-- whose updater only counts, for testing triggers and extensions.
--
--   local trainer = testing.get_trainer_with_mock_updater({10, 'iteration'}, 5)
--   trainer:extend(my_extension)
--   trainer:run()
local training = require 'chainer.training'

local M = {}

-- MockUpdater(iter_per_epoch = 10, optimizers = {}): each update adds one
-- iteration; epoch = floor(iteration / iter_per_epoch), epoch_detail =
-- iteration / iter_per_epoch, is_new_epoch at each multiple, as Chainer's
-- mock.  update_core() is a hook that does nothing (set your own);
-- `finalized` counts finalize calls; the iteration serializes.
local MockUpdater = training.Updater:extend('MockUpdater')
M.MockUpdater = MockUpdater

function MockUpdater:init(iter_per_epoch, optimizers)
  iter_per_epoch = iter_per_epoch or 10
  if type(iter_per_epoch) ~= 'number' or iter_per_epoch <= 0 then
    error('MockUpdater: iter_per_epoch must be a positive number (got ' .. tostring(iter_per_epoch) .. ')', 3)
  end
  self.iteration = 0
  self.per_epoch = iter_per_epoch
  self._optimizers = optimizers or {}
  self.finalized = 0
end
function MockUpdater:update_core() end
function MockUpdater:update()
  self:update_core()
  self.iteration = self.iteration + 1
end
function MockUpdater:get_all_optimizers() return self._optimizers end
function MockUpdater:get_optimizer(name) return self._optimizers[name] end
function MockUpdater:finalize() self.finalized = self.finalized + 1 end
function MockUpdater:serialize(s)
  self.iteration = require('chainer.training._util').ser_number(s, 'iteration', self.iteration)
end

local props = {}
function props.epoch_detail(self) return self.iteration / self.per_epoch end
function props.epoch(self) return math.floor(self.iteration / self.per_epoch) end
function props.previous_epoch_detail(self)
  if self.iteration == 0 then return nil end
  return (self.iteration - 1) / self.per_epoch
end
function props.is_new_epoch(self) return self.iteration > 0 and self.iteration % self.per_epoch == 0 end
MockUpdater.__index = function(self, k)
  local m = getmetatable(self)[k]
  if m ~= nil then return m end
  local p = props[k]
  if p then return p(self) end
  return nil
end

-- get_trainer_with_mock_updater(stop_trigger = {10, 'iteration'},
-- iter_per_epoch = 10, extensions = {}) (positional, or the last two by name)
local SIGNATURE = require('chainer._args').signature { 'stop_trigger', 'iter_per_epoch', 'extensions' }
function M.get_trainer_with_mock_updater(...)
  local o = require('chainer._args').parse('get_trainer_with_mock_updater', SIGNATURE, select('#', ...), ...)
  local updater = MockUpdater(o.iter_per_epoch or 10)
  return training.Trainer(updater, o.stop_trigger or { 10, 'iteration' }, { extensions = o.extensions })
end

return M
