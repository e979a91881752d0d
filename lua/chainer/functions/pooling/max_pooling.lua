-- functions/pooling/max_pooling.lua: F.max_pooling_1d/2d/3d/nd(x, ksize,
-- {stride = ksize, pad = 0, cover_all = true, return_indices = false}).
-- Cells outside the input count as -inf; cover_all (Chainer's default)
-- gives ceil-mode output sizes.  With return_indices the second result is
-- the int32 tensor of argmax positions inside each window (0 ..
-- prod(ksize)-1), the `indexes` upsampling_2d takes.  The gradient is a
-- scatter to the argmax cells, itself differentiable (a gather).
local args = require 'chainer._args'
local U = require 'chainer.functions.pooling._util'

local M = {}
M.MaxPoolingND = U.MaxPooling

local SIGNATURE = args.signature { 'ksize', 'stride', 'pad', 'cover_all', 'return_indices' }

local function max_pooling(fn, nsp, x, ...)
  local d = U.check_x(fn, x, nsp, 3)
  local o = args.parse(fn, SIGNATURE, select('#', ...), ...)
  nsp = nsp or d.ndim - 2
  local k, s, p = U.geometry(fn, o, nsp, 3)
  local cover_all = o.cover_all ~= false
  local geo = U.pooling_geometry(fn, d.shape, nsp, k, s, p, cover_all, 3)
  if nsp > 3 then error(string.format('%s: at most 3 spatial axes are supported (got %d)', fn, nsp), 3) end
  local f = setmetatable({}, U.MaxPooling)
  f.geo = geo
  local y = f:apply({ x })[1]
  if o.return_indices then return y, f.indexes end
  return y
end

function M.max_pooling_1d(x, ...) return max_pooling('max_pooling_1d', 1, x, ...) end
function M.max_pooling_2d(x, ...) return max_pooling('max_pooling_2d', 2, x, ...) end
function M.max_pooling_3d(x, ...) return max_pooling('max_pooling_3d', 3, x, ...) end
function M.max_pooling_nd(x, ...) return max_pooling('max_pooling_nd', nil, x, ...) end

return M
