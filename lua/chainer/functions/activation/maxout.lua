-- functions/activation/maxout.lua: F.maxout(x, pool_size, {axis = 1}): the
-- channel axis (size C) is split into C / pool_size groups of pool_size and
-- the maximum of each group is kept.  Composed of reshape and max.
local args = require 'chainer._args'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'pool_size', 'axis' }

function M.maxout(x, pool_size, opts)
  local F = H.F()
  local d = args.float_array('maxout', 'x', x)
  if args.is_options(pool_size) then
    opts = pool_size
    pool_size = opts.pool_size
  end
  local axis = H.number_or_option('maxout', opts, OPTIONS, 'axis', 1)
  if type(pool_size) ~= 'number' or pool_size ~= math.floor(pool_size) or pool_size < 1 then
    error('maxout: pool_size must be a positive integer (got ' .. tostring(pool_size) .. ')', 2)
  end
  local s = d.shape
  axis = H.axis(axis, #s, 'maxout', 2)
  local c = s[axis + 1]
  if c % pool_size ~= 0 then
    error(string.format('maxout: the size of axis %d (%d) is not a multiple of pool_size (%d)', axis, c, pool_size), 2)
  end
  local ns = {}
  for i = 1, axis do ns[i] = s[i] end
  ns[axis + 1] = c / pool_size
  ns[axis + 2] = pool_size
  for i = axis + 2, #s do ns[i + 1] = s[i] end
  return F.max(F.reshape(x, ns), { axis = axis + 1 })
end

return M
