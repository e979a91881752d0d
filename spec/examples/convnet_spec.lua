-- examples/convnet: the models' shapes and structure, a shortened LeNet5
-- run on MNIST (loss falls, snapshot/--resume, predict.lua on PNG and JPEG
-- files) and a smoke run on a generated CIFAR-10 binary set.  Tagged
-- `examples` like spec/examples/examples_spec.lua.
local chainer = require 'chainer'
local T = chainer.tensor
local json = require 'chainer.utils.json'
local images = require 'chainer.datasets.image_dataset'

local models = dofile('examples/convnet/models.lua')

local H = require 'examples.helpers'
local example, example_ok, example_fails = H.example, H.example_ok, H.example_fails
local tmpdir, exists, have_mnist = H.tmpdir, H.exists, H.have_mnist

local function count_params(link)
  local n = 0
  for p in link:params() do n = n + p.size end
  return n
end

describe('#examples convnet models', function()
  before_each(function() T.random.seed(0) end)

  it('LeNet5: (32, 1, 28, 28) -> (32, 10) logits; predict gives rows summing to 1', function()
    local m = models.LeNet5(10)
    local x = T.random.rand({ 32, 1, 28, 28 })
    local y = m(x)
    assert.same({ 32, 10 }, y.shape)
    local p = m:predict(x)
    assert.same({ 32, 10 }, p.shape)
    local sums = p.array:sum({ axis = 1 })
    for i = 0, 31 do assert.near(1, sums:get(i), 1e-5) end
    assert.is_true(p.array:min():item() >= 0)
    -- predict is the softmax of the logits, in test mode and without a graph
    local ref = chainer.functions.softmax(y).array
    assert.near(0, (ref - p.array):abs():max():item(), 1e-5)
    assert.is_nil(p.creator)
    -- the guide's sigmoid version has the same shapes: 28 -> 24 -> 12 -> 8 -> 4 -> 1
    local s = models.LeNet5(10, { activation = 'sigmoid' })
    assert.same({ 2, 10 }, s(T.random.rand({ 2, 1, 28, 28 })).shape)
    assert.same({ 120, 16, 4, 4 }, s.conv3.W.shape)
    assert.is_nil(s.bn1)
    -- with BatchNormalization after each convolution
    local b = models.build('lenet5-bn', 10)
    assert.same({ 5, 10 }, b(T.random.rand({ 5, 1, 28, 28 })).shape)
    assert.same({ 120 }, b.bn3.gamma.shape)
    -- a loss through L.Classifier, as in the guide
    local t = T.random.randint(0, 10, { 32 }, 'int32')
    local loss = chainer.links.Classifier(models.LeNet5(10))(x, t)
    assert.same({}, loss.shape)
    assert.is_true(loss.array:item() > 0)
  end)

  it('LeNet5 rejects an unknown activation; build() rejects an unknown arch', function()
    assert.has_error(function() models.LeNet5(10, { activation = 'tanh' }) end)
    local ok, err = pcall(models.LeNet5, 10, { activation = 'tanh' })
    assert.is_false(ok)
    assert.matches('LeNet5: activation', tostring(err))
    ok, err = pcall(models.build, 'alexnet', 10)
    assert.is_false(ok)
    assert.matches("unknown %-%-arch 'alexnet'", tostring(err))
    ok, err = pcall(models.ResNet, 34, 10)
    assert.is_false(ok)
    assert.matches('n_layers must be 50, 101 or 152', tostring(err))
  end)

  it('VGG16: five VGGBlocks (2, 2, 3, 3, 3 convs with BN), fc head on the last', function()
    local v = models.VGG16(10, { fc_units = 32 })
    assert.equal(5, v:len())
    local convs = {}
    for i = 1, 5 do convs[i] = v[i].n_convs end
    assert.same({ 2, 2, 3, 3, 3 }, convs)
    assert.is_nil(v[4].fc6)
    assert.is_not_nil(v[5].fc6)
    assert.is_not_nil(v[3].bn3)
    local y = v(T.random.rand({ 2, 3, 32, 32 }))
    assert.same({ 2, 10 }, y.shape)
    assert.same({ 512, 512, 3, 3 }, v[5].conv3.W.shape)
    local p = v:predict(T.random.rand({ 2, 3, 32, 32 }))
    assert.near(1, p.array:sum({ axis = 1 }):get(1), 1e-5)
  end)

  it('ResNet-50: bottleneck stages 3-4-6-3, global average pooling, 25,557,032 parameters', function()
    local r = models.ResNet50(1000)
    local y = r(T.random.rand({ 2, 3, 32, 32 }))
    assert.same({ 2, 1000 }, y.shape)
    assert.equal(3, #r.res2._forward)
    assert.equal(4, #r.res3._forward)
    assert.equal(6, #r.res4._forward)
    assert.equal(3, #r.res5._forward)
    -- the published ResNet-50 size: no bias on the convolutions, BN gamma/beta, fc with bias
    assert.equal(25557032, count_params(r))
    -- 1-channel 28x28 input (MNIST) works too: 28 -> 14 -> 7 -> 7 -> 4 -> 2 -> 1
    local m = models.ResNet(50, 10)
    assert.same({ 2, 10 }, m(T.random.rand({ 2, 1, 28, 28 })).shape)
  end)

  it('ResNet-152 (the guide\'s model) has 3+8+36+3 = 50 bottlenecks', function()
    assert.is_not_nil(models.ResNet101)   -- 3-4-23-3; not built here (44M parameters)
    local r152 = models.ResNet152(10)
    local n = 0
    for _, s in ipairs({ 'res2', 'res3', 'res4', 'res5' }) do n = n + #r152[s]._forward end
    assert.equal(50, n)
    assert.equal(8, #r152.res3._forward)
    assert.equal(36, #r152.res4._forward)
  end)
end)

describe('#examples convnet training', function()
  it('train_convnet (LeNet5, MNIST subset): loss falls, snapshot, --resume, predict.lua on PNG/JPEG', function()
    if not have_mnist() then pending('MNIST is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local cmd = 'examples/convnet/train_convnet.lua --arch lenet5 --epoch 2 --train-size 1000 ' ..
      '--test-size 500 --batchsize 50 --log-interval 10 --threads 1 --noplot --quiet --out ' .. out
    local text = example_ok(cmd)
    assert.matches('# Architecture: lenet5', text)
    assert.matches('epoch       iteration   main/loss', text)
    local log = H.log(out)
    assert.are.equal(4, #log)
    assert.is_true(log[4]['main/loss'] < log[1]['main/loss'] - 0.5, text)
    assert.is_true(log[4]['main/accuracy'] > log[1]['main/accuracy'])
    assert.is_true(log[4]['validation/main/accuracy'] > 0.6, text)
    assert.is_true(exists(out .. '/snapshot_iter_40'))
    assert.is_true(exists(out .. '/model.npz'))
    local info = json.read_file(out .. '/model.json')
    assert.same({ arch = 'lenet5', dataset = 'mnist', n_class = 10, in_channels = 1 }, info)

    -- resuming the finished run does no more iterations
    example_ok(cmd .. ' --resume ' .. out .. '/snapshot_iter_40')
    assert.are.equal(4, #H.log(out))

    -- predict.lua: exported test PNGs, then a black-on-white JPEG (inverted automatically)
    local ptext = example_ok('examples/convnet/predict.lua --from-test 4 --model ' .. out)
    local n = 0
    for _ in ptext:gmatch('test_%d%d%d%d%.png: predicted %d  %[%d %d%.%d%d%d%d, %d %d%.%d%d%d%d, %d %d%.%d%d%d%d%]  %(true %d%)\n') do
      n = n + 1
    end
    assert.are.equal(4, n, ptext)
    assert.matches('%d of 4 test images classified correctly', ptext)
    local png = images.read_image(out .. '/test_images/test_0001.png', 'uint8')
    assert.same({ 1, 28, 28 }, png.shape)
    local inverted = (255 - png:astype('float32')):astype('uint8'):reshape({ 28, 28 })
    images.write_image(out .. '/seven.jpg', inverted)
    local predict_seven = string.format('examples/convnet/predict.lua --model %s --image %s/seven.jpg --top 1', out, out)
    local jtext = example_ok(predict_seven)
    local auto = jtext:match('seven%.jpg: predicted (%d)')
    assert.is_not_nil(auto, jtext)
    -- without inversion the JPEG is a different (mostly white) input
    assert.matches('seven%.jpg: predicted %d', example(predict_seven .. ' --invert no'))
    -- the auto-inverted JPEG gets the same class as the original PNG
    local first = ptext:match('test_0001%.png: predicted (%d)')
    assert.are.equal(first, auto)

    -- bad use: no model directory
    example_fails(string.format('examples/convnet/predict.lua --model %s/none --image x.png', out),
      "predict: cannot open '.*/none/model.json'")
    H.rmdir(out)
  end)

  it('train_convnet --dataset cifar10 runs on a generated CIFAR-10 binary set', function()
    -- 8 images in each training file, 10 in the test file; class k
    -- (cycling with the record and the file) is bright in channel k % 3
    local root = H.fake_cifar10(8, 10, function(file, r)
      local k = (r + (file == 6 and 0 or file)) % 10
      return k, function(p)
        local c = math.floor(p / 1024)
        return c == k % 3 and 200 or (p * 7 + r) % 50
      end
    end)
    local out = root .. '/result'
    local text = example_ok('examples/convnet/train_convnet.lua --dataset cifar10 --arch lenet5 --epoch 2 ' ..
      '--batchsize 10 --threads 1 --noplot --quiet --out ' .. out, root)
    assert.matches('# train: 40, test: 10, classes: 10', text)
    local log = H.log(out)
    assert.are.equal(2, #log)
    for _, e in ipairs(log) do
      assert.is_true(e['main/loss'] == e['main/loss'] and e['main/loss'] < 10)
      assert.is_not_nil(e['validation/main/accuracy'])
    end
    assert.same({ arch = 'lenet5', dataset = 'cifar10', n_class = 10, in_channels = 3 }, json.read_file(out .. '/model.json'))
    H.rmdir(root)
  end)

  it('train_convnet rejects an unknown dataset or architecture', function()
    example_fails('examples/convnet/train_convnet.lua --dataset svhn', '%-%-dataset must be mnist, cifar10 or cifar100')
    if have_mnist() then
      example_fails('examples/convnet/train_convnet.lua --arch alexnet --train-size 10 --out ' .. tmpdir(),
        "unknown %-%-arch 'alexnet'")
    end
  end)
end)
