-- datasets/cifar.lua: get_cifar10 and get_cifar100 from the binary version
-- of the datasets (cifar-10-binary.tar.gz / cifar-100-binary.tar.gz).
--
-- get_cifar10{withlabel = true, ndim = 3, scale = 1.0, dtype = 'float32'} -> train, test
-- Images are (3, 32, 32) (ndim 3) or (3072,) (ndim 1) in [0, scale]; labels
-- int32.  CIFAR-100 gives the fine labels (100 classes).
-- Sources, in order: <root>/cifar10/cifar-10-batches-bin/*.bin (the
-- extracted folder; cifar100/cifar-100-binary/ for CIFAR-100), the tarball
-- <root>/cifar10/cifar-10-binary.tar.gz (extracted with `tar`), or a
-- download.  Converted once into pfnet/chainer/cifar/cifar-10.npz
-- (keys train_x, train_y, test_x, test_y as uint8, Chainer's cache keys).
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local dl = require 'chainer.dataset.download'
local fs = require 'chainer._fs'
local files = require 'chainer.datasets.files'

local M = {}

local specs = {
  cifar10 = {
    fn = 'get_cifar10', dir = 'cifar10', tarball = 'cifar-10-binary.tar.gz', folder = 'cifar-10-batches-bin',
    url = 'https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz', npz = 'cifar-10.npz', label_bytes = 1,
    train = { 'data_batch_1.bin', 'data_batch_2.bin', 'data_batch_3.bin', 'data_batch_4.bin', 'data_batch_5.bin' },
    test = { 'test_batch.bin' },
  },
  cifar100 = {
    fn = 'get_cifar100', dir = 'cifar100', tarball = 'cifar-100-binary.tar.gz', folder = 'cifar-100-binary',
    url = 'https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz', npz = 'cifar-100.npz', label_bytes = 2,
    train = { 'train.bin' }, test = { 'test.bin' },
  },
}

-- Reads binary records: label byte(s) then 3072 image bytes.
local function read_records(paths, spec)
  local rec = spec.label_bytes + 3072
  local xs, ys = {}, {}
  for _, path in ipairs(paths) do
    local f, err = io.open(path, 'rb')
    if not f then error(string.format("%s: cannot open '%s' (%s)", spec.fn, path, tostring(err)), 4) end
    local s = f:read('*a')
    f:close()
    if #s == 0 or #s % rec ~= 0 then
      error(string.format("%s: '%s' is not a CIFAR binary file (%d bytes is not a multiple of %d)", spec.fn,
        path, #s, rec), 4)
    end
    local n = #s / rec
    local raw = T.from_buffer(T.ffi.cast('const uint8_t*', s), { n, rec }, 'uint8')
    ys[#ys + 1] = raw:slice({}, spec.label_bytes - 1)
    xs[#xs + 1] = raw:slice({}, { spec.label_bytes, rec })
  end
  local x = T.concatenate(xs, 0):contiguous()
  local y = T.concatenate(ys, 0):contiguous()
  return x, y
end

-- The folder with the .bin files: extracted already, or from the tarball.
local function bin_folder(spec)
  local root = dl.get_dataset_root()
  local cand = { root .. '/' .. spec.dir .. '/' .. spec.folder, root .. '/' .. spec.folder }
  for _, d in ipairs(cand) do
    if fs.exists(d .. '/' .. spec.test[1]) then return d, nil end
  end
  local tar = files.raw_file(spec.fn, spec.dir, spec.tarball, spec.url)
  local tmp = fs.temp_path(files.converted_dir('pfnet/chainer/cifar') .. '/extract')
  if not fs.mkdir_p(tmp) or not dl.run(string.format('tar -xzf %s -C %s', dl.shell_quote(tar), dl.shell_quote(tmp))) then
    dl.run('rm -rf ' .. dl.shell_quote(tmp))
    error(string.format("%s: cannot extract '%s' (is it the binary version, %s?)", spec.fn, tar, spec.tarball), 3)
  end
  return tmp .. '/' .. spec.folder, tmp
end

local function raw_arrays(spec)
  local sub = 'pfnet/chainer/cifar'
  local path = files.find_converted(sub, spec.npz)
  if path then
    local z = T.load_npz(path)
    if z.train_x and z.train_y and z.test_x and z.test_y then return z end
  end
  local dir, cleanup = bin_folder(spec)
  local function list(names)
    local out = {}
    for i, n in ipairs(names) do out[i] = dir .. '/' .. n end
    return out
  end
  local ok, res = pcall(function()
    local trx, try = read_records(list(spec.train), spec)
    local tex, tey = read_records(list(spec.test), spec)
    return { train_x = trx, train_y = try, test_x = tex, test_y = tey }
  end)
  if cleanup then dl.run('rm -rf ' .. dl.shell_quote(cleanup)) end
  if not ok then error(res, 0) end
  dl.cache_or_load_file(files.converted_dir(sub) .. '/' .. spec.npz,
    function(tmp) T.savez_compressed(tmp, res) end, function() end)
  return res
end

local function preprocess(x, y, o)
  local n = x.shape[1]
  local images = o.ndim == 1 and x:reshape(n, 3072) or x:reshape(n, 3, 32, 32)
  images = images:astype(o.dtype) * (o.scale / 255)
  if not o.withlabel then return images end
  local TupleDataset = require 'chainer.datasets.tuple_dataset'
  return TupleDataset(images, y:astype('int32'))
end

-- Chainer's keyword arguments, by name only (get_cifar10{ndim = 1}).
local OPTIONS = args.accept { 'withlabel', 'ndim', 'scale', 'dtype' }

local function loader(spec)
  return files.public(spec.fn, function(opts)
    opts = args.options(spec.fn, opts, OPTIONS)
    local o = { withlabel = opts.withlabel, ndim = opts.ndim or 3, scale = opts.scale or 1.0,
      dtype = opts.dtype or T.default_float }
    if o.withlabel == nil then o.withlabel = true end
    if o.ndim ~= 1 and o.ndim ~= 3 then
      error(string.format('%s: ndim must be 1 or 3 (got %s)', spec.fn, tostring(o.ndim)), 2)
    end
    local z = raw_arrays(spec)
    return preprocess(z.train_x, z.train_y, o), preprocess(z.test_x, z.test_y, o)
  end)
end

M.get_cifar10 = loader(specs.cifar10)
M.get_cifar100 = loader(specs.cifar100)

return M
