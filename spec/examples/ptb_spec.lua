-- Shortened runs of examples/ptb (tag `examples`): the perplexity falls
-- within a few BPTT updates on the real Penn Treebank, --test mode runs end
-- to end, gentxt.lua generates from the saved model, and the NStepLSTM
-- variant learns too.  The full runs and their numbers: examples/ptb/README.md.
local json = require 'chainer.utils.json'

local H = require 'examples.helpers'
local chainlua, run, tmpdir, have_ptb = H.chainlua, H.run, H.tmpdir, H.have_ptb

describe('#examples ptb', function()
  it('train_ptb: perplexity falls in 20 BPTT updates; gentxt prints the prime word and 20 more', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    -- 20 updates of 20 streams x 35 words, 50 units, the small config otherwise
    local text, code = run(string.format('%s examples/ptb/train_ptb.lua --unit 50 --dropout 0 --epoch 1 ' ..
      '--train-words 14000 --valid-words 300 --log-interval 10 --threads 1 --seed 3 --out %s', chainlua(), out))
    assert.are.equal(0, code, text)
    assert.matches('#vocab = 10000', text)
    local log = json.read_file(out .. '/log')
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
    local gen, gcode = run(string.format('%s examples/ptb/gentxt.lua -m %s/model.npz -p stock --unit 50', chainlua(), out))
    assert.are.equal(0, gcode, gen)
    local line = gen:match('(stock [^\n]*)\n$')
    assert.is_not_nil(line, gen)
    local n = 0
    for tok in line:gsub('%.', ' . '):gmatch('%S+') do n = n + 1 end
    assert.are.equal(21, n, line)
    -- greedy decoding is deterministic
    local g1 = run(string.format('%s examples/ptb/gentxt.lua -m %s/model.npz -p stock --unit 50 --sample 0', chainlua(), out))
    local g2 = run(string.format('%s examples/ptb/gentxt.lua -m %s/model.npz -p stock --unit 50 --sample 0', chainlua(), out))
    assert.are.equal(g1, g2)
    local bad, bcode = run(string.format('%s examples/ptb/gentxt.lua -m %s/model.npz -p qwertyuiop --unit 50', chainlua(), out))
    assert.are_not.equal(0, bcode)
    assert.matches('ERROR: Unfortunately qwertyuiop is unknown.', bad)
    os.execute('rm -rf ' .. out)
  end)

  it('train_ptb --test: 100 words, six updates, a finite test perplexity of an untrained-size model', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local text, code = run(string.format('%s examples/ptb/train_ptb.lua --test --unit 30 --threads 1 --seed 1 --out %s',
      chainlua(), out))
    assert.are.equal(0, code, text)
    assert.matches('#vocab = 10000\n', text)
    assert.matches('\ntest\ntest perplexity: ', text)
    local tp = tonumber(text:match('test perplexity: ([%d%.e+]+)'))
    assert.is_true(tp >= 1e3 and tp <= 1e5, tostring(tp))
    -- each update reads 35 x 20 words = 7 epochs of the 100-word text: 6 updates reach epoch 39
    assert.is_not_nil(io.open(out .. '/snapshot_iter_6'), 'snapshot_iter_6')
    assert.is_nil(io.open(out .. '/snapshot_iter_7'))
    os.execute('rm -rf ' .. out)
  end)

  it('train_ptb_nstep: the NStepLSTM variant learns as well', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local text, code = run(string.format('%s examples/ptb/train_ptb_nstep.lua --unit 50 --dropout 0 --epoch 1 ' ..
      '--train-words 14000 --valid-words 300 --log-interval 10 --threads 1 --seed 3 --out %s', chainlua(), out))
    assert.are.equal(0, code, text)
    local log = json.read_file(out .. '/log')
    assert.are.equal(2, #log)
    assert.is_true(log[2].perplexity < log[1].perplexity * 0.8, log[1].perplexity .. ' -> ' .. log[2].perplexity)
    assert.is_true(log[2].val_perplexity < 3000, tostring(log[2].val_perplexity))
    local gen, gcode = run(string.format('%s examples/ptb/gentxt.lua --nstep -m %s/model.npz -p stock --unit 50 -l 5',
      chainlua(), out))
    assert.are.equal(0, gcode, gen)
    assert.matches('stock [^\n]+\n$', gen)
    os.execute('rm -rf ' .. out)
  end)
  it('--lr-decay: the epoch-indexed schedule, continued by a resumed run', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    -- 2800 words = 4 updates of 20 x 35 per epoch
    local cmd = '%s examples/ptb/train_ptb_nstep.lua --unit 10 --dropout 0 --epoch %d --train-words 2800 ' ..
      '--valid-words 100 --log-interval 4 --threads 1 --seed 1 --lr 0.8 --lr-decay 0.5 --decay-after 2 --out %s%s'
    local text, code = run(string.format(cmd, chainlua(), 4, out, ''))
    assert.are.equal(0, code, text)
    local lrs = {}
    for _, r in ipairs(json.read_file(out .. '/log')) do lrs[#lrs + 1] = r.lr end
    -- epochs 0 and 1 at --lr, then halved once per epoch
    assert.are.same({ 0.8, 0.8, 0.4, 0.2 }, lrs)
    -- resumed after epoch 2: the schedule continues from the epoch count
    local out2 = tmpdir()
    text, code = run(string.format(cmd, chainlua(), 4, out2, ' --resume ' .. out .. '/snapshot_iter_8'))
    assert.are.equal(0, code, text)
    local log2 = json.read_file(out2 .. '/log')
    assert.are.equal(0.2, log2[#log2].lr)
    os.execute('rm -rf ' .. out .. ' ' .. out2)
  end)
end)
