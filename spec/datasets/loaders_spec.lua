-- Specs for the dataset loaders: MNIST family (real data when available,
-- a small generated set always), the offline error, CIFAR binary files and
-- PTB.  No network is used: downloads go to an unreachable address.
local chainer = require 'chainer'
local T = chainer.tensor
local D = chainer.datasets
local DS = chainer.dataset
local H = require 'spec.dataset.helpers'

local UNREACHABLE = 'http://127.0.0.1:9/none'

-- The real data, through a writable mirror (the converted cache lands there).
local function real_root()
  local r = os.getenv('CHAINER_DATASET_ROOT')
  if r and H.exists(r .. '/mnist/train-images-idx3-ubyte.gz') then return require('helpers').scratch_dataset_root(r) end
  if H.exists('/work/shared/data/mnist/train-images-idx3-ubyte.gz') then
    return require('helpers').scratch_dataset_root('/work/shared/data')
  end
  return nil
end

-- A 5-train / 3-test MNIST lookalike: pixel p of image i is (i * 7 + p) % 256.
local function fake_mnist(root, dir)
  os.execute("mkdir -p '" .. root .. '/' .. dir .. "'")
  local function imgs(n) return H.idx_bytes({ n, 28, 28 }, function(k) return (math.floor(k / 784) * 7 + k % 784) % 256 end) end
  local function labs(n, off) return H.idx_bytes({ n }, function(k) return (k + off) % 10 end) end
  -- plain IDX under the .gz names: zlib reads uncompressed files too
  H.write(root .. '/' .. dir .. '/train-images-idx3-ubyte.gz', imgs(5))
  H.write(root .. '/' .. dir .. '/train-labels-idx1-ubyte.gz', labs(5, 3))
  H.write(root .. '/' .. dir .. '/t10k-images-idx3-ubyte.gz', imgs(3))
  H.write(root .. '/' .. dir .. '/t10k-labels-idx1-ubyte.gz', labs(3, 0))
end

describe('get_mnist on the real data', function()
  local root = real_root()
  local run = root and it or pending
  run('has 60000/10000 examples, (784,) float32 in [0, 1], int32 labels, train[1] is a 5, test[1] a 7', function()
    H.with_env({ CHAINER_DATASET_ROOT = root }, function()
      local train, test = D.get_mnist()
      assert.equal(60000, train:len())
      assert.equal(10000, test:len())
      local x, t = train[1][1], train[1][2]
      assert.same({ 784 }, x.shape)
      assert.equal('float32', x.dtype)
      assert.equal('int32', t.dtype)
      assert.equal(5, t:item())
      assert.equal(7, test[1][2]:item())
      assert.equal(1, x:max():item())
      assert.equal(0, x:min():item())
      local xs = train:datasets()[1]
      assert.equal(0, xs:min():item())
      assert.equal(1, xs:max():item())
      -- label counts from the dataset README
      local labels = test:datasets()[2]
      local n7 = labels:eq(7):sum():item()
      assert.equal(1028, n7)
      local tr2 = D.get_mnist{ ndim = 3, scale = 255, withlabel = false }
      assert.same({ 60000, 1, 28, 28 }, tr2.shape)
      assert.equal(255, tr2:max():item())
    end)
  end)

  run('holds the images once, as float32, with no byte or unscaled copy on the way', function()
    H.with_env({ CHAINER_DATASET_ROOT = root }, function()
      local C = T.C
      D.get_mnist()   -- makes the npz cache if it is missing
      collectgarbage('collect')
      local before = tonumber(C.ch_live_bytes(-1))
      C.ch_reset_peak_bytes(-1)
      local train, test = D.get_mnist()
      local floats = (60000 + 10000) * 784 * 4
      local labels = (60000 + 10000) * 4
      -- the peak of tensor memory while loading is the result itself
      -- (a uint8 tensor of the images, or a scaled copy, would add 20-100 %)
      assert.is_true(tonumber(C.ch_peak_bytes(-1)) - before <= floats + labels + 4096 * 64)
      collectgarbage('collect')
      assert.is_true(tonumber(C.ch_live_bytes(-1)) - before <= floats + labels + 4096 * 64)
      assert.equal(2, #{ train, test })
    end)
  end)
end)

describe('MNIST-family loaders on generated files', function()
  local root
  setup(function() root = H.tmpdir() end)
  teardown(function() H.rmdir(root) end)

  it('reads the flat layout, scales, reshapes and caches an npz like Chainer', function()
    fake_mnist(root, 'mnist')
    H.with_env({ CHAINER_DATASET_ROOT = root, CHAINER_DATASET_URL_BASE = UNREACHABLE }, function()
      local train, test = D.get_mnist()
      assert.equal(5, train:len())
      assert.equal(3, test:len())
      local x = train[2][1]
      assert.same({ 784 }, x.shape)
      -- pixel 0 of image 1 (0-based) is 7, pixel 10 is 17
      assert.near(7 / 255, x:get(0), 1e-7)
      assert.near(17 / 255, x:get(10), 1e-7)
      assert.same({ 3, 4, 5, 6, 7 }, train:datasets()[2]:totable())
      assert.truthy(H.exists(root .. '/pfnet/chainer/mnist/train.npz'))
      local z = T.load_npz(root .. '/pfnet/chainer/mnist/train.npz')
      assert.same({ 5, 784 }, z.x.shape)
      assert.equal('uint8', z.x.dtype)
      assert.equal('uint8', z.y.dtype)
      -- the npz serves later calls (raw files gone)
      os.remove(root .. '/mnist/train-images-idx3-ubyte.gz')
      local tr2 = D.get_mnist{ ndim = 2, scale = 2, dtype = 'float64', label_dtype = 'int64' }
      assert.same({ 28, 28 }, tr2[1][1].shape)
      assert.equal('float64', tr2[1][1].dtype)
      assert.equal('int64', tr2[1][2].dtype)
      assert.near(2 * 9 / 255, tr2[1][1]:get(0, 9), 1e-12)
      local rgb = D.get_mnist{ ndim = 3, rgb_format = true }
      assert.same({ 3, 28, 28 }, rgb[1][1].shape)
      for c = 0, 2 do assert.near(9 / 255, rgb[1][1]:get(c, 0, 9), 1e-7) end
      assert.is_true(rgb:datasets()[1].is_contiguous)
      local bare = D.get_mnist{ withlabel = false }
      assert.same({ 5, 784 }, bare.shape)
    end)
  end)

  it('get_fashion_mnist and get_kuzushiji_mnist use their own folders', function()
    fake_mnist(root, 'fashion-mnist')
    fake_mnist(root, 'kuzushiji-mnist')
    H.with_env({ CHAINER_DATASET_ROOT = root, CHAINER_DATASET_URL_BASE = UNREACHABLE }, function()
      local tr = D.get_fashion_mnist()
      assert.equal(5, tr:len())
      local kt, ke = D.get_kuzushiji_mnist{ ndim = 2 }
      assert.same({ 28, 28 }, ke[1][1].shape)
      assert.equal('Ankle boot', D.get_fashion_mnist_labels()[10])
    end)
  end)

  it('rejects bad options', function()
    H.errors_with(function() D.get_mnist{ ndim = 4 } end, 'get_mnist', 'ndim')
    H.errors_with(function() D.get_mnist{ dtype = 'int32' } end, 'get_mnist', 'dtype')
    H.errors_with(function() D.get_mnist(5) end, 'get_mnist', 'options')
  end)
end)

describe('offline loaders', function()
  it('say which file to put where when the download fails', function()
    local root = H.tmpdir()
    H.with_env({ CHAINER_DATASET_ROOT = root, CHAINER_DATASET_URL_BASE = UNREACHABLE,
      CHAINLUA_DOWNLOAD_CONNECT_TIMEOUT = '2' }, function()
      H.errors_with(function() D.get_mnist() end, 'get_mnist', 'train-images-idx3-ubyte.gz',
        root .. '/mnist/train-images-idx3-ubyte.gz', 'CHAINER_DATASET_ROOT')
      H.errors_with(function() D.get_cifar10() end, 'get_cifar10', 'cifar-10-binary.tar.gz', root .. '/cifar10/')
      H.errors_with(function() D.get_ptb_words() end, 'ptb.train.txt', root .. '/ptb/ptb.train.txt')
      H.errors_with(function() D.get_svhn() end, 'get_svhn', 'train_32x32.mat')
    end)
    -- nothing half-written is left behind
    local p = io.popen("find '" .. root .. "' -name '*.part-*' | wc -l")
    assert.equal('0', p:read('*l'))
    p:close()
    H.rmdir(root)
  end)

  it('say that CHAINER_DATASET_ROOT is unset when it is, and which root that leaves', function()
    local home = H.tmpdir()
    H.with_env({ CHAINER_DATASET_ROOT = false, HOME = home, CHAINER_DATASET_URL_BASE = UNREACHABLE,
      CHAINLUA_DOWNLOAD_CONNECT_TIMEOUT = '2' }, function()
      H.errors_with(function() D.get_mnist() end, 'get_mnist', 'CHAINER_DATASET_ROOT is unset',
        "the default '" .. home .. "/.chainer/dataset'")
    end)
    local root = H.tmpdir()
    H.with_env({ CHAINER_DATASET_ROOT = root, CHAINER_DATASET_URL_BASE = UNREACHABLE,
      CHAINLUA_DOWNLOAD_CONNECT_TIMEOUT = '2' }, function()
      H.errors_with(function() D.get_mnist() end, "$CHAINER_DATASET_ROOT, now '" .. root .. "'")
    end)
    H.rmdir(home)
    H.rmdir(root)
  end)
end)

describe('get_cifar10 / get_cifar100 on generated binary files', function()
  local root
  setup(function() root = H.tmpdir() end)
  teardown(function() H.rmdir(root) end)

  -- record r of a file: label(s), then pixel p = (r * 3 + p) % 256
  local function records(n, label_bytes, label_of)
    local parts = {}
    for r = 0, n - 1 do
      local px = {}
      for p = 0, 3071 do px[p + 1] = string.char((r * 3 + p) % 256) end
      local lab = label_bytes == 1 and string.char(label_of(r)) or (string.char(r % 20) .. string.char(label_of(r)))
      parts[#parts + 1] = lab .. table.concat(px)
    end
    return table.concat(parts)
  end

  it('reads CIFAR-10 batches (extracted folder) as (3, 32, 32) in [0, scale]', function()
    local d = root .. '/cifar10/cifar-10-batches-bin'
    os.execute("mkdir -p '" .. d .. "'")
    for i = 1, 5 do H.write(d .. '/data_batch_' .. i .. '.bin', records(2, 1, function(r) return (r + i) % 10 end)) end
    H.write(d .. '/test_batch.bin', records(3, 1, function(r) return 9 - r end))
    H.with_env({ CHAINER_DATASET_ROOT = root, CHAINER_DATASET_URL_BASE = UNREACHABLE }, function()
      local train, test = D.get_cifar10{ scale = 255 }
      assert.equal(10, train:len())
      assert.equal(3, test:len())
      local x, t = test[2][1], test[2][2]
      assert.same({ 3, 32, 32 }, x.shape)
      assert.equal(8, t:item())
      assert.equal('int32', t.dtype)
      -- record 1: pixel p = (3 + p) % 256; channel 1 row 0 col 5 is p = 1029
      assert.equal((3 + 1029) % 256, x:get(1, 0, 5))
      assert.same({ 1, 2, 2, 3, 3, 4, 4, 5, 5, 6 }, train:datasets()[2]:totable())
      local flat = D.get_cifar10{ ndim = 1, withlabel = false }
      assert.same({ 10, 3072 }, flat.shape)
      assert.near(3 / 255, flat:get(1, 0), 1e-7)
      assert.truthy(H.exists(root .. '/pfnet/chainer/cifar/cifar-10.npz'))
    end)
  end)

  it('reads CIFAR-100 from the tarball with the fine labels', function()
    local d = root .. '/build/cifar-100-binary'
    os.execute("mkdir -p '" .. d .. "' '" .. root .. "/cifar100'")
    H.write(d .. '/train.bin', records(4, 2, function(r) return 90 + r end))
    H.write(d .. '/test.bin', records(2, 2, function(r) return 50 + r end))
    os.execute(string.format("tar -czf '%s/cifar100/cifar-100-binary.tar.gz' -C '%s/build' cifar-100-binary", root, root))
    H.with_env({ CHAINER_DATASET_ROOT = root, CHAINER_DATASET_URL_BASE = UNREACHABLE }, function()
      local train, test = D.get_cifar100()
      assert.equal(4, train:len())
      assert.same({ 90, 91, 92, 93 }, train:datasets()[2]:totable())
      assert.same({ 50, 51 }, test:datasets()[2]:totable())
      assert.near(1 / 255, train[1][1]:get(0, 0, 1), 1e-7)
    end)
  end)

  it('rejects files that are not CIFAR records', function()
    local r2 = H.tmpdir()
    local d = r2 .. '/cifar10/cifar-10-batches-bin'
    os.execute("mkdir -p '" .. d .. "'")
    for i = 1, 5 do H.write(d .. '/data_batch_' .. i .. '.bin', 'short') end
    H.write(d .. '/test_batch.bin', 'short')
    H.with_env({ CHAINER_DATASET_ROOT = r2 }, function()
      H.errors_with(function() D.get_cifar10() end, 'get_cifar10', 'not a CIFAR binary file')
    end)
    H.rmdir(r2)
  end)
end)

describe('get_ptb_words', function()
  it('numbers words by first appearance with <eos> per line (generated text)', function()
    local root = H.tmpdir()
    os.execute("mkdir -p '" .. root .. "/ptb'")
    H.write(root .. '/ptb/ptb.train.txt', ' a b a\n c <unk>\n')
    H.write(root .. '/ptb/ptb.valid.txt', ' b c\n')
    H.write(root .. '/ptb/ptb.test.txt', ' unk a\n')
    H.with_env({ CHAINER_DATASET_ROOT = root, CHAINER_DATASET_URL_BASE = UNREACHABLE }, function()
      local tr, va, te = D.get_ptb_words()
      assert.same({ 0, 1, 0, 2, 3, 4, 2 }, tr:totable())
      assert.equal('int32', tr.dtype)
      assert.same({ 1, 3, 2 }, va:totable())
      assert.same({ 4, 0, 2 }, te:totable())       -- unknown words map to <unk>
      local v = D.get_ptb_words_vocabulary()
      assert.same({ a = 0, b = 1, ['<eos>'] = 2, c = 3, ['<unk>'] = 4 }, v)
      local ctr, cva, cte, cv = D.get_ptb_chars()
      assert.equal(#' a b a\n c <unk>\n', ctr.size)
      assert.equal(cv[' '], ctr:get(0))
      assert.equal(cv['\n'], ctr:get(6))
    end)
    H.rmdir(root)
  end)

  local root = real_root()
  local run = root and H.exists(root .. '/ptb/ptb.train.txt') and it or pending
  run('matches the README counts on the real data', function()
    H.with_env({ CHAINER_DATASET_ROOT = root }, function()
      local tr, va, te = D.get_ptb_words()
      assert.equal(929589, tr.size)
      assert.equal(73760, va.size)
      assert.equal(82430, te.size)
      assert.equal(9999, tr:max():item())
      local n = 0
      for _ in pairs(D.get_ptb_words_vocabulary()) do n = n + 1 end
      assert.equal(10000, n)
    end)
  end)
end)

describe('get_svhn on a generated MAT file', function()
  -- a level-5 MAT file with uint8 X (32, 32, 3, n) and double y (n, 1)
  local function le32(v) return string.char(v % 256, math.floor(v / 256) % 256, math.floor(v / 65536) % 256, math.floor(v / 16777216) % 256) end
  local function elem(t, data) return le32(t) .. le32(#data) .. data .. string.rep('\0', (8 - #data % 8) % 8) end
  local function matrix(name, class, dims, t, data)
    local d = ''
    for _, v in ipairs(dims) do d = d .. le32(v) end
    local body = elem(6, le32(class) .. le32(0)) .. elem(5, d) .. elem(1, name) .. elem(t, data)
    return le32(14) .. le32(#body) .. body
  end
  local function mat_file(path, n, labels)
    local px = {}
    -- column-major: X[r, c, ch, i] at r + 32 c + 1024 ch + 3072 i; value (r + 2 c + ch + i) % 256
    for i = 0, n - 1 do for ch = 0, 2 do for c = 0, 31 do for r = 0, 31 do
      px[#px + 1] = string.char((r + 2 * c + ch + i) % 256)
    end end end end
    local ys = {}
    for i = 1, n do ys[i] = T.ffi.string(T.ffi.new('double[1]', labels[i]), 8) end
    local header = ('MATLAB 5.0 MAT-file, chainlua spec'):rep(1) .. string.rep(' ', 116 - 34)
    header = header .. string.rep('\0', 8) .. string.char(0, 1) .. 'IM'
    H.write(path, header .. matrix('X', 9, { 32, 32, 3, n }, 2, table.concat(px)) ..
      matrix('y', 6, { n, 1 }, 9, table.concat(ys)))
  end

  it('reads X as (3, 32, 32) images and maps label 10 to 0', function()
    local root = H.tmpdir()
    os.execute("mkdir -p '" .. root .. "/svhn'")
    mat_file(root .. '/svhn/train_32x32.mat', 2, { 10, 3 })
    mat_file(root .. '/svhn/test_32x32.mat', 1, { 7 })
    H.with_env({ CHAINER_DATASET_ROOT = root, CHAINER_DATASET_URL_BASE = UNREACHABLE }, function()
      local train, test = D.get_svhn{ scale = 255 }
      assert.equal(2, train:len())
      assert.same({ 0, 3 }, train:datasets()[2]:totable())
      assert.equal(7, test[1][2]:item())
      local x = train[2][1]
      assert.same({ 3, 32, 32 }, x.shape)
      -- channel 2, row 5, column 4 of image 1: 5 + 8 + 2 + 1
      assert.equal(16, x:get(2, 5, 4))
    end)
    H.rmdir(root)
  end)
end)
