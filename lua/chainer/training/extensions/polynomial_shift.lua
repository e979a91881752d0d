-- PolynomialShift(attr, rate, max_count, {init =, target =, optimizer =,
-- batchsize =, len_dataset =}): optimizer[attr] = init * (1 - t/max_count)^rate
-- (clamped at 0 from below), t = number of calls.
--
-- max_count may also be a stop trigger {n, 'iteration'} or {n, 'epoch'}
-- (the seed's PolynomialShift); with 'epoch', batchsize and len_dataset
-- give the number of iterations.
local args = require 'chainer._args'
local shift = require 'chainer.training.extensions._shift'

local PolynomialShift = shift.Schedule:extend('PolynomialShift')
PolynomialShift._arguments = { 'rate', 'max_count' }
PolynomialShift._signature = args.signature({ 'init', 'target', 'optimizer' }, { 'batchsize', 'len_dataset' })

function PolynomialShift:_configure(opts)
  local max_count = self._max_count
  if type(max_count) == 'table' then
    local n, unit = max_count[1], max_count[2]
    if unit == 'iteration' then
      max_count = n
    else
      if opts.batchsize == nil or opts.len_dataset == nil then
        error("PolynomialShift: when the unit of 'stop_trigger' is 'epoch', 'batchsize' and 'len_dataset' " ..
          'should be specified to calculate the maximum iteration.', 4)
      end
      max_count = n * opts.len_dataset / opts.batchsize
    end
  end
  if type(max_count) ~= 'number' or max_count <= 0 then
    error('PolynomialShift: max_count must be a positive number (got ' .. tostring(max_count) .. ')', 4)
  end
  self._max_count = max_count
end

function PolynomialShift:_value()
  local decay = math.max(1 - self._t / self._max_count, 0)
  return self._init * decay ^ self._rate
end

-- Chainer compares target / value here (the other schedules value / target).
function PolynomialShift:_clamp(value)
  if self._target ~= nil then
    if self._rate > 0 then
      if self._target / value > 1 then value = self._target end
    else
      if self._target / value < 1 then value = self._target end
    end
  end
  return value
end

return PolynomialShift
