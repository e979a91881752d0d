-- chainermn/extensions/allreduce_persistent.lua:
-- chainermn.extensions.AllreducePersistent(model, comm), as ChainerMN's.
--
-- An extension (once per epoch, before the evaluators) that replaces each
-- floating-point persistent tensor of the model (BatchNormalization's
-- avg_mean and avg_var, say) by its mean over the ranks, so that the
-- population statistics count every rank's examples.  Numbers, booleans and
-- integer tensors are left alone.  A collective: every rank's trainer must
-- run it (it can also be called directly, ext()).
local T = require 'chainer.tensor'
local extension = require 'chainer.training.extension'

local AllreducePersistent = extension.Extension:extend('AllreducePersistent')
AllreducePersistent.trigger = { 1, 'epoch' }
AllreducePersistent.priority = extension.PRIORITY_WRITER + 1   -- before the evaluators

local FLOAT = { float16 = false, float32 = true, float64 = true }

function AllreducePersistent:init(model, comm)
  if type(model) ~= 'table' or model._is_link ~= true then
    error('AllreducePersistent: model must be a chainer.Link (got ' .. type(model) .. ')', 3)
  end
  if type(comm) ~= 'table' or type(comm.allreduce) ~= 'function' then
    error('AllreducePersistent: comm must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
  self.model, self.comm = model, comm
end

-- The float tensors among the persistents, in a fixed order (link path,
-- then name), the same on every rank with the same model.
local function float_persistents(model)
  local out = {}
  for path, link in model:namedlinks() do
    for _, name in ipairs(link:_persistent_names()) do
      local v = rawget(link, name)
      if T.is_tensor(v) and FLOAT[v.dtype] then out[#out + 1] = { path .. '/' .. name, link, name, v } end
    end
  end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  return out
end

AllreducePersistent.__call = function(self)
  local comm = self.comm
  for _, e in ipairs(float_persistents(self.model)) do
    local v = e[4]
    v:copy_(comm:allreduce(v) * (1 / comm.size))   -- (allreduce checks that the ranks agree)
  end
end

return { AllreducePersistent = AllreducePersistent }
