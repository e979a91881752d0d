-- links/model/vision/vgg.lua: L.VGG16Layers and L.VGG19Layers
-- {pretrained_model =, initialW =, initial_bias =} (or L.VGG16Layers(path)).
-- The VGG networks of Simonyan and Zisserman with Chainer's child names,
-- shapes and layers (conv1_1 .. conv5_3, and conv3_4, conv4_4, conv5_4 in the
-- 19-layer one; pool1 .. pool5, fc6, fc7, fc8, prob); forward, extract,
-- predict and prepare come from _image_model.lua.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local Linear = require('chainer.links.connection.linear').Linear
local model = require 'chainer.links.model.vision._image_model'
local args = require 'chainer._args'
local I = require 'chainer.initializers'

local ACCEPTED = args.accept { 'pretrained_model', 'initialW', 'initial_bias' }

-- The convolution blocks of each depth: {name, in_channels, out_channels}.
local BLOCKS = {
  [16] = {
    { { 'conv1_1', 3, 64 }, { 'conv1_2', 64, 64 } },
    { { 'conv2_1', 64, 128 }, { 'conv2_2', 128, 128 } },
    { { 'conv3_1', 128, 256 }, { 'conv3_2', 256, 256 }, { 'conv3_3', 256, 256 } },
    { { 'conv4_1', 256, 512 }, { 'conv4_2', 512, 512 }, { 'conv4_3', 512, 512 } },
    { { 'conv5_1', 512, 512 }, { 'conv5_2', 512, 512 }, { 'conv5_3', 512, 512 } },
  },
}
BLOCKS[19] = {
  BLOCKS[16][1], BLOCKS[16][2],
  { { 'conv3_1', 128, 256 }, { 'conv3_2', 256, 256 }, { 'conv3_3', 256, 256 }, { 'conv3_4', 256, 256 } },
  { { 'conv4_1', 256, 512 }, { 'conv4_2', 512, 512 }, { 'conv4_3', 512, 512 }, { 'conv4_4', 512, 512 } },
  { { 'conv5_1', 512, 512 }, { 'conv5_2', 512, 512 }, { 'conv5_3', 512, 512 }, { 'conv5_4', 512, 512 } },
}
-- the 19-layer model's extra convolutions, registered after fc8 as Chainer does
local EXTRA_19 = { conv3_4 = true, conv4_4 = true, conv5_4 = true }

local function vgg_class(n_layers)
  local name = 'VGG' .. n_layers .. 'Layers'
  local cls = Chain:extend(name)
  local blocks = BLOCKS[n_layers]

  function cls:init(opts)
    local o = model.options(name, opts, ACCEPTED)
    local w, b
    if model.has_pretrained(o) then w, b = I.Zero(), I.Zero() else w, b = I.Normal(0.01), I.Zero() end
    if o.initialW ~= nil then w = o.initialW end
    if o.initial_bias ~= nil then b = o.initial_bias end
    local function conv(c) return Convolution2D(c[2], c[3], 3, { stride = 1, pad = 1, initialW = w, initial_bias = b }) end
    for _, blk in ipairs(blocks) do
      for _, c in ipairs(blk) do
        if not EXTRA_19[c[1]] then self[c[1]] = conv(c) end
      end
    end
    self.fc6 = Linear(512 * 7 * 7, 4096, { initialW = w, initial_bias = b })
    self.fc7 = Linear(4096, 4096, { initialW = w, initial_bias = b })
    self.fc8 = Linear(4096, 1000, { initialW = w, initial_bias = b })
    for _, blk in ipairs(blocks) do
      for _, c in ipairs(blk) do
        if EXTRA_19[c[1]] then self[c[1]] = conv(c) end
      end
    end
    model.load_pretrained(self, name, o)
  end

  -- Chainer's layers, in forward order.
  local function pool(_, h) return F.max_pooling_2d(h, 2) end
  local layers = {}
  for i, blk in ipairs(blocks) do
    for _, c in ipairs(blk) do
      local n = c[1]
      layers[#layers + 1] = { n, function(self, h) return F.relu(self[n](h)) end }
    end
    layers[#layers + 1] = { 'pool' .. i, pool }
  end
  local function fc(n)
    return function(self, h)
      local s = model.shape_of(h)
      if n == 'fc6' and (s[2] ~= 512 or s[3] ~= 7 or s[4] ~= 7) then
        error(string.format('%s: fc6 needs pool5 of shape (N, 512, 7, 7), i.e. inputs of 193..224 ' ..
          'pixels a side (got pool5 (%s))', name, table.concat(s, ', ')), 4)
      end
      return F.dropout(F.relu(self[n](h)), 0.5)
    end
  end
  layers[#layers + 1] = { 'fc6', fc('fc6') }
  layers[#layers + 1] = { 'fc7', fc('fc7') }
  layers[#layers + 1] = { 'fc8', function(self, h) return self.fc8(h) end }
  layers[#layers + 1] = { 'prob', function(_, h) return F.softmax(h) end }
  model.finish_class(cls, layers, { 103.939, 116.779, 123.68 }, { 'fc7' })
  cls.prepare = model.make_prepare(name .. '.prepare', cls._mean)
  model.install(cls)
  return cls
end

return { VGG16Layers = vgg_class(16), VGG19Layers = vgg_class(19) }
