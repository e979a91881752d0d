-- links/model/vision/_image_model.lua: what the model zoo's image models
-- (VGG16Layers, ResNetLayers, GoogLeNet) share: their constructor options,
-- the strict loading of Chainer's converted weight files (.npz), and the
-- methods forward (by layer names), extract, predict and prepare.
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
local args = require 'chainer._args'
local imgproc = require 'chainer.utils.imgproc'

local M = {}

-- The options of a model's constructor: nil, a path string (Chainer's
-- positional pretrained_model) or an options table whose keys are in
-- `accepted` (an args.accept set); checked before any parameter is allocated.
function M.options(name, opts, accepted)
  if opts == nil then return args.EMPTY end
  if type(opts) == 'string' then return { pretrained_model = opts } end
  if type(opts) ~= 'table' then
    error(name .. ': options must be a table {pretrained_model = path} or a path string (got ' ..
      type(opts) .. ')', 4)
  end
  -- level 4: args.options' caller (this function) -> init -> Link.new -> the user
  args.options('L.' .. name, opts, accepted, 4)
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

function M.has_pretrained(o) return o.pretrained_model ~= nil and o.pretrained_model ~= false end

-- Strict load; the error names the model, the file and every missing or
-- unexpected key.
function M.load_pretrained(self, name, o)
  if not M.has_pretrained(o) then return end
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
function M.finish_class(cls, layers, mean, extract_default)
  cls._layers = layers
  local names, index = {}, {}
  for i, s in ipairs(layers) do names[i] = s[1]; index[s[1]] = i end
  cls.available_layers = names
  cls._index = index
  cls._mean = mean
  cls._extract_default = extract_default
end

function M.shape_of(x)
  if T.is_tensor(x) or (type(x) == 'table' and x._is_variable == true) then return x.shape end
  return nil
end

local DEFAULT_LAYERS = { 'prob' }
local FORWARD_OPTIONS = args.accept { 'layers' }

-- forward(x, {layers = {'prob'}}): {name = Variable} for the layers asked for.
local function forward(self, x, opts)
  local cls = getmetatable(self)
  local name = cls.__name
  local layers = DEFAULT_LAYERS
  if opts ~= nil then
    if type(opts) ~= 'table' then error(name .. ': options must be a table {layers = {...}} (got ' .. type(opts) .. ')', 3) end
    args.options('L.' .. name, opts, FORWARD_OPTIONS)
    if opts.layers ~= nil then layers = opts.layers end
  end
  if type(layers) ~= 'table' then
    error(name .. ": layers must be a list of layer names, e.g. {'prob'} (got " .. type(layers) .. ')', 3)
  end
  local shape = M.shape_of(x)
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
local EXTRACT_OPTIONS = args.accept { 'layers', 'size' }
local function extract(self, images, layers, size)
  local cls = getmetatable(self)
  local fn = cls.__name .. ':extract'
  -- a non-empty table that is not a list holds the options ({} is an empty layer list)
  if args.is_options(layers) and next(layers) ~= nil then
    args.options('L.' .. fn, layers, EXTRACT_OPTIONS)
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
local PREDICT_OPTIONS = args.accept { 'oversample' }
local function predict(self, images, oversample)
  local cls = getmetatable(self)
  local fn = cls.__name .. ':predict'
  if type(oversample) == 'table' then oversample = args.options('L.' .. fn, oversample, PREDICT_OPTIONS).oversample end
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
function M.make_prepare(fn, mean)
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

-- Gives a model class forward, extract and predict.
function M.install(cls)
  cls.forward = forward
  cls.extract = extract
  cls.predict = predict
end

return M
