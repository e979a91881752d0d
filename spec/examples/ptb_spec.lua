-- Shortened runs of examples/ptb (tag `examples`): the perplexity falls
-- within a few BPTT updates on the real Penn Treebank, --test mode runs end
-- to end, gentxt.lua generates from the saved model, and the NStepLSTM
-- variant learns too.  The full runs and their numbers: examples/ptb/README.md.
local H = require 'examples.helpers'
local example, example_ok, example_fails = H.example, H.example_ok, H.example_fails
local tmpdir, have_ptb = H.tmpdir, H.have_ptb

describe('#examples ptb', function()
  it('train_ptb: perplexity falls in 20 BPTT updates; gentxt prints the prime word and 20 more', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    -- 20 updates of 20 streams x 35 words, 50 units, the small config otherwise
    local text = example_ok('examples/ptb/train_ptb.lua --unit 50 --dropout 0 --epoch 1 ' ..
      '--train-words 14000 --valid-words 300 --log-interval 10 --threads 1 --seed 3 --out ' .. out)
    assert.matches('#vocab = 10000', text)
    local log = H.log(out)
    assert.are.equal(2, #log)
    assert.are.equal(10, log[1].iteration)
    -- exp(mean loss) of updates 1-10 (from ~10000, the vocabulary size) and 11-20
    assert.is_true(log[1].perplexity < 10000 and log[1].perplexity > 300, tostring(log[1].perplexity))
    assert.is_true(log[2].perplexity < log[1].perplexity * 0.8, log[1].perplexity .. ' -> ' .. log[2].perplexity)
    assert.is_true(log[2].val_perplexity < 3000, tostring(log[2].val_perplexity))
    assert.near(log[2].val_perplexity, math.exp(log[2]['validation/main/loss']), 1e-6 * log[2].val_perplexity)
    local tp = tonumber(text:match('test perplexity: ([%d%.e+]+)'))
    assert.is_true(tp ~= nil and tp < 3000, text)
    assert.is_not_nil(io.open(out .. '/model.npz'), 'model.npz')
    assert.is_not_nil(io.open(out .. '/snapshot_iter_20'), 'snapshot_iter_20')
    assert.is_not_nil(io.open(out .. '/model_iter_20'), 'model_iter_20')
    -- generation: the prime word, then 20 words ('<eos>' shows as '.')
    local gentxt = 'examples/ptb/gentxt.lua --unit 50 -m ' .. out .. '/model.npz -p '
    local gen = example_ok(gentxt .. 'stock')
    local line = gen:match('(stock [^\n]*)\n$')
    assert.is_not_nil(line, gen)
    local n = 0
    for tok in line:gsub('%.', ' . '):gmatch('%S+') do n = n + 1 end
    assert.are.equal(21, n, line)
    -- greedy decoding is deterministic
    assert.are.equal(example(gentxt .. 'stock --sample 0'), example(gentxt .. 'stock --sample 0'))
    example_fails(gentxt .. 'qwertyuiop', 'ERROR: Unfortunately qwertyuiop is unknown.')
    H.rmdir(out)
  end)

  it('train_ptb --test: 100 words, six updates, a finite test perplexity of an untrained-size model', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local text = example_ok('examples/ptb/train_ptb.lua --test --unit 30 --threads 1 --seed 1 --out ' .. out)
    assert.matches('#vocab = 10000\n', text)
    assert.matches('\ntest\ntest perplexity: ', text)
    local tp = tonumber(text:match('test perplexity: ([%d%.e+]+)'))
    assert.is_true(tp >= 1e3 and tp <= 1e5, tostring(tp))
    -- each update reads 35 x 20 words = 7 epochs of the 100-word text: 6 updates reach epoch 39
    assert.is_not_nil(io.open(out .. '/snapshot_iter_6'), 'snapshot_iter_6')
    assert.is_nil(io.open(out .. '/snapshot_iter_7'))
    H.rmdir(out)
  end)

  it('train_ptb_nstep: the NStepLSTM variant learns as well', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    example_ok('examples/ptb/train_ptb_nstep.lua --unit 50 --dropout 0 --epoch 1 ' ..
      '--train-words 14000 --valid-words 300 --log-interval 10 --threads 1 --seed 3 --out ' .. out)
    local log = H.log(out)
    assert.are.equal(2, #log)
    assert.is_true(log[2].perplexity < log[1].perplexity * 0.8, log[1].perplexity .. ' -> ' .. log[2].perplexity)
    assert.is_true(log[2].val_perplexity < 3000, tostring(log[2].val_perplexity))
    local gen = example_ok('examples/ptb/gentxt.lua --nstep -m ' .. out .. '/model.npz -p stock --unit 50 -l 5')
    assert.matches('stock [^\n]+\n$', gen)
    H.rmdir(out)
  end)
  it('--lr-decay: the epoch-indexed schedule, continued by a resumed run', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    -- 2800 words = 4 updates of 20 x 35 per epoch
    local cmd = 'examples/ptb/train_ptb_nstep.lua --unit 10 --dropout 0 --epoch 4 --train-words 2800 ' ..
      '--valid-words 100 --log-interval 4 --threads 1 --seed 1 --lr 0.8 --lr-decay 0.5 --decay-after 2 --out '
    example_ok(cmd .. out)
    local lrs = {}
    for _, r in ipairs(H.log(out)) do lrs[#lrs + 1] = r.lr end
    -- epochs 0 and 1 at --lr, then halved once per epoch
    assert.are.same({ 0.8, 0.8, 0.4, 0.2 }, lrs)
    -- resumed after epoch 2: the schedule continues from the epoch count
    local out2 = tmpdir()
    example_ok(cmd .. out2 .. ' --resume ' .. out .. '/snapshot_iter_8')
    local log2 = H.log(out2)
    assert.are.equal(0.2, log2[#log2].lr)
    H.rmdir(out)
    H.rmdir(out2)
  end)
end)
