-- links/model/vision.lua: model zoo architectures VGG16Layers,
-- ResNet50Layers/ResNet101Layers/ResNet152Layers and GoogLeNet, with
-- Chainer's child names, so Chainer's converted weight files (.npz) load:
--   local vgg = L.VGG16Layers{pretrained_model = 'VGG_ILSVRC_16_layers.npz'}
--   local feats = vgg(x, {layers = {'fc7', 'prob'}})   -- {fc7 = ..., prob = ...}
-- Without pretrained_model the weights are randomly initialised (nothing is
-- downloaded).  `forward(x, {layers = {...}})` returns a table of the
-- requested activations (default {'prob'}).
local F = require 'chainer.functions'
local config = require('chainer.config').config
local link = require 'chainer.link'
local Chain = link.Chain
local conv = require 'chainer.links.connection.convolution_nd'
local Convolution2D = conv.Convolution2D
local Linear = require('chainer.links.connection.linear').Linear
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local Inception = require('chainer.links.connection.inception').Inception
local I = require 'chainer.initializers'

local M = {}

-- Checked before any parameter is allocated.
local function check_pretrained(self, opts)
  if opts ~= nil and type(opts) ~= 'table' then
    error(getmetatable(self).__name .. ': options must be a table {pretrained_model = path}', 4)
  end
  local path = opts and opts.pretrained_model
  if path == 'auto' then
    error(getmetatable(self).__name .. ": pretrained_model = 'auto' would download weights; pass the path of " ..
      'a converted .npz file instead', 4)
  end
end

local function load_pretrained(self, opts)
  local path = opts and opts.pretrained_model
  if path ~= nil and path ~= false then
    require('chainer.serializers').load_npz(path, self)
  end
end

-- Runs `steps` ({name, fn} pairs) until every requested layer is computed.
local function run_layers(steps, x, layers)
  layers = layers or { 'prob' }
  local want, left = {}, 0
  for _, l in ipairs(layers) do if not want[l] then want[l] = true left = left + 1 end end
  local out = {}
  local h = x
  for _, s in ipairs(steps) do
    if left == 0 then break end
    h = s[2](h)
    if want[s[1]] then
      out[s[1]] = h
      left = left - 1
    end
  end
  if left > 0 then
    for l in pairs(want) do
      if out[l] == nil then error("forward: unknown layer '" .. tostring(l) .. "'", 3) end
    end
  end
  return out
end

---------------------------------------------------------------------------
-- VGG16Layers
---------------------------------------------------------------------------
local VGG16Layers = Chain:extend('VGG16Layers')
local vgg_convs = {
  { 'conv1_1', 3, 64 }, { 'conv1_2', 64, 64 }, { 'conv2_1', 64, 128 }, { 'conv2_2', 128, 128 },
  { 'conv3_1', 128, 256 }, { 'conv3_2', 256, 256 }, { 'conv3_3', 256, 256 },
  { 'conv4_1', 256, 512 }, { 'conv4_2', 512, 512 }, { 'conv4_3', 512, 512 },
  { 'conv5_1', 512, 512 }, { 'conv5_2', 512, 512 }, { 'conv5_3', 512, 512 },
}
function VGG16Layers:init(opts)
  check_pretrained(self, opts)
  local kw = { pad = 1, initialW = I.Normal(0.01), initial_bias = I.Zero() }
  for _, c in ipairs(vgg_convs) do self[c[1]] = Convolution2D(c[2], c[3], 3, { stride = 1, pad = 1,
    initialW = kw.initialW, initial_bias = kw.initial_bias }) end
  self.fc6 = Linear(512 * 7 * 7, 4096, { initialW = kw.initialW, initial_bias = kw.initial_bias })
  self.fc7 = Linear(4096, 4096, { initialW = kw.initialW, initial_bias = kw.initial_bias })
  self.fc8 = Linear(4096, 1000, { initialW = kw.initialW, initial_bias = kw.initial_bias })
  load_pretrained(self, opts)
end
function VGG16Layers:_steps()
  local s = {}
  local function add(n, f) s[#s + 1] = { n, f } end
  local blocks = { { 'conv1_1', 'conv1_2', 'pool1' }, { 'conv2_1', 'conv2_2', 'pool2' },
    { 'conv3_1', 'conv3_2', 'conv3_3', 'pool3' }, { 'conv4_1', 'conv4_2', 'conv4_3', 'pool4' },
    { 'conv5_1', 'conv5_2', 'conv5_3', 'pool5' } }
  for _, b in ipairs(blocks) do
    for _, n in ipairs(b) do
      if n:sub(1, 4) == 'pool' then add(n, function(h) return F.max_pooling_2d(h, 2, { stride = 2 }) end)
      else local l = self[n]; add(n, function(h) return F.relu(l(h)) end) end
    end
  end
  add('fc6', function(h) return F.relu(self.fc6(h)) end)
  add('fc7', function(h) return F.relu(self.fc7(F.dropout(h, 0.5))) end)
  add('fc8', function(h) return self.fc8(F.dropout(h, 0.5)) end)
  add('prob', function(h) return F.softmax(h) end)
  return s
end
function VGG16Layers:forward(x, opts)
  return run_layers(self:_steps(), x, opts and opts.layers)
end
M.VGG16Layers = VGG16Layers

---------------------------------------------------------------------------
-- ResNet
---------------------------------------------------------------------------
local BottleneckA = Chain:extend('BottleneckA')
function BottleneckA:init(in_c, mid, out_c, stride, initialW, downsample_fb)
  local s1, s2 = stride, 1
  if downsample_fb then s1, s2 = 1, stride end
  local function c(i, o, k, s, p) return Convolution2D(i, o, k, { stride = s, pad = p, initialW = initialW, nobias = true }) end
  self.conv1 = c(in_c, mid, 1, s1, 0); self.bn1 = BatchNormalization(mid)
  self.conv2 = c(mid, mid, 3, s2, 1); self.bn2 = BatchNormalization(mid)
  self.conv3 = c(mid, out_c, 1, 1, 0); self.bn3 = BatchNormalization(out_c)
  self.conv4 = c(in_c, out_c, 1, stride, 0); self.bn4 = BatchNormalization(out_c)
end
function BottleneckA:forward(x)
  local h1 = F.relu(self.bn1(self.conv1(x)))
  h1 = F.relu(self.bn2(self.conv2(h1)))
  h1 = self.bn3(self.conv3(h1))
  local h2 = self.bn4(self.conv4(x))
  return F.relu(h1 + h2)
end

local BottleneckB = Chain:extend('BottleneckB')
function BottleneckB:init(in_c, mid, initialW)
  local function c(i, o, k, p) return Convolution2D(i, o, k, { stride = 1, pad = p, initialW = initialW, nobias = true }) end
  self.conv1 = c(in_c, mid, 1, 0); self.bn1 = BatchNormalization(mid)
  self.conv2 = c(mid, mid, 3, 1); self.bn2 = BatchNormalization(mid)
  self.conv3 = c(mid, in_c, 1, 0); self.bn3 = BatchNormalization(in_c)
end
function BottleneckB:forward(x)
  local h = F.relu(self.bn1(self.conv1(x)))
  h = F.relu(self.bn2(self.conv2(h)))
  h = self.bn3(self.conv3(h))
  return F.relu(h + x)
end

-- BuildingBlock(n_layer, in, mid, out, stride): children a, b1 .. b{n_layer-1}.
local BuildingBlock = Chain:extend('BuildingBlock')
function BuildingBlock:init(n_layer, in_c, mid, out_c, stride, initialW, downsample_fb)
  self.a = BottleneckA(in_c, mid, out_c, stride, initialW, downsample_fb)
  rawset(self, '_forward', { 'a' })
  for i = 1, n_layer - 1 do
    local name = 'b' .. i
    self[name] = BottleneckB(out_c, mid, initialW)
    self._forward[#self._forward + 1] = name
  end
end
function BuildingBlock:forward(x)
  for _, n in ipairs(self._forward) do x = self[n](x) end
  return x
end
M.BuildingBlock = BuildingBlock
M.BottleneckA = BottleneckA
M.BottleneckB = BottleneckB

local ResNetLayers = Chain:extend('ResNetLayers')
local blocks = { [50] = { 3, 4, 6, 3 }, [101] = { 3, 4, 23, 3 }, [152] = { 3, 8, 36, 3 } }
function ResNetLayers:init(n_layers, opts)
  local b = blocks[n_layers]
  if b == nil then error('ResNetLayers: n_layers must be 50, 101 or 152 (got ' .. tostring(n_layers) .. ')', 3) end
  check_pretrained(self, opts)
  local w = I.HeNormal()
  self.conv1 = Convolution2D(3, 64, 7, { stride = 2, pad = 3, initialW = w })
  self.bn1 = BatchNormalization(64)
  self.res2 = BuildingBlock(b[1], 64, 64, 256, 1, w)
  self.res3 = BuildingBlock(b[2], 256, 128, 512, 2, w)
  self.res4 = BuildingBlock(b[3], 512, 256, 1024, 2, w)
  self.res5 = BuildingBlock(b[4], 1024, 512, 2048, 2, w)
  self.fc6 = Linear(2048, 1000)
  load_pretrained(self, opts)
end
function ResNetLayers:_steps()
  return {
    { 'conv1', function(h) return self.bn1(self.conv1(h)) end },
    { 'pool1', function(h) return F.max_pooling_2d(F.relu(h), 3, { stride = 2 }) end },
    { 'res2', function(h) return self.res2(h) end },
    { 'res3', function(h) return self.res3(h) end },
    { 'res4', function(h) return self.res4(h) end },
    { 'res5', function(h) return self.res5(h) end },
    { 'pool5', function(h)
      local s = h.shape
      return F.reshape(F.average_pooling_2d(h, { s[3], s[4] }, { stride = 1 }), { s[1], s[2] })
    end },
    { 'fc6', function(h) return self.fc6(h) end },
    { 'prob', function(h) return F.softmax(h) end },
  }
end
function ResNetLayers:forward(x, opts)
  return run_layers(self:_steps(), x, opts and opts.layers)
end
M.ResNetLayers = ResNetLayers

local function resnet(n)
  local cls = ResNetLayers:extend('ResNet' .. n .. 'Layers')
  function cls:init(opts) ResNetLayers.init(self, n, opts) end
  return cls
end
M.ResNet50Layers = resnet(50)
M.ResNet101Layers = resnet(101)
M.ResNet152Layers = resnet(152)

---------------------------------------------------------------------------
-- GoogLeNet (main classifier path; the auxiliary heads exist for weight loading)
---------------------------------------------------------------------------
local GoogLeNet = Chain:extend('GoogLeNet')
function GoogLeNet:init(opts)
  check_pretrained(self, opts)
  self.conv1 = Convolution2D(3, 64, 7, { stride = 2, pad = 3 })
  self.conv2_reduce = Convolution2D(64, 64, 1)
  self.conv2 = Convolution2D(64, 192, 3, { stride = 1, pad = 1 })
  self.inc3a = Inception(192, 64, 96, 128, 16, 32, 32)
  self.inc3b = Inception(256, 128, 128, 192, 32, 96, 64)
  self.inc4a = Inception(480, 192, 96, 208, 16, 48, 64)
  self.inc4b = Inception(512, 160, 112, 224, 24, 64, 64)
  self.inc4c = Inception(512, 128, 128, 256, 24, 64, 64)
  self.inc4d = Inception(512, 112, 144, 288, 32, 64, 64)
  self.inc4e = Inception(528, 256, 160, 320, 32, 128, 128)
  self.inc5a = Inception(832, 256, 160, 320, 32, 128, 128)
  self.inc5b = Inception(832, 384, 192, 384, 48, 128, 128)
  self.loss3_fc = Linear(1024, 1000)
  self.loss1_conv = Convolution2D(512, 128, 1)
  self.loss1_fc1 = Linear(2048, 1024)
  self.loss1_fc2 = Linear(1024, 1000)
  self.loss2_conv = Convolution2D(528, 128, 1)
  self.loss2_fc1 = Linear(2048, 1024)
  self.loss2_fc2 = Linear(1024, 1000)
  load_pretrained(self, opts)
end
function GoogLeNet:_steps()
  local function pool(h) return F.max_pooling_2d(h, 3, { stride = 2 }) end
  local function lrn(h) return F.local_response_normalization(h, { n = 5, k = 1, alpha = 1e-4 / 5 }) end
  local s = {
    { 'conv1', function(h) return F.relu(self.conv1(h)) end },
    { 'pool1', function(h) return lrn(pool(h)) end },
    { 'conv2_reduce', function(h) return F.relu(self.conv2_reduce(h)) end },
    { 'conv2', function(h) return F.relu(self.conv2(h)) end },
    { 'pool2', function(h) return pool(lrn(h)) end },
    { 'inception_3a', function(h) return self.inc3a(h) end },
    { 'inception_3b', function(h) return self.inc3b(h) end },
    { 'pool3', pool },
  }
  for _, n in ipairs({ '4a', '4b', '4c', '4d', '4e' }) do
    s[#s + 1] = { 'inception_' .. n, function(h) return self['inc' .. n](h) end }
  end
  s[#s + 1] = { 'pool4', pool }
  s[#s + 1] = { 'inception_5a', function(h) return self.inc5a(h) end }
  s[#s + 1] = { 'inception_5b', function(h) return self.inc5b(h) end }
  s[#s + 1] = { 'pool5', function(h) return F.average_pooling_2d(h, 7, { stride = 1 }) end }
  s[#s + 1] = { 'loss3_fc', function(h) return self.loss3_fc(F.dropout(h, 0.4)) end }
  s[#s + 1] = { 'prob', function(h) return F.softmax(h) end }
  return s
end
function GoogLeNet:forward(x, opts)
  return run_layers(self:_steps(), x, opts and opts.layers)
end
M.GoogLeNet = GoogLeNet

return M
