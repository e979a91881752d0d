-- functions/pooling/average_pooling.lua: F.average_pooling_2d(x, ksize,
-- {stride = ksize, pad = 0}) and F.average_pooling_1d/3d/nd(x, ksize,
-- {stride = ksize, pad = 0, pad_value = 0}).
-- Output sizes are floor-mode (Chainer's cover_all = false).  The 2-d
-- function counts zero padding in the divisor (prod(ksize) always), as
-- Chainer's average_pooling_2d does; the n-d ones do too with pad_value =
-- 0, while pad_value = false (Python None) divides by the number of cells
-- inside the input, and so does its gradient (each gy[o] is spread over
-- window o divided by that window's in-bounds cell count).  Linear, so
-- every order of gradient works.
local args = require 'chainer._args'
local U = require 'chainer.functions.pooling._util'

local M = {}
M.AveragePoolingND = U.WindowPool

-- average_pooling_2d has no pad_value (Chainer's own signature)
local SIGNATURE_2D = args.signature { 'ksize', 'stride', 'pad' }
local SIGNATURE = args.signature { 'ksize', 'stride', 'pad', 'pad_value' }

local function average_pooling(fn, nsp, nd_opts, x, ...)
  local d = U.check_x(fn, x, nsp, 3)
  local o = args.parse(fn, nd_opts and SIGNATURE or SIGNATURE_2D, select('#', ...), ...)
  nsp = nsp or d.ndim - 2
  if nsp > 3 then error(string.format('%s: at most 3 spatial axes are supported (got %d)', fn, nsp), 3) end
  local k, s, p = U.geometry(fn, o, nsp, 3)
  local mode = 0
  if nd_opts then
    local pv = o.pad_value
    if pv == false then mode = 1
    elseif pv ~= nil and pv ~= 0 then
      error(string.format('%s: pad_value must be 0 or false (Python None; got %s)', fn, tostring(pv)), 3)
    end
  end
  local geo = U.pooling_geometry(fn, d.shape, nsp, k, s, p, false, 3)
  return U.node(U.WindowPool, geo, mode):apply({ x })[1]
end

function M.average_pooling_2d(x, ...) return average_pooling('average_pooling_2d', 2, false, x, ...) end
function M.average_pooling_1d(x, ...) return average_pooling('average_pooling_1d', 1, true, x, ...) end
function M.average_pooling_3d(x, ...) return average_pooling('average_pooling_3d', 3, true, x, ...) end
function M.average_pooling_nd(x, ...) return average_pooling('average_pooling_nd', nil, true, x, ...) end

return M
