-- links/model/vision/vgg.lua: L.VGG16Layers{pretrained_model =, initialW =,
-- initial_bias =} (or L.VGG16Layers(path)).
-- The 16-layer VGG network with Chainer's child names, shapes and layers
-- (conv1_1 .. conv5_3, pool1 .. pool5, fc6, fc7, fc8, prob); forward,
-- extract, predict and prepare come from _image_model.lua.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local Linear = require('chainer.links.connection.linear').Linear
local model = require 'chainer.links.model.vision._image_model'
local args = require 'chainer._args'
local I = require 'chainer.initializers'

local VGG16Layers = Chain:extend('VGG16Layers')
local vgg_convs = {
  { 'conv1_1', 3, 64 }, { 'conv1_2', 64, 64 }, { 'conv2_1', 64, 128 }, { 'conv2_2', 128, 128 },
  { 'conv3_1', 128, 256 }, { 'conv3_2', 256, 256 }, { 'conv3_3', 256, 256 },
  { 'conv4_1', 256, 512 }, { 'conv4_2', 512, 512 }, { 'conv4_3', 512, 512 },
  { 'conv5_1', 512, 512 }, { 'conv5_2', 512, 512 }, { 'conv5_3', 512, 512 },
}
local ACCEPTED = args.accept { 'pretrained_model', 'initialW', 'initial_bias' }

function VGG16Layers:init(opts)
  local o = model.options('VGG16Layers', opts, ACCEPTED)
  local w, b
  if model.has_pretrained(o) then w, b = I.Zero(), I.Zero() else w, b = I.Normal(0.01), I.Zero() end
  if o.initialW ~= nil then w = o.initialW end
  if o.initial_bias ~= nil then b = o.initial_bias end
  for _, c in ipairs(vgg_convs) do
    self[c[1]] = Convolution2D(c[2], c[3], 3, { stride = 1, pad = 1, initialW = w, initial_bias = b })
  end
  self.fc6 = Linear(512 * 7 * 7, 4096, { initialW = w, initial_bias = b })
  self.fc7 = Linear(4096, 4096, { initialW = w, initial_bias = b })
  self.fc8 = Linear(4096, 1000, { initialW = w, initial_bias = b })
  model.load_pretrained(self, 'VGG16Layers', o)
end

-- Chainer's layers, in forward order.
local function vgg_pool(_, h) return F.max_pooling_2d(h, 2) end
local vgg_layers = {}
for _, blk in ipairs({ { 'conv1_1', 'conv1_2' }, { 'conv2_1', 'conv2_2' }, { 'conv3_1', 'conv3_2', 'conv3_3' },
  { 'conv4_1', 'conv4_2', 'conv4_3' }, { 'conv5_1', 'conv5_2', 'conv5_3' } }) do
  for _, n in ipairs(blk) do
    vgg_layers[#vgg_layers + 1] = { n, function(self, h) return F.relu(self[n](h)) end }
  end
  vgg_layers[#vgg_layers + 1] = { 'pool' .. blk[1]:sub(5, 5), vgg_pool }
end
local function vgg_fc(n)
  return function(self, h)
    local s = model.shape_of(h)
    if n == 'fc6' and (s[2] ~= 512 or s[3] ~= 7 or s[4] ~= 7) then
      error(string.format('VGG16Layers: fc6 needs pool5 of shape (N, 512, 7, 7), i.e. inputs of 193..224 ' ..
        'pixels a side (got pool5 (%s))', table.concat(s, ', ')), 4)
    end
    return F.dropout(F.relu(self[n](h)), 0.5)
  end
end
vgg_layers[#vgg_layers + 1] = { 'fc6', vgg_fc('fc6') }
vgg_layers[#vgg_layers + 1] = { 'fc7', vgg_fc('fc7') }
vgg_layers[#vgg_layers + 1] = { 'fc8', function(self, h) return self.fc8(h) end }
vgg_layers[#vgg_layers + 1] = { 'prob', function(_, h) return F.softmax(h) end }
model.finish_class(VGG16Layers, vgg_layers, { 103.939, 116.779, 123.68 }, { 'fc7' })
VGG16Layers.prepare = model.make_prepare('VGG16Layers.prepare', VGG16Layers._mean)
model.install(VGG16Layers)

return { VGG16Layers = VGG16Layers }
