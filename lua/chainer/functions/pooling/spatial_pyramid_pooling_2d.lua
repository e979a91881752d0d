-- functions/pooling/spatial_pyramid_pooling_2d.lua:
-- F.spatial_pyramid_pooling_2d(x, pyramid_height, {pooling = 'max'}).
-- Level l pools x (N, C, H, W) into 2^l x 2^l bins (ksize = stride =
-- ceil(H / 2^l), the remainder padded evenly, cover_all), and the levels
-- are flattened and concatenated: (N, C * sum_l 4^l, 1, 1), as Chainer.
local args = require 'chainer._args'
local U = require 'chainer.functions.pooling._util'
local H = require 'chainer.functions.math._helpers'

local M = {}

local SIGNATURE = args.signature { 'pyramid_height', 'pool_type', 'pooling' }

function M.spatial_pyramid_pooling_2d(x, ...)
  local fn = 'spatial_pyramid_pooling_2d'
  local d = U.check_x(fn, x, 2)
  local o = args.parse(fn, SIGNATURE, select('#', ...), ...)
  local ph = o.pyramid_height
  if type(ph) ~= 'number' or ph < 1 or ph ~= math.floor(ph) then
    error(string.format('%s: pyramid_height must be a positive integer (got %s)', fn, tostring(ph)), 2)
  end
  local pooling = o.pooling or o.pool_type or 'max'
  if pooling ~= 'max' then
    error(string.format("%s: pooling must be 'max' (got %s)", fn, tostring(pooling)), 2)
  end
  local F = H.F()
  local n, c, h, w = d.shape[1], d.shape[2], d.shape[3], d.shape[4]
  local ys = {}
  for level = 0, ph - 1 do
    local bins = 2 ^ level
    local kh, kw = math.ceil(h / bins), math.ceil(w / bins)
    local pad = { math.floor((kh * bins - h) / 2), math.floor((kw * bins - w) / 2) }
    local y = F.max_pooling_2d(x, { kh, kw }, { stride = { kh, kw }, pad = pad, cover_all = true })
    local s = y.shape
    ys[#ys + 1] = F.reshape(y, { n, s[2] * s[3] * s[4], 1, 1 })
  end
  if #ys == 1 then return ys[1] end
  return F.concat(ys, 1)
end

return M
