-- links/model/vision/building_block.lua: L.BuildingBlock(n_layer, in_channels,
--   mid_channels, out_channels, stride, initialW, downsample_fb = false)
-- One ResNet stage: children a (a BottleneckA) and b1 .. b{n_layer-1}
-- (BottleneckBs), run in that order.
local Chain = require('chainer.link').Chain
local BottleneckA = require('chainer.links.model.vision.bottleneck_a').BottleneckA
local BottleneckB = require('chainer.links.model.vision.bottleneck_b').BottleneckB
local args = require 'chainer._args'

local BuildingBlock = Chain:extend('BuildingBlock')
local SIGNATURE = args.signature { 'n_layer', 'in_channels', 'mid_channels', 'out_channels', 'stride', 'initialW',
  'downsample_fb' }

function BuildingBlock:init(...)
  local a = args.parse('L.BuildingBlock', SIGNATURE, select('#', ...), ...)
  local n_layer = a.n_layer
  if type(n_layer) ~= 'number' or n_layer < 1 or n_layer % 1 ~= 0 then
    error('BuildingBlock: n_layer must be a positive integer (got ' .. tostring(n_layer) .. ')', 3)
  end
  self.a = BottleneckA(a.in_channels, a.mid_channels, a.out_channels, a.stride, a.initialW, a.downsample_fb)
  rawset(self, '_forward', { 'a' })
  for i = 1, n_layer - 1 do
    local name = 'b' .. i
    self[name] = BottleneckB(a.out_channels, a.mid_channels, a.initialW)
    self._forward[#self._forward + 1] = name
  end
end

function BuildingBlock:forward(x)
  for _, n in ipairs(self._forward) do x = self[n](x) end
  return x
end

return { BuildingBlock = BuildingBlock }
