-- functions/pooling/unpooling.lua: F.unpooling_1d/2d/nd(x, ksize,
-- {stride = ksize, pad = 0, outsize = nil, cover_all = true}): the
-- adjoint of sum pooling; every input cell is copied into its ksize window
-- of the output (overlapping windows add up).  outsize defaults to
-- Chainer's get_deconv_outsize.  Linear (its gradient is window sums).
local args = require 'chainer._args'
local U = require 'chainer.functions.pooling._util'
local Window = require 'chainer.functions._window'

local M = {}
M.UnpoolingND = U.WindowSpread

local SIGNATURE = args.signature { 'ksize', 'stride', 'pad', 'outsize', 'cover_all' }

local function unpooling(fn, nsp, x, ...)
  local d = U.check_x(fn, x, nsp, 3)
  local o = args.parse(fn, SIGNATURE, select('#', ...), ...)
  nsp = nsp or d.ndim - 2
  if nsp > 3 then error(string.format('%s: at most 3 spatial axes are supported (got %d)', fn, nsp), 3) end
  local k, s, p = U.geometry(fn, o, nsp, 3)
  local cover_all = o.cover_all ~= false
  local shape = d.shape
  local in_size, out_size = {}, {}
  local given = (o.outsize ~= nil and o.outsize ~= false) and Window.tuple(fn, 'outsize', o.outsize, nsp, nil, 0, 3) or nil
  for i = 1, nsp do
    out_size[i] = shape[i + 2]           -- the pooled side of the window geometry
    in_size[i] = given and given[i] or Window.deconv_outsize(out_size[i], k[i], s[i], p[i], cover_all)
    if in_size[i] < 1 then
      error(string.format('%s: the output would be empty on spatial axis %d', fn, i - 1), 3)
    end
    if Window.outsize(in_size[i], k[i], s[i], p[i], cover_all) ~= out_size[i] then
      error(string.format('%s: outsize %d on spatial axis %d does not fit input size %d (ksize %d, stride %d, pad %d)',
        fn, in_size[i], i - 1, out_size[i], k[i], s[i], p[i]), 3)
    end
  end
  local geo = { nsp = nsp, k = k, s = s, p = p, in_size = in_size, out_size = out_size }
  return U.node(U.WindowSpread, geo, 2):apply({ x })[1]
end

function M.unpooling_1d(x, ...) return unpooling('unpooling_1d', 1, x, ...) end
function M.unpooling_2d(x, ...) return unpooling('unpooling_2d', 2, x, ...) end
function M.unpooling_3d(x, ...) return unpooling('unpooling_3d', 3, x, ...) end
function M.unpooling_nd(x, ...) return unpooling('unpooling_nd', nil, x, ...) end

return M
