-- observe_value(observation_key, target_func, {trigger = {1, 'epoch'}}):
-- an extension that stores target_func(trainer) in the observation under
-- observation_key (priority WRITER, so LogReport sees it).
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'

local SIGNATURE = args.signature { 'trigger' }

return function(observation_key, target_func, ...)
  if type(observation_key) ~= 'string' then
    error('observe_value: observation_key must be a string (got ' .. type(observation_key) .. ')', 2)
  end
  if type(target_func) ~= 'function' then
    error('observe_value: target_func must be a function(trainer)', 2)
  end
  local opts = args.parse_at(2, 'observe_value', SIGNATURE, select('#', ...), ...)
  return extension.make_extension({
    trigger = opts.trigger or { 1, 'epoch' }, priority = extension.PRIORITY_WRITER,
    default_name = 'observe_value',
  }, function(trainer)
    trainer.observation[observation_key] = target_func(trainer)
  end)
end
