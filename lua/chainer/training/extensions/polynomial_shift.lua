-- PolynomialShift(attr, rate, max_count, {init =, target =, optimizer =,
-- batchsize =, len_dataset =}): optimizer[attr] = init * (1 - t/max_count)^rate
-- (clamped at 0 from below), t = number of calls.
--
-- max_count may also be a stop trigger {n, 'iteration'} or {n, 'epoch'}
-- (the seed's PolynomialShift); with 'epoch', batchsize and len_dataset
-- give the number of iterations.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local shift = require 'chainer.training.extensions._shift'

local PolynomialShift = extension.Extension:extend('PolynomialShift')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'init', 'target', 'optimizer' }, { 'batchsize', 'len_dataset' })

function PolynomialShift:init(attr, rate, max_count, ...)
  local opts = args.parse_at(3, 'PolynomialShift', SIGNATURE, select('#', ...), ...)
  shift.check_attr(attr, 'PolynomialShift')
  if type(max_count) == 'table' then
    local n, unit = max_count[1], max_count[2]
    if unit == 'iteration' then
      max_count = n
    else
      if opts.batchsize == nil or opts.len_dataset == nil then
        error("PolynomialShift: when the unit of 'stop_trigger' is 'epoch', 'batchsize' and 'len_dataset' " ..
          'should be specified to calculate the maximum iteration.', 3)
      end
      max_count = n * opts.len_dataset / opts.batchsize
    end
  end
  if type(max_count) ~= 'number' or max_count <= 0 then
    error('PolynomialShift: max_count must be a positive number (got ' .. tostring(max_count) .. ')', 3)
  end
  self._attr, self._rate, self._max_count = attr, rate, max_count
  self._init, self._target, self._optimizer = opts.init, opts.target, opts.optimizer
  self._t = 0
  self._last_value = nil
end

PolynomialShift.initialize = shift.initialize
PolynomialShift.serialize = shift.serialize

PolynomialShift.__call = function(self, trainer)
  self._t = self._t + 1
  local opt = shift.get_optimizer(self, trainer)
  local decay = math.max(1 - self._t / self._max_count, 0)
  local value = self._init * decay ^ self._rate
  if self._target ~= nil then
    if self._rate > 0 then
      if self._target / value > 1 then value = self._target end
    else
      if self._target / value < 1 then value = self._target end
    end
  end
  shift.update_value(self, opt, value)
end

return PolynomialShift
