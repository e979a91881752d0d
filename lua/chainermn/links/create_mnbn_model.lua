-- chainermn/links/create_mnbn_model.lua:
-- chainermn.links.create_mnbn_model(link, comm, communication_backend = 'auto'),
-- as ChainerMN's.
--
-- Returns a deep copy of `link` in which every BatchNormalization (and
-- subclass, as ChainerMN's isinstance) is a MultiNodeBatchNormalization
-- with the same size, decay, eps, dtype, gamma and beta (values copied) and
-- population statistics (avg_mean, avg_var, N).  `link` itself is left as
-- it is.  Chains, ChainLists and Sequentials are searched at any depth.
local Object = require('chainer.class').Object
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local MultiNodeBatchNormalization = require('chainermn.links.batch_normalization').MultiNodeBatchNormalization

local M = {}
local FN = 'create_mnbn_model'

local function is_batch_normalization(l)
  return Object.isinstance(l, BatchNormalization) and not Object.isinstance(l, MultiNodeBatchNormalization)
end

-- The MultiNodeBatchNormalization that replaces bn (at `path` in the model).
local function convert(bn, comm, backend, path)
  local where = path == '' and 'the BatchNormalization' or ("the BatchNormalization at '" .. path .. "'")
  if bn.avg_mean == nil then
    error(string.format('%s: %s has no size yet (give it a size, or call the model once first)', FN, where), 4)
  end
  if bn.axis ~= nil then
    error(string.format('%s: %s normalises over axis %s, which MultiNodeBatchNormalization does not take', FN,
      where, tostring(bn.axis)), 4)
  end
  local mean = bn.avg_mean
  local mnbn = MultiNodeBatchNormalization(mean.shape, comm, { decay = bn.decay, eps = bn.eps, dtype = mean.dtype,
    use_gamma = bn.gamma ~= nil, use_beta = bn.beta ~= nil, communication_backend = backend })
  if mean.ptr.dev >= 0 then mnbn:to_device(mean.ptr.dev) end
  if bn.gamma ~= nil then mnbn.gamma.array:copy_(bn.gamma.array) end
  if bn.beta ~= nil then mnbn.beta.array:copy_(bn.beta.array) end
  rawset(mnbn, 'avg_mean', bn.avg_mean:copy())
  rawset(mnbn, 'avg_var', bn.avg_var:copy())
  rawset(mnbn, 'N', bn.N)
  return mnbn
end

-- Puts `new` wherever `parent` holds `old`: its field (a Chain's child by
-- name, a ChainList's by index) and its lists of children and layers.
local function replace_child(parent, old, new)
  rawset(new, 'name', rawget(old, 'name'))
  for k, v in pairs(parent) do
    if v == old then rawset(parent, k, new) end
  end
  for _, list_name in ipairs({ '_children', '_layers' }) do
    local list = rawget(parent, list_name)
    if type(list) == 'table' then
      for k, v in pairs(list) do
        if v == old then list[k] = new end
      end
    end
  end
end

local function convert_children(link, comm, backend, path)
  local children = {}
  for child in link:children() do children[#children + 1] = child end
  for _, child in ipairs(children) do
    local child_path = path .. '/' .. tostring(rawget(child, 'name'))
    if is_batch_normalization(child) then
      replace_child(link, child, convert(child, comm, backend, child_path))
    else
      convert_children(child, comm, backend, child_path)
    end
  end
end

function M.create_mnbn_model(link, comm, communication_backend)
  if type(link) ~= 'table' or link._is_link ~= true then
    error(FN .. ': link must be a chainer.Link (got ' .. type(link) .. ')', 2)
  end
  if type(comm) ~= 'table' or type(comm.allreduce) ~= 'function' then
    error(FN .. ': comm must be a chainermn communicator (got ' .. type(comm) .. ')', 2)
  end
  local backend = communication_backend or 'auto'
  if is_batch_normalization(link) then return convert(link, comm, backend, '') end
  local copy = link:copy('copy')
  convert_children(copy, comm, backend, '')
  return copy
end

return M
