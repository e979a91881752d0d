-- chainer.training.Updater: the base of updaters.  Subclasses implement
-- update() and keep `iteration`; epoch, epoch_detail, previous_epoch_detail
-- and is_new_epoch are computed properties (updater.epoch_detail reads the
-- main iterator).
local class = require 'chainer.class'

local Updater = class.Object:extend('Updater')
class.check_self(Updater)   -- model.cleargrads() (a dot) names the method

local props = {}
Updater.__props = props

-- Methods first (through the class chain), then computed properties; the
-- function finds methods through getmetatable(self), so subclasses
-- (StandardUpdater, user updaters) inherit it unchanged.
Updater.__index = class.property_index(props)

function Updater:connect_trainer(trainer) end
function Updater:finalize() end
function Updater:get_optimizer(name)
  error('Updater:get_optimizer: not implemented by ' .. tostring(getmetatable(self).__name), 2)
end
function Updater:get_all_optimizers() return {} end
function Updater:update()
  error('Updater:update: not implemented by ' .. tostring(getmetatable(self).__name), 2)
end
function Updater:serialize(serializer) end

return Updater
