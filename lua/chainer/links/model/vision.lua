-- links/model/vision.lua: the model zoo architectures VGG16Layers,
-- ResNet50Layers/ResNet101Layers/ResNet152Layers (on ResNetLayers) and
-- GoogLeNet, with Chainer's child names, parameter shapes and layer lists,
-- so Chainer's converted weight files (.npz) load key for key:
--   local vgg = L.VGG16Layers{pretrained_model = 'VGG_ILSVRC_16_layers.npz'}
--   local feats = vgg(x, {layers = {'fc7', 'prob'}})   -- {fc7 = ..., prob = ...}
--   local p = vgg:predict({img})                        -- (1, 1000) probabilities
-- Nothing is downloaded: without pretrained_model the weights get the
-- initializers of the original papers (as Chainer's pretrained_model = None);
-- with a path they start at zero (as in Chainer: sampling is slow and the
-- file overwrites them) and are loaded with strict load_npz.
-- Images for prepare/extract/predict are tensors (H, W), (H, W, 3|4) or
-- (1|3, H, W), RGB, values 0..255, as Chainer's ndarray inputs.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local cfg = require 'chainer.config'
local link = require 'chainer.link'
local Chain = link.Chain
local conv = require 'chainer.links.connection.convolution_nd'
local Convolution2D = conv.Convolution2D
local Linear = require('chainer.links.connection.linear').Linear
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local Inception = require('chainer.links.connection.inception').Inception
local I = require 'chainer.initializers'
local imgproc = require 'chainer.utils.imgproc'

local M = {}

---------------------------------------------------------------------------
-- constructor options
---------------------------------------------------------------------------
local known_opts = { pretrained_model = true, initialW = true, initial_bias = true, downsample_fb = true,
  n_layers = true }

-- Accepts nil, a path string (Chainer's positional pretrained_model) or an
-- options table; checked before any parameter is allocated.
local function options(name, opts, allowed)
  if opts == nil then return {} end
  if type(opts) == 'string' then return { pretrained_model = opts } end
  if type(opts) ~= 'table' then
    error(name .. ': options must be a table {pretrained_model = path} or a path string (got ' ..
      type(opts) .. ')', 4)
  end
  for k in pairs(opts) do
    if not known_opts[k] or not allowed[k] then
      error(string.format("%s: unknown option '%s'", name, tostring(k)), 4)
    end
  end
  local path = opts.pretrained_model
  if path == 'auto' then
    error(name .. ": pretrained_model = 'auto' would download weights; pass the path of " ..
      'a converted .npz file instead', 4)
  end
  if path ~= nil and path ~= false and type(path) ~= 'string' then
    error(name .. ': pretrained_model must be a path string (got ' .. type(path) .. ')', 4)
  end
  return opts
end

local function has_pretrained(o) return o.pretrained_model ~= nil and o.pretrained_model ~= false end

-- Strict load; the error names the model, the file and every missing or
-- unexpected key.
local function load_pretrained(self, name, o)
  if not has_pretrained(o) then return end
  local ok, err = pcall(require('chainer.serializers').load_npz, o.pretrained_model, self)
  if not ok then
    error(string.format("%s: cannot load pretrained_model '%s': %s", name, o.pretrained_model, tostring(err)), 4)
  end
end

---------------------------------------------------------------------------
-- shared forward / extract / predict
---------------------------------------------------------------------------
-- Each class has `_layers`, a list of {name, fn(self, h)} in Chainer's
-- order (an entry with `from` restarts at a cached earlier activation:
-- GoogLeNet's auxiliary heads), `available_layers` (the names), `_mean`
-- (BGR mean pixel of prepare) and `_extract_default`.
local function finish_class(cls, layers, mean, extract_default)
  cls._layers = layers
  local names, index = {}, {}
  for i, s in ipairs(layers) do names[i] = s[1]; index[s[1]] = i end
  cls.available_layers = names
  cls._index = index
  cls._mean = mean
  cls._extract_default = extract_default
end

local function shape_of(x)
  if T.is_tensor(x) or (type(x) == 'table' and x._is_variable == true) then return x.shape end
  return nil
end

local function forward(self, x, opts)
  local cls = getmetatable(self)
  local name = cls.__name
  local layers = { 'prob' }
  if opts ~= nil then
    if type(opts) ~= 'table' then error(name .. ': options must be a table {layers = {...}} (got ' .. type(opts) .. ')', 3) end
    if opts.layers ~= nil then layers = opts.layers end
  end
  if type(layers) ~= 'table' then
    error(name .. ": layers must be a list of layer names, e.g. {'prob'} (got " .. type(layers) .. ')', 3)
  end
  local shape = shape_of(x)
  if shape == nil then error(name .. ': x must be a Variable or a tensor (got ' .. type(x) .. ')', 3) end
  if #shape ~= 4 or shape[2] ~= 3 then
    error(string.format('%s: x must be a (N, 3, H, W) batch (got shape (%s))', name, table.concat(shape, ', ')), 3)
  end
  local steps, index = cls._layers, cls._index
  local want, left, last = {}, 0, 0
  for _, l in ipairs(layers) do
    local i = index[l]
    if i == nil then
      error(string.format("%s: unknown layer '%s' (available: %s)", name, tostring(l),
        table.concat(cls.available_layers, ', ')), 3)
    end
    if not want[l] then
      want[l] = true
      left = left + 1
      local s = steps[i]
      local need = s.from and index[s.from] or i
      if need > last then last = need end
    end
  end
  local out, cache, h = {}, {}, x
  for i, s in ipairs(steps) do
    if left == 0 then break end
    local n = s[1]
    if s.from then
      if want[n] then h = s[2](self, cache[s.from]) end
    elseif i <= last then
      h = s[2](self, h)
      if s.keep then cache[n] = h end
    end
    if want[n] then
      out[n] = h
      want[n] = nil
      left = left - 1
    end
  end
  return out
end

-- A (N, 3, H, W) float32 batch of prepared images.
local function batch(cls, fn, images, size)
  if T.is_tensor(images) then
    if images.ndim ~= 4 then
      error(string.format('%s: images must be a list of images or a 4-d tensor of images (got a %d-d tensor)',
        fn, images.ndim), 4)
    end
    local list = {}
    for i = 1, images.shape[1] do list[i] = images:select(i - 1) end
    images = list
  elseif type(images) ~= 'table' or #images == 0 then
    error(fn .. ': images must be a non-empty list of image tensors', 4)
  end
  local xs = {}
  for i, img in ipairs(images) do xs[i] = cls.prepare(img, size) end
  for i = 2, #xs do
    local a, b = xs[1].shape, xs[i].shape
    if a[2] ~= b[2] or a[3] ~= b[3] then
      error(string.format('%s: image %d prepares to %dx%d but image 1 to %dx%d; pass a size to resize them',
        fn, i, b[2], b[3], a[2], a[3]), 4)
    end
  end
  return T.stack(xs, 0)
end

-- extract(images, layers = default, size = {224, 224}) or
-- extract(images, {layers =, size =}); size = false keeps each image's size.
local function extract(self, images, layers, size)
  local cls = getmetatable(self)
  local fn = cls.__name .. ':extract'
  if type(layers) == 'table' and (layers.layers ~= nil or layers.size ~= nil) and layers[1] == nil then
    layers, size = layers.layers, layers.size
  end
  if layers == nil then layers = cls._extract_default end
  if size == nil then size = { 224, 224 } end
  local x = batch(cls, fn, images, size)
  return self(x, { layers = layers })
end

-- predict(images, oversample = true): class probabilities (N, 1000),
-- computed in test mode without backprop from 256x256 resized images:
-- the mean over 10 crops of 224x224 (corners, centre and their mirrors),
-- or the centre crop alone with oversample = false.
local function predict(self, images, oversample)
  local cls = getmetatable(self)
  local fn = cls.__name .. ':predict'
  if type(oversample) == 'table' then oversample = oversample.oversample end
  if oversample == nil then oversample = true end
  local x = batch(cls, fn, images, { 256, 256 })
  if oversample then
    x = imgproc.oversample(x, { 224, 224 })
  else
    x = x:slice(':, :, 16:240, 16:240')
  end
  return cfg.no_backprop_mode(function()
    return cfg.using_config('train', false, function()
      local y = self(x, { layers = { 'prob' } }).prob
      if oversample then
        local s = y.shape
        y = F.reshape(y, { s[1] / 10, 10, s[2] })
        y = F.sum(y, { axis = 1 }) / 10
      end
      return y
    end)
  end)
end

-- prepare(image, size = {224, 224}) for a given BGR mean pixel: Chainer's
-- steps (to uint8, to RGB, resize to size = {width, height} with PIL's
-- NEAREST rule, to float32, RGB -> BGR, minus the mean, HWC -> CHW).
local function make_prepare(fn, mean)
  local mean_t
  return function(image, size)
    if type(image) == 'table' and image._is_variable == true then image = image.array end
    if not T.is_tensor(image) then
      error(fn .. ': image must be a tensor (H, W), (H, W, 3) or (3, H, W) (got ' .. type(image) .. ')', 2)
    end
    if size == nil then size = { 224, 224 } end
    if size ~= false and (type(size) ~= 'table' or type(size[1]) ~= 'number' or type(size[2]) ~= 'number'
        or size[1] < 1 or size[2] < 1 or size[1] % 1 ~= 0 or size[2] % 1 ~= 0) then
      error(fn .. ': size must be {width, height} (positive integers) or false (got ' .. tostring(size) .. ')', 2)
    end
    local img = image
    local s = img.shape
    if #s == 3 and s[1] == 1 then img = img:select(0)
    elseif #s == 3 and s[1] == 3 then img = img:transpose({ 1, 2, 0 }) end
    s = img.shape
    if #s == 3 and s[3] ~= 3 and s[3] ~= 4 then
      error(string.format('%s: a 3-d image must be (H, W, 3), (H, W, 4) or (3, H, W) (got shape (%s))', fn,
        table.concat(image.shape, ', ')), 2)
    elseif #s ~= 2 and #s ~= 3 then
      error(string.format('%s: image must be 2-d or 3-d (got %d-d)', fn, #s), 2)
    end
    if s[1] == 0 or s[2] == 0 then error(fn .. ': image is empty', 2) end
    -- uint8 as numpy's astype would give for 0..255 (truncation); outside
    -- that range we clip where numpy would wrap around.
    img = img:astype('float32'):clip(0, 255):floor()
    if #s == 2 then
      img = T.stack({ img, img, img }, 2)
    elseif s[3] == 4 then
      img = img:slice(':, :, 0:3')       -- PIL's RGBA -> RGB drops alpha
    end
    if size then
      local w, h = size[1], size[2]
      local H, W = s[1], s[2]
      if h ~= H then
        local rows = {}
        for i = 0, h - 1 do rows[i + 1] = math.floor((i + 0.5) * H / h) end
        img = T.take(img, T.array(rows, 'int64'), 0)
      end
      if w ~= W then
        local cols = {}
        for i = 0, w - 1 do cols[i + 1] = math.floor((i + 0.5) * W / w) end
        img = T.take(img, T.array(cols, 'int64'), 1)
      end
    end
    mean_t = mean_t or T.array(mean, 'float32')
    img = img:flip(2) - mean_t                -- RGB -> BGR, minus the BGR mean
    return img:transpose({ 2, 0, 1 }):copy()
  end
end

local function install(cls)
  cls.forward = forward
  cls.extract = extract
  cls.predict = predict
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
local vgg_allowed = { pretrained_model = true, initialW = true, initial_bias = true }
function VGG16Layers:init(opts)
  local o = options('VGG16Layers', opts, vgg_allowed)
  local w, b
  if has_pretrained(o) then w, b = I.Zero(), I.Zero() else w, b = I.Normal(0.01), I.Zero() end
  if o.initialW ~= nil then w = o.initialW end
  if o.initial_bias ~= nil then b = o.initial_bias end
  for _, c in ipairs(vgg_convs) do
    self[c[1]] = Convolution2D(c[2], c[3], 3, { stride = 1, pad = 1, initialW = w, initial_bias = b })
  end
  self.fc6 = Linear(512 * 7 * 7, 4096, { initialW = w, initial_bias = b })
  self.fc7 = Linear(4096, 4096, { initialW = w, initial_bias = b })
  self.fc8 = Linear(4096, 1000, { initialW = w, initial_bias = b })
  load_pretrained(self, 'VGG16Layers', o)
end

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
    local s = shape_of(h)
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
finish_class(VGG16Layers, vgg_layers, { 103.939, 116.779, 123.68 }, { 'fc7' })
VGG16Layers.prepare = make_prepare('VGG16Layers.prepare', VGG16Layers._mean)
install(VGG16Layers)
M.VGG16Layers = VGG16Layers

---------------------------------------------------------------------------
-- ResNet
---------------------------------------------------------------------------
-- BottleneckA(in, mid, out, stride = 2, initialW, downsample_fb = false):
-- MSRA places the stride on the first 1x1 conv, fb.torch on the 3x3.
local BottleneckA = Chain:extend('BottleneckA')
function BottleneckA:init(in_c, mid, out_c, stride, initialW, downsample_fb)
  stride = stride or 2
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

-- BottleneckB(in, mid, initialW): keeps the resolution and channel count.
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

-- BuildingBlock(n_layer, in, mid, out, stride, initialW, downsample_fb):
-- children a, b1 .. b{n_layer-1}, run in that order.
local BuildingBlock = Chain:extend('BuildingBlock')
function BuildingBlock:init(n_layer, in_c, mid, out_c, stride, initialW, downsample_fb)
  if type(n_layer) ~= 'number' or n_layer < 1 or n_layer % 1 ~= 0 then
    error('BuildingBlock: n_layer must be a positive integer (got ' .. tostring(n_layer) .. ')', 3)
  end
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

-- ResNetLayers(n_layers, opts) or ResNetLayers{n_layers =, pretrained_model =, ...}
local ResNetLayers = Chain:extend('ResNetLayers')
local blocks = { [50] = { 3, 4, 6, 3 }, [101] = { 3, 4, 23, 3 }, [152] = { 3, 8, 36, 3 } }
local resnet_allowed = { pretrained_model = true, initialW = true, downsample_fb = true, n_layers = true }
function ResNetLayers:init(n_layers, opts, _name)
  local name = _name or 'ResNetLayers'
  if type(n_layers) == 'table' or type(n_layers) == 'string' then n_layers, opts = nil, n_layers end
  local o = options(name, opts, resnet_allowed)
  n_layers = n_layers or o.n_layers
  local b = blocks[n_layers]
  if b == nil then error(name .. ': n_layers must be 50, 101 or 152 (got ' .. tostring(n_layers) .. ')', 3) end
  local w
  if has_pretrained(o) then w = I.Zero() else w = I.HeNormal(1.0) end
  if o.initialW ~= nil then w = o.initialW end
  local fb = o.downsample_fb and true or false
  self.conv1 = Convolution2D(3, 64, 7, { stride = 2, pad = 3, initialW = w })
  self.bn1 = BatchNormalization(64)
  self.res2 = BuildingBlock(b[1], 64, 64, 256, 1, w, fb)
  self.res3 = BuildingBlock(b[2], 256, 128, 512, 2, w, fb)
  self.res4 = BuildingBlock(b[3], 512, 256, 1024, 2, w, fb)
  self.res5 = BuildingBlock(b[4], 1024, 512, 2048, 2, w, fb)
  self.fc6 = Linear(2048, 1000)
  load_pretrained(self, name, o)
end
local function global_average_pooling(_, h)
  local s = shape_of(h)
  return F.reshape(F.average_pooling_2d(h, { s[3], s[4] }, { stride = 1 }), { s[1], s[2] })
end
finish_class(ResNetLayers, {
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
ResNetLayers.prepare = make_prepare('ResNetLayers.prepare', ResNetLayers._mean)
install(ResNetLayers)
M.ResNetLayers = ResNetLayers

local function resnet(n)
  local cls = ResNetLayers:extend('ResNet' .. n .. 'Layers')
  local name = 'ResNet' .. n .. 'Layers'
  function cls:init(opts)
    if type(opts) == 'table' and opts.n_layers ~= nil then
      error(name .. ': n_layers is fixed to ' .. n .. ' (use ResNetLayers for another depth)', 3)
    end
    ResNetLayers.init(self, n, opts, name)
  end
  return cls
end
M.ResNet50Layers = resnet(50)
M.ResNet101Layers = resnet(101)
M.ResNet152Layers = resnet(152)

---------------------------------------------------------------------------
-- GoogLeNet (BVLC's; the auxiliary heads loss1_*/loss2_* exist for weight
-- loading and the 'loss1_fc2'/'loss2_fc2' outputs, as in Chainer)
---------------------------------------------------------------------------
local GoogLeNet = Chain:extend('GoogLeNet')
local googlenet_allowed = { pretrained_model = true, initialW = true }
function GoogLeNet:init(opts)
  local o = options('GoogLeNet', opts, googlenet_allowed)
  local w
  if has_pretrained(o) then w = I.Zero() else w = I.LeCunUniform(1.0) end
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
  load_pretrained(self, 'GoogLeNet', o)
end
local function g_pool(_, h) return F.max_pooling_2d(h, 3, { stride = 2 }) end
local function g_lrn(h) return F.local_response_normalization(h, { n = 5, k = 1, alpha = 1e-4 / 5 }) end
local function g_inc(n) return function(self, h) return self[n](h) end end
local function g_aux(p)
  return function(self, h)
    h = F.relu(self[p .. '_conv'](F.average_pooling_2d(h, 5, { stride = 3 })))
    return self[p .. '_fc2'](F.relu(self[p .. '_fc1'](h)))
  end
end
finish_class(GoogLeNet, {
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
    local s = shape_of(h)
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
GoogLeNet.prepare = make_prepare('GoogLeNet.prepare', GoogLeNet._mean)
install(GoogLeNet)
M.GoogLeNet = GoogLeNet

return M
