-- links/model/vision/resnet.lua: L.ResNetLayers(n_layers, {pretrained_model =,
-- initialW =, downsample_fb =}) and its fixed-depth variants L.ResNet50Layers,
-- L.ResNet101Layers, L.ResNet152Layers (as Chainer's resnet.py).
-- MSRA's residual networks with Chainer's child names, shapes and layers
-- (conv1, pool1, res2 .. res5, pool5, fc6, prob); forward, extract, predict
-- and prepare come from _image_model.lua.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local Linear = require('chainer.links.connection.linear').Linear
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local BuildingBlock = require('chainer.links.model.vision.building_block').BuildingBlock
local model = require 'chainer.links.model.vision._image_model'
local args = require 'chainer._args'
local I = require 'chainer.initializers'

local ResNetLayers = Chain:extend('ResNetLayers')
local blocks = { [50] = { 3, 4, 6, 3 }, [101] = { 3, 4, 23, 3 }, [152] = { 3, 8, 36, 3 } }
local ACCEPTED = args.accept { 'pretrained_model', 'n_layers', 'initialW', 'downsample_fb' }

-- ResNetLayers(n_layers, opts) or ResNetLayers{n_layers =, pretrained_model =, ...};
-- the ResNet<n>Layers below call it with their n_layers.
function ResNetLayers:init(n_layers, opts, ...)
  local name = getmetatable(self).__name
  if select('#', ...) > 0 then
    error(name .. ': too many arguments (expected n_layers and an options table or a path)', 3)
  end
  if type(n_layers) == 'table' or type(n_layers) == 'string' then n_layers, opts = nil, n_layers end
  local o = model.options(name, opts, ACCEPTED)
  n_layers = n_layers or o.n_layers
  local b = blocks[n_layers]
  if b == nil then error(name .. ': n_layers must be 50, 101 or 152 (got ' .. tostring(n_layers) .. ')', 3) end
  local w
  if model.has_pretrained(o) then w = I.Zero() else w = I.HeNormal(1.0) end
  if o.initialW ~= nil then w = o.initialW end
  local fb = o.downsample_fb and true or false
  self.conv1 = Convolution2D(3, 64, 7, { stride = 2, pad = 3, initialW = w })
  self.bn1 = BatchNormalization(64)
  self.res2 = BuildingBlock(b[1], 64, 64, 256, 1, w, fb)
  self.res3 = BuildingBlock(b[2], 256, 128, 512, 2, w, fb)
  self.res4 = BuildingBlock(b[3], 512, 256, 1024, 2, w, fb)
  self.res5 = BuildingBlock(b[4], 1024, 512, 2048, 2, w, fb)
  self.fc6 = Linear(2048, 1000)
  model.load_pretrained(self, name, o)
end

-- Chainer's layers, in forward order.
local function global_average_pooling(_, h)
  local s = model.shape_of(h)
  return F.reshape(F.average_pooling_2d(h, { s[3], s[4] }, { stride = 1 }), { s[1], s[2] })
end
model.finish_class(ResNetLayers, {
  { 'conv1', function(self, h) return F.relu(self.bn1(self.conv1(h))) end },
  { 'pool1', function(_, h) return F.max_pooling_2d(h, 3, { stride = 2 }) end },
  { 'res2', function(self, h) return self.res2(h) end },
  { 'res3', function(self, h) return self.res3(h) end },
  { 'res4', function(self, h) return self.res4(h) end },
  { 'res5', function(self, h) return self.res5(h) end },
  { 'pool5', global_average_pooling },
  { 'fc6', function(self, h) return self.fc6(h) end },
  { 'prob', function(_, h) return F.softmax(h) end },
}, { 103.063, 115.903, 123.152 }, { 'pool5' })
ResNetLayers.prepare = model.make_prepare('ResNetLayers.prepare', ResNetLayers._mean)
model.install(ResNetLayers)

-- ResNet<n>Layers(opts): ResNetLayers with n_layers fixed.
local function resnet(n)
  local name = 'ResNet' .. n .. 'Layers'
  local cls = ResNetLayers:extend(name)
  function cls:init(opts, ...)
    if type(opts) == 'table' and opts.n_layers ~= nil then
      error(name .. ': n_layers is fixed to ' .. n .. ' (use ResNetLayers for another depth)', 3)
    end
    ResNetLayers.init(self, n, opts, ...)
  end
  return cls
end

return {
  ResNetLayers = ResNetLayers,
  ResNet50Layers = resnet(50),
  ResNet101Layers = resnet(101),
  ResNet152Layers = resnet(152),
}
