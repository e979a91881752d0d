-- OnceTrigger{call_on_resume = false}: fires at its first call only (and,
-- with call_on_resume, once more after a resume).
local args = require 'chainer._args'
local class = require 'chainer.class'
local util = require 'chainer.training._util'

local OnceTrigger = class.Object:extend('OnceTrigger')

local props = {}
OnceTrigger.__index = class.property_index(props)

function props.finished(self) return not (self._flag_first or self._flag_resumed) end

local SIGNATURE = args.signature { 'call_on_resume' }

-- OnceTrigger(call_on_resume) / OnceTrigger{call_on_resume = true}
function OnceTrigger:init(...)
  local call_on_resume = args.parse_at(3, 'OnceTrigger', SIGNATURE, select('#', ...), ...).call_on_resume == true
  self._flag_first = true
  self._flag_resumed = call_on_resume
end

OnceTrigger.__call = function(self)
  local fire = not self.finished
  self._flag_resumed = false
  self._flag_first = false
  return fire
end

function OnceTrigger:serialize(serializer)
  self._flag_first = util.ser_bool(serializer, '_flag_first', self._flag_first)
end

return OnceTrigger
