-- chainer.utils.conv: Chainer's output-size formulas for a sliding window
-- (chainer.utils.get_conv_outsize / get_deconv_outsize).  The convolution,
-- deconvolution, pooling and im2col functions compute their output shapes
-- with these (through functions/_window.lua), so there is one formula.
local M = {}

local function check_int(fn, name, v, min)
  if type(v) ~= 'number' or v ~= math.floor(v) or v < min then
    error(string.format('%s: %s must be an integer >= %d (got %s)', fn, name, min, tostring(v)), 4)
  end
end

-- (error level: the caller of get_conv_outsize / get_deconv_outsize)
local function check_all(fn, size, k, s, p, cover_all, d)
  check_int(fn, 'size', size, 0)
  check_int(fn, 'k', k, 1)
  check_int(fn, 's', s, 1)
  check_int(fn, 'p', p, 0)
  check_int(fn, 'd', d, 1)
  if type(cover_all) ~= 'boolean' then
    error(string.format('%s: cover_all must be a boolean (got %s)', fn, tostring(cover_all)), 3)
  end
end

-- The public, checked form of a formula (cover_all = false, d = 1 by default).
local function checked(fn, formula)
  return function(size, k, s, p, cover_all, d)
    if cover_all == nil then cover_all = false end
    d = d or 1
    check_all(fn, size, k, s, p, cover_all, d)
    return formula(size, k, s, p, cover_all, d)
  end
end

-- get_conv_outsize(size, k, s, p, cover_all = false, d = 1): how many
-- positions a window of k (dilated by d) takes, stride s, over `size`
-- padded by p on both sides; cover_all adds the last partial window.
-- The unchecked formula is M.conv_outsize, for callers that validated their
-- arguments already (the functions' front doors, on every call).
function M.conv_outsize(size, k, s, p, cover_all, d)
  local dk = k + (k - 1) * ((d or 1) - 1)
  if cover_all then return math.floor((size + p * 2 - dk + s - 1) / s) + 1 end
  return math.floor((size + p * 2 - dk) / s) + 1
end

M.get_conv_outsize = checked('get_conv_outsize', M.conv_outsize)

-- get_deconv_outsize(size, k, s, p, cover_all = false, d = 1): the input
-- size whose convolution with these settings gives `size` (the output size
-- of the transposed convolution).
-- (unchecked: M.deconv_outsize)
function M.deconv_outsize(size, k, s, p, cover_all, d)
  local dk = (k - 1) * (d or 1) + 1
  if cover_all then return s * (size - 1) + dk - s + 1 - 2 * p end
  return s * (size - 1) + dk - 2 * p
end

M.get_deconv_outsize = checked('get_deconv_outsize', M.deconv_outsize)

return M
