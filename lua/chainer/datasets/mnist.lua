-- datasets/mnist.lua: get_mnist, get_fashion_mnist, get_kuzushiji_mnist.
--
-- get_mnist{withlabel = true, ndim = 1, scale = 1.0, dtype = 'float32',
--           label_dtype = 'int32', rgb_format = false} -> train, test
-- The four IDX files are read once (see datasets/files.lua for where) and
-- converted into train.npz / test.npz (x: uint8 (N, 784), y: uint8 (N,),
-- Chainer's own cache format, so a Chainer-made cache is read too); later
-- calls read the npz.  Images scale to [0, scale]; ndim 1 gives (784,),
-- 2 (28, 28), 3 (1, 28, 28) or, with rgb_format, (3, 28, 28).
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local dl = require 'chainer.dataset.download'
local files = require 'chainer.datasets.files'

local M = {}

-- Chainer's keyword arguments, by name only (get_mnist{ndim = 3}): a bare
-- value such as get_mnist(false) is refused as "options must be a table".
-- The same for Fashion-MNIST and Kuzushiji-MNIST.
local OPTIONS = args.accept { 'withlabel', 'ndim', 'scale', 'dtype', 'label_dtype', 'rgb_format' }

local function read_options(fn, opts, level)
  opts = args.options(fn, opts, OPTIONS, level + 1)
  local o = {
    withlabel = opts.withlabel, ndim = opts.ndim or 1, scale = opts.scale or 1.0,
    dtype = opts.dtype or T.default_float, label_dtype = opts.label_dtype or 'int32',
    rgb_format = opts.rgb_format or false,
  }
  if o.withlabel == nil then o.withlabel = true end
  if o.ndim ~= 1 and o.ndim ~= 2 and o.ndim ~= 3 then
    error(string.format('%s: ndim must be 1, 2 or 3 (got %s)', fn, tostring(o.ndim)), level + 1)
  end
  if type(o.scale) ~= 'number' then
    error(string.format('%s: scale must be a number (got %s)', fn, type(o.scale)), level + 1)
  end
  if not T.dtype_codes[o.dtype] or not T.is_float_dtype(o.dtype) then
    error(string.format("%s: dtype must be a float dtype such as 'float32' (got %s)", fn, tostring(o.dtype)),
      level + 1)
  end
  if not T.dtype_codes[o.label_dtype] then
    error(string.format("%s: label_dtype must be a dtype name such as 'int32' (got %s)", fn, tostring(o.label_dtype)),
      level + 1)
  end
  return o
end

-- Loads (or creates) the npz of one split: returns x (N, 784) as o.dtype,
-- scaled to [0, o.scale], and y (N,) as o.label_dtype.  The npz holds bytes;
-- they are converted as they are decoded, and scaled in place, so the float
-- images are the only large block the split leaves (Chainer holds the same).
local function load_split(spec, fn, split, o)
  local name = split .. '.npz'
  local x, y
  local path = files.find_converted(spec.sub, name)
  if path then
    local z = T.open_npz(path)
    if z:has('x') and z:has('y') then x, y = z:get('x', o.dtype), z:get('y', o.label_dtype) end
    z:close()
  end
  if not x then
    local f = spec.files[split]
    local img_path = files.raw_file(fn, spec.dir, f[1], spec.url .. f[1], spec.extra_dirs)
    local lab_path = files.raw_file(fn, spec.dir, f[2], spec.url .. f[2], spec.extra_dirs)
    local raw_x = T.load_idx(img_path)
    local raw_y = T.load_idx(lab_path)
    if raw_x.dtype ~= 'uint8' or raw_x.ndim ~= 3 or raw_y.ndim ~= 1 or raw_x.shape[1] ~= raw_y.shape[1] then
      error(string.format("%s: '%s' and '%s' are not a matching pair of IDX image/label files", fn, img_path,
        lab_path), 3)
    end
    raw_x = raw_x:reshape(raw_x.shape[1], raw_x.shape[2] * raw_x.shape[3])
    raw_y = raw_y:astype('uint8')
    local out = files.converted_dir(spec.sub) .. '/' .. name
    dl.cache_or_load_file(out, function(tmp)
      T.savez_compressed(tmp, { x = raw_x, y = raw_y })
    end, function() end)
    x, y = raw_x:astype(o.dtype), raw_y:astype(o.label_dtype)
  end
  T.mul(x, o.scale / 255, x)
  return x, y
end

local function preprocess(x, y, o, side)
  local n = x.shape[1]
  local images = x
  if o.ndim == 2 then
    images = x:reshape(n, side, side)
  elseif o.ndim == 3 then
    images = x:reshape(n, 1, side, side)
    if o.rgb_format then images = images:broadcast_to({ n, 3, side, side }):copy() end
  end
  if not o.withlabel then return images end
  local TupleDataset = require 'chainer.datasets.tuple_dataset'
  return TupleDataset(images, y)
end

local function loader(spec)
  return files.public(spec.fn, function(opts)
    local o = read_options(spec.fn, opts, 2)
    local xtr, ytr = load_split(spec, spec.fn, 'train', o)
    local xte, yte = load_split(spec, spec.fn, 'test', o)
    return preprocess(xtr, ytr, o, 28), preprocess(xte, yte, o, 28)
  end)
end

local idx_files = {
  train = { 'train-images-idx3-ubyte.gz', 'train-labels-idx1-ubyte.gz' },
  test = { 't10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz' },
}

M.get_mnist = loader {
  fn = 'get_mnist', dir = 'mnist', sub = 'pfnet/chainer/mnist', files = idx_files,
  url = 'https://storage.googleapis.com/cvdf-datasets/mnist/',
}

M.get_fashion_mnist = loader {
  fn = 'get_fashion_mnist', dir = 'fashion-mnist', sub = 'pfnet/chainer/fashion-mnist', files = idx_files,
  url = 'http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/',
  extra_dirs = { '/usr/share/datasets/fashion-mnist' },   -- Debian's dataset-fashion-mnist
}

M.get_kuzushiji_mnist = loader {
  fn = 'get_kuzushiji_mnist', dir = 'kuzushiji-mnist', sub = 'pfnet/chainer/kuzushiji_mnist',
  files = {
    train = { 'train-images-idx3-ubyte.gz', 'train-labels-idx1-ubyte.gz' },
    test = { 't10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz' },
  },
  url = 'http://codh.rois.ac.jp/kmnist/dataset/kmnist/',
}

-- Class names, indexed by label + 1.
function M.get_fashion_mnist_labels()
  return { 'T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag',
    'Ankle boot' }
end

function M.get_kuzushiji_mnist_labels()
  return { 'o', 'ki', 'su', 'tsu', 'na', 'ha', 'ma', 'ya', 're', 'wo' }
end

return M
