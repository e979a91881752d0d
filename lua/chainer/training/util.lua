-- chainer.training.util: Chainer's training.util module, which exports
-- get_trigger (the one implementation lives with the triggers).
--
--   local util = require('chainer.training').util
--   local t = util.get_trigger({2, 'epoch'})   -- an IntervalTrigger
--   util.get_trigger(nil)(trainer)             -- false: never fires
--   util.get_trigger(fn) == fn                 -- a callable as it is
local triggers = require 'chainer.training.triggers'

local M = {}
M.get_trigger = triggers.get_trigger
return M
