-- examples/convnet/models.lua: the convnets of Chainer's "Convolutional
-- Network for Visual Recognition Tasks" guide as chainlua Chains.
--
--   local models = dofile('examples/convnet/models.lua')   -- or require via package.path
--   local m = models.LeNet5(10)                 -- (N, 1, 28, 28) -> (N, 10)
--   local v = models.VGG16(10)                  -- ChainList of VGGBlocks
--   local r = models.ResNet(50, 10)             -- 50, 101 or 152 layers
--   local r = models.ResNet152(1000)            -- the guide's model
--
-- Every model's forward returns logits (so L.Classifier's
-- softmax_cross_entropy and accuracy see the same thing in training and in
-- the Evaluator, which runs with chainer.config.train = false);
-- model:predict(x) returns the softmax probabilities the guide's forward
-- returns at test time.  All input sizes >= 28x28 work (the spatial size
-- is only fixed inside each model by global pooling), with any number of
-- input channels (inferred at the first call).
local F = require 'chainer.functions'
local L = require 'chainer.links'
local I = require 'chainer.initializers'
local chainer = require 'chainer'

local M = {}

local function predict(self, x)
  return chainer.using_config('train', false, function()
    return chainer.no_backprop_mode(function() return F.softmax(self:forward(x)) end)
  end)
end

---------------------------------------------------------------------------
-- LeNet5: conv(5) - pool - conv(5) - pool - conv(4) - fc(84) - fc(n_class).
-- The guide uses sigmoid activations (--arch lenet5-sigmoid); relu, the
-- default here, trains much faster with Adam and reaches 0.99 on MNIST in
-- 10 epochs.  opts.activation = 'relu' | 'sigmoid'; opts.batchnorm = true
-- adds BatchNormalization after each convolution (--arch lenet5-bn).
---------------------------------------------------------------------------
local LeNet5 = chainer.Chain:extend('LeNet5')
function LeNet5:init(n_class, opts)
  opts = opts or {}
  local act = opts.activation or 'relu'
  if act ~= 'relu' and act ~= 'sigmoid' then
    error("LeNet5: activation must be 'relu' or 'sigmoid' (got " .. tostring(act) .. ')', 3)
  end
  local bn = opts.batchnorm or false
  rawset(self, 'activation', act)
  rawset(self, 'batchnorm', bn)
  self.conv1 = L.Convolution2D(nil, 6, 5, { stride = 1 })
  self.conv2 = L.Convolution2D(6, 16, 5, { stride = 1 })
  self.conv3 = L.Convolution2D(16, 120, 4, { stride = 1 })
  if bn then
    self.bn1 = L.BatchNormalization(6)
    self.bn2 = L.BatchNormalization(16)
    self.bn3 = L.BatchNormalization(120)
  end
  self.fc4 = L.Linear(nil, 84)
  self.fc5 = L.Linear(84, n_class or 10)
end
function LeNet5:forward(x)
  local act = self.activation == 'sigmoid' and F.sigmoid or F.relu
  local h1, h2, h3 = self.conv1(x), nil, nil
  if self.batchnorm then h1 = self.bn1(h1) end
  h1 = F.max_pooling_2d(act(h1), 2, { stride = 2 })
  h2 = self.conv2(h1)
  if self.batchnorm then h2 = self.bn2(h2) end
  h2 = F.max_pooling_2d(act(h2), 2, { stride = 2 })
  h3 = self.conv3(h2)
  if self.batchnorm then h3 = self.bn3(h3) end
  local h = act(self.fc4(act(h3)))
  return self.fc5(h)
end
LeNet5.predict = predict
M.LeNet5 = LeNet5

---------------------------------------------------------------------------
-- VGG16: a ChainList of five VGGBlocks; each block is 2 or 3 3x3 convs
-- (HeNormal, each followed by BatchNormalization and relu) and a 2x2 max
-- pooling; the last block adds fc4 - fc5 - fc6 with dropout.  The guide's
-- fully connected width is 4096; opts.fc_units makes it smaller for
-- 32x32 datasets (train_convnet.lua uses 512).
---------------------------------------------------------------------------
local VGGBlock = chainer.Chain:extend('VGGBlock')
function VGGBlock:init(n_channels, n_convs, fc, n_class, fc_units)
  n_convs = n_convs or 2
  local w = I.HeNormal()
  rawset(self, 'n_convs', n_convs)
  rawset(self, 'fc', fc or false)
  self.conv1 = L.Convolution2D(nil, n_channels, 3, { stride = 1, pad = 1, initialW = w })
  self.bn1 = L.BatchNormalization(n_channels)
  self.conv2 = L.Convolution2D(n_channels, n_channels, 3, { stride = 1, pad = 1, initialW = w })
  self.bn2 = L.BatchNormalization(n_channels)
  if n_convs == 3 then
    self.conv3 = L.Convolution2D(n_channels, n_channels, 3, { stride = 1, pad = 1, initialW = w })
    self.bn3 = L.BatchNormalization(n_channels)
  end
  if fc then
    fc_units = fc_units or 4096
    self.fc4 = L.Linear(nil, fc_units, { initialW = w })
    self.fc5 = L.Linear(fc_units, fc_units, { initialW = w })
    self.fc6 = L.Linear(fc_units, n_class or 1000, { initialW = w })
  end
end
function VGGBlock:forward(x)
  local h = F.relu(self.bn1(self.conv1(x)))
  h = F.relu(self.bn2(self.conv2(h)))
  if self.n_convs == 3 then h = F.relu(self.bn3(self.conv3(h))) end
  h = F.max_pooling_2d(h, 2, { stride = 2 })
  if self.fc then
    h = F.dropout(F.relu(self.fc4(h)))
    h = F.dropout(F.relu(self.fc5(h)))
    h = self.fc6(h)
  end
  return h
end
M.VGGBlock = VGGBlock

local VGG16 = chainer.ChainList:extend('VGG16')
function VGG16:init(n_class, opts)
  opts = opts or {}
  self:add_link(VGGBlock(64))
  self:add_link(VGGBlock(128))
  self:add_link(VGGBlock(256, 3))
  self:add_link(VGGBlock(512, 3))
  self:add_link(VGGBlock(512, 3, true, n_class or 1000, opts.fc_units))
end
function VGG16:forward(x)
  local h = x
  for i = 1, self:len() do h = self[i](h) end
  return h
end
VGG16.predict = predict
M.VGG16 = VGG16

---------------------------------------------------------------------------
-- ResNet-50/101/152: conv1 (7x7, stride 2, no bias) - bn1 - relu - 3x3 max
-- pooling, then four stages of bottleneck blocks (res2 .. res5: 1x1 -> 3x3
-- -> 1x1 with BatchNormalization; the first block of each stage projects
-- the shortcut with a strided 1x1 conv), global average pooling and fc6.
-- The stages are the model zoo's BuildingBlock (links/model/vision/building_block.lua),
-- so the parameter names match ResNet50Layers and the guide's
-- ResBlock/BottleNeck structure (3+4+6+3, 3+4+23+3, 3+8+36+3 blocks).
---------------------------------------------------------------------------
local stages = { [50] = { 3, 4, 6, 3 }, [101] = { 3, 4, 23, 3 }, [152] = { 3, 8, 36, 3 } }

local ResNet = chainer.Chain:extend('ResNet')
function ResNet:init(n_layers, n_class, opts)
  opts = opts or {}
  local b = stages[n_layers]
  if b == nil then error('ResNet: n_layers must be 50, 101 or 152 (got ' .. tostring(n_layers) .. ')', 3) end
  rawset(self, 'n_layers', n_layers)
  local w = I.HeNormal()
  self.conv1 = L.Convolution2D(nil, 64, 7, { stride = 2, pad = 3, initialW = w, nobias = true })
  self.bn1 = L.BatchNormalization(64)
  self.res2 = L.BuildingBlock(b[1], 64, 64, 256, 1, w)
  self.res3 = L.BuildingBlock(b[2], 256, 128, 512, 2, w)
  self.res4 = L.BuildingBlock(b[3], 512, 256, 1024, 2, w)
  self.res5 = L.BuildingBlock(b[4], 1024, 512, 2048, 2, w)
  self.fc6 = L.Linear(2048, n_class or 1000)
end
function ResNet:forward(x)
  local h = F.relu(self.bn1(self.conv1(x)))
  h = F.max_pooling_2d(h, 3, { stride = 2, pad = 1 })
  h = self.res2(h)
  h = self.res3(h)
  h = self.res4(h)
  h = self.res5(h)
  -- global average pooling over whatever spatial size is left
  local s = h.shape
  h = F.reshape(F.average_pooling_2d(h, { s[3], s[4] }, { stride = 1 }), { s[1], s[2] })
  return self.fc6(h)
end
ResNet.predict = predict
M.ResNet = ResNet

for _, n in ipairs({ 50, 101, 152 }) do
  local cls = ResNet:extend('ResNet' .. n)
  function cls:init(n_class, opts) ResNet.init(self, n, n_class, opts) end
  M['ResNet' .. n] = cls
end

-- The architectures train_convnet.lua and predict.lua know, by --arch name.
function M.build(arch, n_class)
  if arch == 'lenet5' then return LeNet5(n_class)
  elseif arch == 'lenet5-sigmoid' then return LeNet5(n_class, { activation = 'sigmoid' })
  elseif arch == 'lenet5-bn' then return LeNet5(n_class, { batchnorm = true })
  elseif arch == 'vgg16' then return VGG16(n_class, { fc_units = 512 })
  elseif arch == 'resnet50' then return M.ResNet50(n_class)
  elseif arch == 'resnet101' then return M.ResNet101(n_class)
  elseif arch == 'resnet152' then return M.ResNet152(n_class)
  end
  error("unknown --arch '" .. tostring(arch) .. "' (expected lenet5, lenet5-sigmoid, lenet5-bn, vgg16, resnet50, resnet101 " ..
    'or resnet152)', 0)
end
M.archs = { 'lenet5', 'lenet5-sigmoid', 'lenet5-bn', 'vgg16', 'resnet50', 'resnet101', 'resnet152' }

return M
