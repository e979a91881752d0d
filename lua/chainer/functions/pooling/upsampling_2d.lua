-- functions/pooling/upsampling_2d.lua: F.upsampling_2d(x, indexes, ksize,
-- {stride = ksize, pad = 0, outsize = nil, cover_all = true}): the
-- inverse of max_pooling_2d; each x cell goes to the argmax position
-- `indexes` (from max_pooling_2d's return_indices) of its window, zeros
-- elsewhere.  Linear; its gradient gathers at the same positions.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local U = require 'chainer.functions.pooling._util'
local Window = require 'chainer.functions._window'

local M = {}
M.Upsampling2D = U.IndexScatter

local SIGNATURE = args.signature { 'ksize', 'stride', 'pad', 'outsize', 'cover_all' }

function M.upsampling_2d(x, indexes, ...)
  local fn = 'upsampling_2d'
  local d = U.check_x(fn, x, 2)
  local ix = args.int_array(fn, 'indexes', indexes)
  if not require('chainer.functions.math.sum_to').shape_equal(ix, d.shape) then
    error(string.format('%s: indexes has shape %s, expected the shape of x %s', fn, T.shape_str(ix.shape),
      T.shape_str(d.shape)), 2)
  end
  local o = args.parse(fn, SIGNATURE, select('#', ...), ...)
  local k, s, p = U.geometry(fn, o, 2, 2)
  local cover_all = o.cover_all ~= false
  local given = (o.outsize ~= nil and o.outsize ~= false) and Window.tuple(fn, 'outsize', o.outsize, 2, nil, 0, 2) or nil
  local in_size, out_size = {}, {}
  for i = 1, 2 do
    out_size[i] = d.shape[i + 2]
    in_size[i] = given and given[i] or Window.deconv_outsize(out_size[i], k[i], s[i], p[i], cover_all)
    if in_size[i] < 1 then error(string.format('%s: the output would be empty on spatial axis %d', fn, i - 1), 2) end
  end
  -- an index outside the window would be dropped silently by the scatter
  if ix.size > 0 then
    local lo, hi = ix:min():item(), ix:max():item()
    if lo < 0 or hi >= k[1] * k[2] then
      error(string.format('%s: indexes must lie in 0..%d (positions inside a %dx%d window), got %d..%d', fn,
        k[1] * k[2] - 1, k[1], k[2], lo, hi), 2)
    end
  end
  local geo = { nsp = 2, k = k, s = s, p = p, in_size = in_size, out_size = out_size }
  return U.node(U.IndexScatter, geo, nil, ix):apply({ x })[1]
end

return M
