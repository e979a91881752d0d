-- chainer.training: Trainer, updaters, triggers, extensions.
--
--   local training = require 'chainer.training'
--   local extensions = require 'chainer.training.extensions'
local extension = require 'chainer.training.extension'

local M = {}
M.Trainer = require 'chainer.training.trainer'
M.Updater = require 'chainer.training.updater'
M.updaters = require 'chainer.training.updaters'
M.StandardUpdater = M.updaters.StandardUpdater
M.ParallelUpdater = M.updaters.ParallelUpdater
M.triggers = require 'chainer.training.triggers'
M.get_trigger = M.triggers.get_trigger
M.util = require 'chainer.training.util'
M.IntervalTrigger = M.triggers.IntervalTrigger
M.Extension = extension.Extension
M.make_extension = extension.make_extension
M.PRIORITY_WRITER = extension.PRIORITY_WRITER
M.PRIORITY_EDITOR = extension.PRIORITY_EDITOR
M.PRIORITY_READER = extension.PRIORITY_READER

-- chainer.training.extensions loads on first use
require('chainer._lazy')(M, { extensions = 'chainer.training.extensions' })

return M
