-- ExponentialShift(attr, rate, {init =, target =, optimizer =}): at each
-- call, optimizer[attr] = init * rate^t (t = number of calls), stopping at
-- `target` when given.  Used as trainer:extend(ExponentialShift('lr', 0.5),
-- {trigger = {10, 'epoch'}}).
local shift = require 'chainer.training.extensions._shift'

local ExponentialShift = shift.Schedule:extend('ExponentialShift')
ExponentialShift._arguments = { 'rate' }

function ExponentialShift:_configure()
  local rate = self._rate
  if type(rate) ~= 'number' or rate < 0 then
    error('ExponentialShift: rate must be a non-negative number (got ' .. tostring(rate) .. ')', 4)
  end
end

function ExponentialShift:_value() return self._init * self._rate ^ self._t end
function ExponentialShift:_increasing() return self._rate > 1 end

return ExponentialShift
