-- links/connection/parameter.lua: L.Parameter(array), a link that holds one
-- parameter W (a copy of array) and returns it: l() is F.identity(l.W), so
-- gradients of the result reach W.  (Deprecated in Chainer since v1.5,
-- where parameters became Variables; kept for old code.)
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local ChainerParameter = require 'chainer.parameter'
local args = require 'chainer._args'

local Parameter = Link:extend('Parameter')
local SIGNATURE = args.signature {}

function Parameter:init(array, ...)
  args.parse('L.Parameter', SIGNATURE, select('#', ...), ...)   -- nothing after array
  local a = args.array('L.Parameter', 'array', array, 3)
  self.W = ChainerParameter(a:copy())
end

-- Chainer's forward(volatile='off'): the volatile flag is long gone; none is accepted.
function Parameter:forward(...)
  if select('#', ...) > 0 then error('L.Parameter: the call takes no arguments', 2) end
  return F.identity(self.W)
end

return { Parameter = Parameter }
