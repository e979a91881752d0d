-- Shortened runs of the examples (a few hundred iterations each): the loss
-- falls, the accuracy rises, the files appear.  Tagged `examples` so they
-- can be left out locally: busted --exclude-tags=examples.
-- The full runs with the accuracy targets are scripts/examples-check.
local json = require 'chainer.utils.json'

local H = require 'examples.helpers'
local example_ok, tmpdir, have_mnist = H.example_ok, H.tmpdir, H.have_mnist

describe('#examples', function()
  it('glance: loss falls, accuracy rises, plots and snapshots are written', function()
    local out = tmpdir()
    local text = example_ok('examples/glance/glance.lua --epoch 5 --out ' .. out)
    local log = H.log(out)
    assert.are.equal(5, #log)
    assert.is_true(log[5]['main/loss'] < log[1]['main/loss'])
    assert.is_true(log[5]['validation/main/loss'] < log[1]['validation/main/loss'])
    assert.is_true(log[5]['validation/main/accuracy'] > log[1]['validation/main/accuracy'])
    assert.is_true(log[5]['validation/main/accuracy'] > 0.85)
    assert.matches('\nPredicted [EP][a-z]+, Actual [EP][a-z]+\n$', text)
    assert.matches('epoch       main/loss   validation/main/loss  main/accuracy', text)
    for _, f in ipairs({ 'cg.dot', 'loss.svg', 'accuracy.svg' }) do
      assert.is_not_nil(io.open(out .. '/' .. f), f)
    end
    H.rmdir(out)
  end)

  it('train_mnist: two short epochs improve, snapshot and --resume work', function()
    if not have_mnist() then pending('MNIST is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local cmd = 'examples/mnist/train_mnist.lua --epoch 2 --batchsize 200 --unit 50 --threads 1 --noplot --out ' .. out
    local text = example_ok(cmd)
    local log = H.log(out)
    assert.are.equal(2, #log)
    assert.is_true(log[2]['main/loss'] < log[1]['main/loss'])
    assert.is_true(log[2]['main/accuracy'] > log[1]['main/accuracy'])
    assert.is_true(log[2]['validation/main/accuracy'] > 0.9)
    assert.matches('this epoch %[', text)
    -- resuming the finished run from its snapshot does no more iterations
    example_ok(cmd .. ' --epoch 2 --resume ' .. out .. '/snapshot_iter_600')
    H.rmdir(out)
  end)

  it("train_mnist --resume: a snapshot with the keys of Chainer's train_mnist.py loads strictly", function()
    if not have_mnist() then pending('MNIST is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local T = require('chainer').tensor
    local keys = require('training.chainer_snapshot').train_mnist_snapshot({ n_in = 784, units = 50, n_out = 10,
      n_train = 60000, iteration = 300, epoch = 1,
      log = { { ['main/loss'] = 0.4375, ['main/accuracy'] = 0.875, epoch = 1, iteration = 300, elapsed_time = 3.5 } } })
    T.savez_compressed(out .. '/chainer_snapshot', keys)   -- as Chainer's save_npz writes it
    example_ok(string.format('examples/mnist/train_mnist.lua --epoch 2 --batchsize 200 --unit 50 ' ..
      '--threads 1 --out %s --resume %s/chainer_snapshot', out, out))
    local log = H.log(out)
    assert.are.equal(2, #log)
    assert.are.equal(0.4375, log[1]['main/loss'])       -- the log came from the snapshot
    assert.are.equal(600, log[2].iteration)             -- one more epoch, not two
    assert.is_not_nil(io.open(out .. '/snapshot_iter_600'))
    H.rmdir(out)
  end)

  it('train_mnist --resume --noplot: a snapshot written by real Chainer 7.8.1 loads strictly and training goes on', function()
    if not have_mnist() then pending('MNIST is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local fixture = 'spec/fixtures/chainer/train_mnist_unit10_snapshot_iter_600'   -- see its README.md
    local chainer_log = json.read_file('spec/fixtures/chainer/train_mnist_unit10_log.json')
    -- (the file's PlotReport state is left unread, as Chainer does)
    example_ok(string.format('examples/mnist/train_mnist.lua --epoch 2 --unit 10 --threads 1 --noplot --out %s --resume %s',
      out, fixture))
    local log = H.log(out)
    assert.are.equal(3, #log)   -- Chainer's two entries (before training, epoch 1), then ours
    assert.are.same(chainer_log, { log[1], log[2] })
    assert.are.equal(2, log[3].epoch)
    assert.are.equal(1200, log[3].iteration)             -- one more epoch from Chainer's iteration 600
    assert.is_true(log[3].elapsed_time > chainer_log[2].elapsed_time)   -- the clock went on
    -- the model went on from Chainer's weights: better than Chainer's epoch 1
    assert.is_true(log[3]['main/loss'] < chainer_log[2]['main/loss'])
    assert.is_true(log[3]['validation/main/accuracy'] > chainer_log[2]['validation/main/accuracy'])
    H.rmdir(out)
  end)

  it('train_mnist_custom_loop: epoch lines and the saved model predicts 7', function()
    if not have_mnist() then pending('MNIST is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local text = example_ok('examples/mnist/train_mnist_custom_loop.lua --epoch 2 --batchsize 200 --threads 1 --out ' ..
      out .. '/my_mnist.model')
    local accs = {}
    for a in text:gmatch('epoch:%d%d train_loss:%d%.%d%d%d%d val_loss:%d%.%d%d%d%d val_accuracy:(%d%.%d%d%d%d)\n') do
      accs[#accs + 1] = tonumber(a)
    end
    assert.are.equal(2, #accs)
    assert.is_true(accs[2] > accs[1])
    assert.matches('label: 7\n%(784,%) %-> %(1, 784%)\npredicted label: 7\n$', text)
    H.rmdir(out)
  end)
end)
