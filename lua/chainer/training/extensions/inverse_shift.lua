-- InverseShift(attr, gamma, power, {init =, target =, optimizer =}):
-- optimizer[attr] = init * (1 + gamma * t)^(-power), t = number of calls.
local shift = require 'chainer.training.extensions._shift'

local InverseShift = shift.Schedule:extend('InverseShift')
InverseShift._arguments = { 'gamma', 'power' }

function InverseShift:_configure()
  local gamma = self._gamma
  if type(gamma) ~= 'number' or gamma < 0 then
    error('InverseShift: gamma must be a non-negative number (got ' .. tostring(gamma) .. ')', 4)
  end
end

function InverseShift:_value() return self._init * (1 + self._gamma * self._t) ^ (-self._power) end
function InverseShift:_increasing() return self._power < 0 end

return InverseShift
