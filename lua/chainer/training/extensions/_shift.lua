-- _shift.lua: the shared parts of the hyperparameter schedules
-- (ExponentialShift, StepShift, ...): finding the optimizer, setting the
-- attribute, and serializing _t and _last_value; and M.Schedule, the base of
-- the schedules that start at `init` and stop at `target`.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local util = require 'chainer.training._util'

local M = {}

function M.get_optimizer(self, trainer)
  return self._optimizer or trainer.updater:get_optimizer('main')
end

function M.update_value(self, optimizer, value)
  optimizer[self._attr] = value
  self._last_value = value
end

-- initialize for the schedules that start at _init (or resume at _last_value).
function M.initialize(self, trainer)
  local optimizer = M.get_optimizer(self, trainer)
  if self._init == nil then self._init = optimizer[self._attr] end
  if self._last_value ~= nil then
    M.update_value(self, optimizer, self._last_value)
  else
    M.update_value(self, optimizer, self._init)
  end
end

function M.serialize(self, serializer)
  self._t = util.ser_number(serializer, '_t', self._t)
  local loading = util.is_loading(serializer)
  if loading then
    -- Chainer writes None before the first shift; chainlua writes nothing
    local v, found = util.optional(serializer, '_last_value', self._last_value)
    if found and v ~= nil then self._last_value = util.to_number(v) end
  elseif self._last_value ~= nil then
    serializer('_last_value', self._last_value)
  end
end

-- Clamps `value` at `target` in the direction the schedule moves.
function M.clamp(value, target, increasing)
  if target == nil then return value end
  if increasing then
    if value / target > 1 then return target end
  else
    if value / target < 1 then return target end
  end
  return value
end

function M.check_attr(attr, who)
  if type(attr) ~= 'string' then
    error(who .. ": attr must be the name of an optimizer hyperparameter such as 'lr' (got " .. type(attr) .. ')', 4)
  end
end

---------------------------------------------------------------------------
-- Schedule: Name(attr, <arguments>..., {init =, target =, optimizer =}),
-- optimizer[attr] = _value() after each call, clamped at target.  A schedule
-- sets _arguments (the names of its positional arguments after attr, stored
-- as self._<name>), may set _signature (its trailing arguments, positional or
-- by name), checks its arguments in _configure and gives _value() (the value
-- after self._t calls) and _increasing() (the direction it moves, for the
-- clamp at target).
---------------------------------------------------------------------------
local Schedule = extension.Extension:extend('Schedule')
Schedule._arguments = {}
-- Chainer's arguments after the required ones, positional or by name
Schedule._signature = args.signature({ 'init', 'target', 'optimizer' })

function Schedule:init(attr, ...)
  local name = getmetatable(self).__name
  local n = #self._arguments
  local rest = math.max(select('#', ...) - n, 0)
  local opts = args.parse_at(3, name, self._signature, rest, select(n + 1, ...))
  M.check_attr(attr, name)
  self._attr = attr
  for i, a in ipairs(self._arguments) do self['_' .. a] = (select(i, ...)) end
  self:_configure(opts)
  self._init, self._target, self._optimizer = opts.init, opts.target, opts.optimizer
  self._t = 0
  self._last_value = nil
end

function Schedule:_configure() end

function Schedule:_clamp(value) return M.clamp(value, self._target, self:_increasing()) end

Schedule.initialize = M.initialize
Schedule.serialize = M.serialize

Schedule.__call = function(self, trainer)
  self._t = self._t + 1
  local opt = M.get_optimizer(self, trainer)
  M.update_value(self, opt, self:_clamp(self:_value()))
end

M.Schedule = Schedule

return M
