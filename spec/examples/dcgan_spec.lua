-- examples/dcgan: generator/discriminator shapes, the preview tiling, the
-- DCGANUpdater's losses and updates, and a shortened train_dcgan.lua run on
-- MNIST (losses reported, previews and snapshots written, --resume).
-- Tagged `examples` like spec/examples/examples_spec.lua.
local chainer = require 'chainer'
local T = chainer.tensor
local iterators = require 'chainer.iterators'
local optimizers = require 'chainer.optimizers'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local json = require 'chainer.utils.json'
local images = require 'chainer.datasets.image_dataset'

local net = dofile('examples/dcgan/net.lua')
local DCGANUpdater = dofile('examples/dcgan/updater.lua')
local visualize = dofile('examples/dcgan/visualize.lua')

local H = require 'examples.helpers'
local example_ok, example_fails = H.example_ok, H.example_fails
local tmpdir, exists, have_mnist = H.tmpdir, H.exists, H.have_mnist

describe('#examples dcgan networks', function()
  before_each(function() T.random.seed(0) end)

  it('Generator: z (N, n_hidden, 1, 1) in [-1, 1) -> images (N, C, 32, 32) in [0, 1]', function()
    local gen = net.Generator(16, { ch = 16, out_ch = 3 })
    local z = gen:make_hidden(4)
    assert.same({ 4, 16, 1, 1 }, z.shape)
    assert.is_true(z:min():item() >= -1 and z:max():item() < 1)
    local x = gen(z)
    assert.same({ 4, 3, 32, 32 }, x.shape)
    assert.is_true(x.array:min():item() >= 0 and x.array:max():item() <= 1)
    -- the layer widths follow ch: 16 * 4 * 4 -> 8 -> 4 -> 2 -> out_ch
    assert.same({ 256, 16 }, gen.l0.W.shape)
    assert.same({ 16, 8, 4, 4 }, gen.dc1.W.shape)
    assert.same({ 2, 3, 3, 3 }, gen.dc4.W.shape)
    local g1 = net.Generator(10, { ch = 16, out_ch = 1 })
    assert.same({ 2, 1, 32, 32 }, g1(g1:make_hidden(2)).shape)
  end)

  it('Discriminator: (N, C, 32, 32) -> one logit per image; BN without gamma', function()
    local dis = net.Discriminator({ ch = 16, in_ch = 1 })
    local y = dis(T.random.rand({ 3, 1, 32, 32 }))
    assert.same({ 3, 1 }, y.shape)
    assert.is_nil(dis.bn0_1.gamma)
    assert.is_not_nil(dis.bn0_1.beta)
    assert.same({ 16, 16, 3, 3 }, dis.c3_0.W.shape)
    assert.same({ 1, 16 * 4 * 4 }, dis.l4.W.shape)
    -- test mode: no noise, so the same input gives the same logits
    local x = T.random.rand({ 2, 1, 32, 32 })
    local a, b = chainer.using_config('train', false, function() return dis(x).array, dis(x).array end)
    assert.near(0, (a - b):abs():max():item(), 0)
  end)

  it('add_noise: sigma 0.2 Gaussian noise in training, identity in test mode', function()
    local h = chainer.Variable(T.zeros({ 100, 100 }))
    local n = net.add_noise(h).array
    assert.near(0, n:mean():item(), 0.01)
    assert.near(0.2, n:std():item(), 0.01)
    local same = chainer.using_config('train', false, function() return net.add_noise(h) end)
    assert.are.equal(h, same)
  end)
end)

describe('#examples dcgan preview tiling', function()
  it('tiles (N, 1, H, W) row-major into (rows*H, cols*W) uint8, clipped', function()
    -- x[n, 0, i, j] = (4n + 2i + j) / 255
    local v = {}
    for k = 0, 15 do v[k + 1] = k / 255 end
    local x = T.array(v, 'float32'):reshape({ 4, 1, 2, 2 })
    local g = visualize.tile(x, 2, 2)
    assert.same({ 4, 4 }, g.shape)
    assert.are.equal('uint8', g.dtype)
    for r = 0, 1 do for c = 0, 1 do for i = 0, 1 do for j = 0, 1 do
      assert.are.equal((r * 2 + c) * 4 + i * 2 + j, g:get(r * 2 + i, c * 2 + j))
    end end end end
    -- one row of three images: positions along the width
    local g13 = visualize.tile(x:slice({ 0, 3 }), 1, 3)
    assert.same({ 2, 6 }, g13.shape)
    assert.are.equal(4 * 2 + 1 * 2 + 1, g13:get(1, 5))
    -- RGB keeps the channels last; out-of-range values clip to 0 and 255
    local rgb = T.array({ -0.5, 0.5, 2, 1, 0, 0.2 }, 'float32'):reshape({ 2, 3, 1, 1 })
    local gr = visualize.tile(rgb, 1, 2)
    assert.same({ 1, 2, 3 }, gr.shape)
    assert.same({ 0, 127, 255, 255, 0, 51 }, gr:reshape({ 6 }):astype('int32'):totable())
  end)
end)

describe('#examples dcgan updater', function()
  it('one step reports gen/loss and dis/loss (2 log 2 and log 2 at the start) and updates both nets', function()
    T.random.seed(1)
    local gen = net.Generator(8, { ch = 16, out_ch = 1 })
    local dis = net.Discriminator({ ch = 16, in_ch = 1 })
    local data = T.random.uniform(0, 255, { 20, 1, 32, 32 })
    local it = iterators.SerialIterator(data, 10)
    local function opt(m) return optimizers.Adam({ alpha = 2e-4, beta1 = 0.5 }):setup(m) end
    local opt_gen, opt_dis = opt(gen), opt(dis)
    local updater = DCGANUpdater({ models = { gen, dis }, iterator = it, optimizer = { gen = opt_gen, dis = opt_dis } })
    local out = tmpdir()
    local trainer = training.Trainer(updater, { 2, 'iteration' }, { out = out })
    trainer:extend(extensions.LogReport({ trigger = { 1, 'iteration' } }))
    -- run one step, check the parameters moved, run the second
    gen.l0.W:to_cpu()
    local w_gen, w_dis = gen.l0.W.array:copy(), dis.l4.W.array:copy()
    trainer:run()
    assert.are.equal(2, updater.iteration)
    assert.is_true((gen.l0.W.array - w_gen):abs():max():item() > 0)
    assert.is_true((dis.l4.W.array - w_dis):abs():max():item() > 0)
    local log = json.read_file(out .. '/log')
    assert.are.equal(2, #log)
    -- with weights ~ N(0, 0.02) the logits start near 0: softplus(0) = log 2
    assert.near(2 * math.log(2), log[1]['dis/loss'], 0.05)
    assert.near(math.log(2), log[1]['gen/loss'], 0.05)
    assert.are.equal(2, opt_gen.t)
    assert.are.equal(2, opt_dis.t)
    os.execute('rm -rf ' .. out)
  end)

  it('rejects a missing model or optimizer', function()
    local ok, err = pcall(DCGANUpdater, { models = {}, iterator = {}, optimizer = {} })
    assert.is_false(ok)
    assert.matches('DCGANUpdater: expected {models = {gen, dis}', tostring(err))
    local gen = net.Generator(8, { ch = 16, out_ch = 1 })
    local it = iterators.SerialIterator(T.zeros({ 4, 1, 32, 32 }), 2)
    ok, err = pcall(DCGANUpdater, { models = { gen, gen }, iterator = it, optimizer = { gen = optimizers.Adam():setup(gen) } })
    assert.is_false(ok)
    assert.matches('optimizer must be a table {gen = opt_gen, dis = opt_dis}', tostring(err))
  end)
end)

describe('#examples dcgan training', function()
  it('train_dcgan (MNIST subset): losses reported, D learns, previews and snapshots written, --resume', function()
    if not have_mnist() then pending('MNIST is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local cmd = 'examples/dcgan/train_dcgan.lua --ch 16 --iteration 40 --dataset-size 500 ' ..
      '--display_interval 10 --snapshot_interval 20 --threads 1 --quiet --out ' .. out
    local text = example_ok(cmd)
    assert.matches('# Minibatch%-size: 50\n# n_hidden: 100\n', text)
    assert.matches('epoch       iteration   gen/loss    dis/loss', text)
    local log = H.log(out)
    assert.are.equal(4, #log)
    for _, e in ipairs(log) do
      assert.is_true(e['gen/loss'] > 0 and e['gen/loss'] < 10, text)
      assert.is_true(e['dis/loss'] > 0 and e['dis/loss'] < 10, text)
    end
    -- the discriminator learns to tell real from generated: its loss falls below its start
    assert.is_true(log[4]['dis/loss'] < log[1]['dis/loss'], text)
    for _, it in ipairs({ 20, 40 }) do
      for _, f in ipairs({ 'snapshot_iter_%d.npz', 'gen_iter_%d.npz', 'dis_iter_%d.npz', 'preview/image%08d.png' }) do
        assert.is_true(exists(out .. '/' .. string.format(f, it)), string.format(f, it))
      end
    end
    local img = images.read_image(out .. '/preview/image00000040.png', 'uint8')
    assert.same({ 1, 320, 320 }, img.shape)

    -- resume from iteration 20: the restored log keeps entries 10 and 20,
    -- iterations 21..40 are run again
    local text2 = example_ok(cmd .. ' --resume ' .. out .. '/snapshot_iter_20.npz')
    assert.matches('\n4 +40 ', text2)
    local log2 = H.log(out)
    assert.are.equal(4, #log2)
    for i = 1, 2 do
      assert.are.equal(log[i]['gen/loss'], log2[i]['gen/loss'])
      assert.are.equal(log[i]['dis/loss'], log2[i]['dis/loss'])
    end
    assert.are.equal(40, log2[4].iteration)
    H.rmdir(out)
  end)

  it('train_dcgan --dataset cifar10 runs on a generated CIFAR-10 binary set (RGB previews)', function()
    -- 10 images in each file, record r of class r, pixels a pattern of r and the file
    local root = H.fake_cifar10(10, 10, function(file, r)
      return r, function(p) return (p * 13 + r * 7 + file) % 256 end
    end)
    local out = root .. '/result'
    local text = example_ok('examples/dcgan/train_dcgan.lua --dataset cifar10 --ch 16 --batchsize 10 --iteration 4 ' ..
      '--display_interval 2 --snapshot_interval 4 --threads 1 --quiet --out ' .. out, root)
    assert.matches('# images: 50', text)
    assert.are.equal(2, #H.log(out))
    local img = images.read_image(out .. '/preview/image00000004.png', 'uint8')
    assert.same({ 3, 320, 320 }, img.shape)
    H.rmdir(root)
  end)

  it('train_dcgan rejects a bad --ch or --dataset', function()
    example_fails('examples/dcgan/train_dcgan.lua --ch 20', '%-%-ch must be a positive multiple of 8')
    example_fails('examples/dcgan/train_dcgan.lua --dataset svhn', '%-%-dataset must be mnist or cifar10')
  end)
end)
