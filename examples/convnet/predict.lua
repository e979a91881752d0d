-- examples/convnet/predict.lua: classifies image files (PNG or JPEG) with a
-- model saved by train_convnet.lua.
--
--   chainlua examples/convnet/predict.lua --model result --image digit.png[,other.jpg,...]
--   chainlua examples/convnet/predict.lua --model result --from-test 5
--
-- The image is converted to the model's input: gray (mean of R, G, B) for
-- MNIST models or RGB for CIFAR ones, resized (bilinear) to 28x28 or 32x32,
-- scaled to [0, 1].  MNIST digits are light on a dark background, so a
-- mostly light image (mean > 0.5) is inverted first (--invert yes|no|auto).
-- --from-test N writes the first N test images of the model's dataset as
-- PNG files into <model>/test_images/ and classifies those files, printing
-- the true labels beside the predictions.
local chainer = require 'chainer'
local T = chainer.tensor
local F = require 'chainer.functions'
local datasets = require 'chainer.datasets'
local images = require 'chainer.datasets.image_dataset'
local serializers = require 'chainer.serializers'
local json = require 'chainer.utils.json'

local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.'
local models = dofile(here .. '/models.lua')

local ap = require('chainer.utils.argparse')('Chainer example: classify images with a trained convnet')
ap.prog = 'chainlua examples/convnet/predict.lua'
ap:option('--model', '-m', { default = 'result', help = 'Directory with model.npz and model.json (train_convnet.lua --out)' })
ap:option('--image', '-i', { default = '', help = 'Image file(s) to classify, PNG or JPEG, separated by commas' })
ap:option('--from-test', { type = 'number', default = 0, help = 'Export and classify the first N test images' })
ap:option('--invert', { default = 'auto', help = 'Invert gray images: yes, no or auto (MNIST models: when mostly light)' })
ap:option('--top', { type = 'number', default = 3, help = 'Number of best classes to print' })
local args = ap:parse(arg)

local cifar10_names = { 'airplane', 'automobile', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck' }

local info_file = io.open(args.model .. '/model.json', 'r')
if not info_file then
  error("predict: cannot open '" .. args.model .. "/model.json' (train a model with train_convnet.lua --out " ..
    args.model .. ' first)', 0)
end
local info = json.decode(info_file:read('*a'))
info_file:close()

local model = models.build(info.arch, info.n_class)
local size = info.dataset == 'mnist' and 28 or 32
-- run once on a dummy batch so that lazily-shaped parameters exist before loading
chainer.using_config('train', false, function()
  chainer.no_backprop_mode(function() model(T.zeros({ 1, info.in_channels, size, size })) end)
end)
serializers.load_npz(args.model .. '/model.npz', model)

local function label_name(k)
  if info.dataset == 'cifar10' then return string.format('%d (%s)', k, cifar10_names[k + 1]) end
  return tostring(k)
end

-- (C, H, W) float image in [0, 255] -> (1, in_channels, size, size) in [0, 1]
local function prepare(img)
  local c = img.shape[1]
  if c == 2 or c == 4 then img = img:slice({ 0, c - 1 }) c = c - 1 end   -- drop alpha
  img = img / 255
  if info.in_channels == 1 and c == 3 then
    img = img:mean({ axis = 0, keepdims = true })
  elseif info.in_channels == 3 and c == 1 then
    img = T.concatenate({ img, img, img }, 0)
  end
  local x = img:reshape({ 1, info.in_channels, img.shape[2], img.shape[3] })
  if img.shape[2] ~= size or img.shape[3] ~= size then
    x = F.resize_images(x, { size, size }).array
  end
  local invert = args.invert == 'yes' or (args.invert == 'auto' and info.dataset == 'mnist' and x:mean():item() > 0.5)
  if invert then x = 1 - x end
  return x:astype('float32')
end

local files, truth = {}, {}
for p in args.image:gmatch('[^,]+') do files[#files + 1] = p end
if args.from_test > 0 then
  local test
  if info.dataset == 'mnist' then _, test = datasets.get_mnist({ ndim = 3, scale = 255 })
  elseif info.dataset == 'cifar10' then _, test = datasets.get_cifar10({ scale = 255 })
  else _, test = datasets.get_cifar100({ scale = 255 }) end
  local dir = args.model .. '/test_images'
  os.execute("mkdir -p '" .. dir .. "'")
  for i = 1, math.min(args.from_test, test:len()) do
    local ex = test[i]
    local img = ex[1]:transpose(1, 2, 0):astype('uint8')   -- (H, W, C) bytes
    if img.shape[3] == 1 then img = img:reshape({ img.shape[1], img.shape[2] }) end
    local path = string.format('%s/test_%04d.png', dir, i)
    images.write_image(path, img)
    files[#files + 1] = path
    truth[path] = ex[2]:item()
  end
end
if #files == 0 then
  io.stderr:write(ap:usage())
  error('predict: give --image FILE[,FILE...] or --from-test N', 0)
end

local correct, total = 0, 0
for _, path in ipairs(files) do
  local x = prepare(images.read_image(path))
  local p = model:predict(x).array:reshape({ info.n_class })
  local order = p:argsort():flip(0)
  local best = order:get(0)
  local parts = {}
  for r = 0, math.min(args.top, info.n_class) - 1 do
    local k = order:get(r)
    parts[#parts + 1] = string.format('%s %.4f', label_name(k), p:get(k))
  end
  local line = string.format('%s: predicted %s  [%s]', path, label_name(best), table.concat(parts, ', '))
  if truth[path] ~= nil then
    line = line .. string.format('  (true %s)', label_name(truth[path]))
    total = total + 1
    if truth[path] == best then correct = correct + 1 end
  end
  print(line)
end
if total > 0 then print(string.format('%d of %d test images classified correctly', correct, total)) end
