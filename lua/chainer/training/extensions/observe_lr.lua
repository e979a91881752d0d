-- observe_lr{optimizer_name = 'main', observation_key = 'lr', trigger =}:
-- reports the optimizer's learning rate (its `lr` field) as 'lr'.
local observe_value = require 'chainer.training.extensions.observe_value'

return function(opts)
  opts = opts or {}
  if type(opts) == 'string' then opts = { optimizer_name = opts } end
  local name = opts.optimizer_name or 'main'
  local e = observe_value(opts.observation_key or 'lr', function(trainer)
    return trainer.updater:get_optimizer(name).lr
  end, { trigger = opts.trigger })
  e.default_name = 'observe_lr'
  return e
end
