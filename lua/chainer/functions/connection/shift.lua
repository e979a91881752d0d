-- functions/connection/shift.lua: F.shift(x, {ksize = 3, dilate = 1}).
--
-- Chainer's shift (Wu et al., "Shift: A Zero FLOP, Zero Parameter
-- Alternative to Spatial Convolutions"): the channels are cut into
-- kh*kw groups, and group i is moved by its offset in the kh x kw window
-- (times dilate), with zero fill; the centre group (no shift) is taken
-- last, and the last group gets the remaining channels.  The gradient is a
-- shift by the opposite offsets, so double backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Window = require 'chainer.functions._window'

local M = {}

local Shift = FunctionNode:extend('Shift')
M.Shift = Shift

local function idiv(a, b) return math.floor(a / b) end

function Shift:forward(inputs)
  local x = inputs[1]
  local kh, kw, dy, dx = self.kh, self.kw, self.dy, self.dx
  local n, c, h, w = x.shape[1], x.shape[2], x.shape[3], x.shape[4]
  local py, px = idiv(kh, 2) * math.abs(dy), idiv(kw, 2) * math.abs(dx)
  local xp = T.pad(x, { { 0, 0 }, { 0, 0 }, { py, py }, { px, px } })
  local ng = kh * kw
  local gs = idiv(c, ng)
  local parts = {}
  for i = 0, ng - 1 do
    local gi = i
    if gi == idiv(ng - 1, 2) then gi = ng - 1
    elseif gi == ng - 1 then gi = idiv(ng - 1, 2) end
    local ky = idiv(gi, kw) - idiv(kh, 2)
    local kx = gi % kw - idiv(kw, 2)
    local hs, ws = py - ky * dy, px - kx * dx
    local cs = i * gs
    local ce = i < ng - 1 and (i + 1) * gs or c
    if ce > cs then
      parts[#parts + 1] = xp:slice({ 0, n }, { cs, ce }, { hs, hs + h }, { ws, ws + w })
    end
  end
  return { T.concatenate(parts, 1) }
end

function Shift:backward(idx, gys)
  local f = setmetatable({}, Shift)
  f.kh, f.kw, f.dy, f.dx = self.kh, self.kw, -self.dy, -self.dx
  return { f:apply({ gys[1] })[1] }
end

local SIGNATURE = args.signature { 'ksize', 'dilate' }

function M.shift(x, ...)
  local fn = 'shift'
  local opts = args.parse(fn, SIGNATURE, select('#', ...), ...)
  local xd = args.array(fn, 'x', x)
  if xd.ptr.nd ~= 4 then
    error('shift: x must be 4-d (N, C, H, W), got shape ' .. T.shape_str(xd.shape), 2)
  end
  local k = Window.tuple(fn, 'ksize', opts.ksize, 2, 3, 1, 3)
  local d = Window.tuple(fn, 'dilate', opts.dilate, 2, 1, nil, 3)
  if k[1] % 2 ~= 1 or k[2] % 2 ~= 1 then
    error('shift: ksize must be odd (got ' .. T.shape_str(k) .. ')', 2)
  end
  if d[1] == 0 or d[2] == 0 then
    error('shift: dilate must be non-zero (got ' .. T.shape_str(d) .. ')', 2)
  end
  local f = setmetatable({}, Shift)
  f.kh, f.kw, f.dy, f.dx = k[1], k[2], d[1], d[2]
  return f:apply({ x })[1]
end

return M
