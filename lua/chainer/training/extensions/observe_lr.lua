-- observe_lr{optimizer_name = 'main', observation_key = 'lr', trigger =}:
-- reports the optimizer's learning rate (its `lr` field) as 'lr'.
local args = require 'chainer._args'
local observe_value = require 'chainer.training.extensions.observe_value'

local SIGNATURE = args.signature { 'optimizer_name', 'observation_key', 'trigger' }

return function(...)
  local opts = args.parse_at(2, 'observe_lr', SIGNATURE, select('#', ...), ...)
  local name = opts.optimizer_name or 'main'
  local e = observe_value(opts.observation_key or 'lr', function(trainer)
    return trainer.updater:get_optimizer(name).lr
  end, { trigger = opts.trigger })
  e.default_name = 'observe_lr'
  return e
end
