-- links/model/vision/googlenet.lua: L.GoogLeNet{pretrained_model =, initialW =}
-- (or L.GoogLeNet(path)).
-- BVLC's GoogLeNet with Chainer's child names, shapes and layers; the
-- auxiliary heads loss1_*/loss2_* exist for weight loading and the
-- 'loss1_fc2'/'loss2_fc2' outputs, as in Chainer.  forward, extract, predict
-- and prepare come from _image_model.lua.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local Linear = require('chainer.links.connection.linear').Linear
local Inception = require('chainer.links.connection.inception').Inception
local model = require 'chainer.links.model.vision._image_model'
local args = require 'chainer._args'
local I = require 'chainer.initializers'

local GoogLeNet = Chain:extend('GoogLeNet')
local ACCEPTED = args.accept { 'pretrained_model', 'initialW' }

function GoogLeNet:init(opts)
  local o = model.options('GoogLeNet', opts, ACCEPTED)
  local w
  if model.has_pretrained(o) then w = I.Zero() else w = I.LeCunUniform(1.0) end
  if o.initialW ~= nil then w = o.initialW end
  self.conv1 = Convolution2D(3, 64, 7, { stride = 2, pad = 3, initialW = w })
  self.conv2_reduce = Convolution2D(64, 64, 1, { initialW = w })
  self.conv2 = Convolution2D(64, 192, 3, { stride = 1, pad = 1, initialW = w })
  -- Chainer builds the Inception blocks with their default initializers.
  self.inc3a = Inception(192, 64, 96, 128, 16, 32, 32)
  self.inc3b = Inception(256, 128, 128, 192, 32, 96, 64)
  self.inc4a = Inception(480, 192, 96, 208, 16, 48, 64)
  self.inc4b = Inception(512, 160, 112, 224, 24, 64, 64)
  self.inc4c = Inception(512, 128, 128, 256, 24, 64, 64)
  self.inc4d = Inception(512, 112, 144, 288, 32, 64, 64)
  self.inc4e = Inception(528, 256, 160, 320, 32, 128, 128)
  self.inc5a = Inception(832, 256, 160, 320, 32, 128, 128)
  self.inc5b = Inception(832, 384, 192, 384, 48, 128, 128)
  self.loss3_fc = Linear(1024, 1000, { initialW = w })
  self.loss1_conv = Convolution2D(512, 128, 1, { initialW = w })
  self.loss1_fc1 = Linear(2048, 1024, { initialW = w })
  self.loss1_fc2 = Linear(1024, 1000, { initialW = w })
  self.loss2_conv = Convolution2D(528, 128, 1, { initialW = w })
  self.loss2_fc1 = Linear(2048, 1024, { initialW = w })
  self.loss2_fc2 = Linear(1024, 1000, { initialW = w })
  model.load_pretrained(self, 'GoogLeNet', o)
end

-- Chainer's layers, in forward order.
local function g_pool(_, h) return F.max_pooling_2d(h, 3, { stride = 2 }) end
local function g_lrn(h) return F.local_response_normalization(h, { n = 5, k = 1, alpha = 1e-4 / 5 }) end
local function g_inc(n) return function(self, h) return self[n](h) end end
local function g_aux(p)
  return function(self, h)
    h = F.relu(self[p .. '_conv'](F.average_pooling_2d(h, 5, { stride = 3 })))
    return self[p .. '_fc2'](F.relu(self[p .. '_fc1'](h)))
  end
end
model.finish_class(GoogLeNet, {
  { 'conv1', function(self, h) return F.relu(self.conv1(h)) end },
  { 'pool1', function(_, h) return g_lrn(F.max_pooling_2d(h, 3, { stride = 2 })) end },
  { 'conv2_reduce', function(self, h) return F.relu(self.conv2_reduce(h)) end },
  { 'conv2', function(self, h) return g_lrn(F.relu(self.conv2(h))) end },
  { 'pool2', g_pool },
  { 'inception_3a', g_inc('inc3a') },
  { 'inception_3b', g_inc('inc3b') },
  { 'pool3', g_pool },
  { 'inception_4a', g_inc('inc4a'), keep = true },
  { 'inception_4b', g_inc('inc4b') },
  { 'inception_4c', g_inc('inc4c') },
  { 'inception_4d', g_inc('inc4d'), keep = true },
  { 'inception_4e', g_inc('inc4e') },
  { 'pool4', g_pool },
  { 'inception_5a', g_inc('inc5a') },
  { 'inception_5b', g_inc('inc5b') },
  { 'pool5', function(_, h) return F.average_pooling_2d(h, 7, { stride = 1 }) end },
  { 'loss3_fc', function(self, h)
    local s = model.shape_of(h)
    if s[2] ~= 1024 or s[3] ~= 1 or s[4] ~= 1 then
      error(string.format('GoogLeNet: loss3_fc needs pool5 of shape (N, 1024, 1, 1), i.e. inputs of 223 or 224 ' ..
        'pixels a side (got pool5 (%s))', table.concat(s, ', ')), 4)
    end
    return self.loss3_fc(F.dropout(h, 0.4))
  end },
  { 'prob', function(_, h) return F.softmax(h) end },
  { 'loss1_fc2', g_aux('loss1'), from = 'inception_4a' },
  { 'loss2_fc2', g_aux('loss2'), from = 'inception_4d' },
}, { 104.0, 117.0, 123.0 }, { 'pool5' })
GoogLeNet.prepare = model.make_prepare('GoogLeNet.prepare', GoogLeNet._mean)
model.install(GoogLeNet)

return { GoogLeNet = GoogLeNet }
