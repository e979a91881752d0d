-- functions/array/depth2space.lua: F.depth2space(X, r) and
-- F.space2depth(X, r) (subpixel rearrangements of (B, C, H, W) arrays).
-- Both are a reshape, a transpose and a reshape, as in Chainer, so the
-- gradients (and theirs) come from those nodes.
local args = require 'chainer._args'
local reshape = require('chainer.functions.array.reshape').reshape
local transpose = require('chainer.functions.array.transpose').transpose

local M = {}

local SIGNATURE = args.signature { 'r' }

local function check(fn, X, r)
  local v = args.parse(fn, SIGNATURE, 1, r)
  local d = args.array(fn, 'X', X)
  r = v.r
  if type(r) ~= 'number' or r ~= math.floor(r) or r < 1 then
    error(string.format('%s: r must be a positive integer (got %s)', fn, tostring(r)), 3)
  end
  if d.ptr.nd ~= 4 then error(string.format('%s: X must be 4-d (B, C, H, W) (got %d-d)', fn, d.ptr.nd), 3) end
  return d.shape, r
end

-- (B, r*r*C, H, W) -> (B, C, H*r, W*r)
function M.depth2space(X, r)
  local s
  s, r = check('depth2space', X, r)
  local B, C, H, W = s[1], s[2], s[3], s[4]
  if C % (r * r) ~= 0 then
    error(string.format('depth2space: the %d channels are not divisible by r*r = %d', C, r * r), 2)
  end
  local oC = C / (r * r)
  local y = reshape(X, { B, r, r, oC, H, W })
  y = transpose(y, { 0, 3, 4, 1, 5, 2 })
  return reshape(y, { B, oC, H * r, W * r })
end

-- (B, C, H, W) -> (B, r*r*C, H/r, W/r)
function M.space2depth(X, r)
  local s
  s, r = check('space2depth', X, r)
  local B, C, H, W = s[1], s[2], s[3], s[4]
  if H % r ~= 0 or W % r ~= 0 then
    error(string.format('space2depth: height %d and width %d must be divisible by r = %d', H, W, r), 2)
  end
  local oH, oW = H / r, W / r
  local y = reshape(X, { B, C, oH, r, oW, r })
  y = transpose(y, { 0, 3, 5, 1, 2, 4 })
  return reshape(y, { B, r * r * C, oH, oW })
end

return M
