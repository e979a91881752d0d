-- StepShift(attr, gamma, step, {init =, target =, optimizer =}):
-- optimizer[attr] = init * gamma^floor(t / step), t = number of calls.
local shift = require 'chainer.training.extensions._shift'

local StepShift = shift.Schedule:extend('StepShift')
StepShift._arguments = { 'gamma', 'step' }

function StepShift:_configure()
  local step = self._step
  if type(step) ~= 'number' or step <= 0 then
    error('StepShift: step must be a positive number (got ' .. tostring(step) .. ')', 4)
  end
end

function StepShift:_value() return self._init * self._gamma ^ math.floor(self._t / self._step) end
function StepShift:_increasing() return self._gamma > 1 end

return StepShift
