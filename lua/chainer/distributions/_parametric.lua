-- distributions/_parametric.lua: a distribution class from the list of its
-- parameters, for the families whose constructor is Chainer's
-- Family(p1, p2, ..., validate_args=True):
--
--   local Gamma = parametric('Gamma', { { 'k', H.positive }, { 'theta', H.positive } })
--
-- Each entry names a parameter and the checks validate_args runs on it, in
-- order.  The class gets the constructor Family(p1, p2, ..., {validate_args
-- = ...}) (each parameter read as a float Variable, all broadcast to one
-- shape), `params` and `batch_shape`.  With {event = 'the components'} the
-- parameters' last axis is the event (event_shape {K}, not part of
-- batch_shape) and must exist.  A family adds its densities and moments.
local args = require 'chainer._args'
local base = require 'chainer.distributions.distribution'
local H = base.helpers

local OPTIONS = args.accept { 'validate_args' }

local function parametric(name, params, spec)
  spec = spec or {}
  local cls = base.Distribution:extend(name)
  local names = {}
  for i, p in ipairs(params) do names[i] = p[1] end
  local first = names[1]

  function cls:init(...)
    local fn = getmetatable(self).__name
    local given = { ... }
    local _, validate = H.options(fn, given[#params + 1], OPTIONS)
    local values = {}
    for i, p in ipairs(names) do values[i] = H.param(fn, p, given[i]) end
    if #values > 1 then values = { H.broadcast(fn, names, unpack(values, 1, #values)) } end
    if spec.event and #values[1].shape == 0 then
      args.fail(string.format('%s: %s needs at least one axis (%s)', fn, first, spec.event), 2)
    end
    for i, p in ipairs(names) do self[p] = values[i] end
    if not validate then return end
    for i, p in ipairs(params) do
      for c = 2, #p do p[c](fn, p[1], values[i]) end
    end
  end

  function cls:_get_params()
    local t = {}
    for _, p in ipairs(names) do t[p] = self[p] end
    return t
  end

  if spec.event then
    function cls:_get_batch_shape() return H.leading_shape(self[first].shape) end
    function cls:_get_event_shape()
      local s = self[first].shape
      return { s[#s] }
    end
  else
    function cls:_get_batch_shape() return self[first].shape end
  end
  return cls
end

return parametric
