-- Shortened runs of examples/word2vec (tag `examples`): --test prints
-- Chainer's header and per-epoch rows; a few epochs of skip-gram with
-- negative sampling and of CBOW with hierarchical softmax lower the loss (batches of 200, so 100 or 50 Adam steps per epoch);
-- search.lua answers --query and reports unknown words.
local H = require 'examples.helpers'
local chainlua, run, example_ok, example_fails = H.chainlua, H.run, H.example_ok, H.example_fails
local tmpdir, have_ptb = H.tmpdir, H.have_ptb

describe('#examples word2vec', function()
  it('--test: the header, 20 epoch rows with finite losses, a word2vec.model file', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local text = example_ok('examples/word2vec/train_word2vec.lua --test --noprogress --threads 1 --seed 1 --out ' .. out)
    assert.matches('Device: %-1\n# unit: 100\nWindow: 5\nMinibatch%-size: 1000\n# epoch: 20\nTraining model: skipgram\n' ..
      'Output type: hsm\n\nn_vocab: 10000\ndata length: 100\n', text)
    local log = H.log(out)
    assert.are.equal(20, #log)
    for _, e in ipairs(log) do
      assert.is_true(e['main/loss'] > 0 and e['main/loss'] < 1e5, tostring(e['main/loss']))
      assert.is_true(e['validation/main/loss'] > 0 and e['validation/main/loss'] < 1e5)
    end
    local f = assert(io.open(out .. '/word2vec.model'))
    assert.are.equal('10000 100', f:read('*l'))
    local first = f:read('*l')
    local n = 0
    for _ in first:gmatch('%S+') do n = n + 1 end
    assert.are.equal(101, n)
    f:close()
    H.rmdir(out)
  end)

  it('skip-gram + negative sampling: the loss falls over 3 epochs; search.lua --query', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    example_ok('examples/word2vec/train_word2vec.lua --out-type ns --train-words 20000 ' ..
      '--batchsize 200 --epoch 3 --unit 50 --noprogress --threads 1 --seed 1 --out ' .. out)
    local log = H.log(out)
    assert.are.equal(3, #log)
    assert.is_true(log[3]['main/loss'] < 0.8 * log[1]['main/loss'], log[1]['main/loss'] .. ' -> ' .. log[3]['main/loss'])
    assert.is_true(log[3]['validation/main/loss'] < log[1]['validation/main/loss'])
    local s = example_ok('examples/word2vec/search.lua -m ' .. out .. '/word2vec.model --query the,qwertyuiop -n 3')
    local rows = {}
    for word, sim in s:gmatch('\n(%S+): (%-?[%d%.e%-]+)') do rows[#rows + 1] = { word, tonumber(sim) } end
    assert.matches('^query: the\n', s)
    assert.are.equal(3, #rows, s)
    for i, r in ipairs(rows) do
      assert.are_not.equal('the', r[1])
      assert.is_true(r[2] <= 1 + 1e-6 and r[2] >= -1 - 1e-6)
      if i > 1 then assert.is_true(r[2] <= rows[i - 1][2]) end   -- most similar first
    end
    assert.matches('"qwertyuiop" is not found\n', s)
    -- interactive mode reads words from stdin
    local si = run(string.format('printf "the\\n" | %s examples/word2vec/search.lua -m %s/word2vec.model -n 2',
      chainlua(), out))
    assert.matches('^>> query: the\n[^\n]+\n[^\n]+\n>> \n$', si)
    H.rmdir(out)
  end)

  it('CBOW + hierarchical softmax: the loss falls over 3 epochs', function()
    if not have_ptb() then pending('PTB is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local text = example_ok('examples/word2vec/train_word2vec.lua --model cbow --out-type hsm ' ..
      '--train-words 10000 --batchsize 200 --epoch 3 --unit 50 --noprogress --threads 1 --seed 1 --out ' .. out)
    assert.matches('Training model: cbow\nOutput type: hsm\n', text)
    local log = H.log(out)
    assert.are.equal(3, #log)
    -- (W starts at 0 and Adam moves it slowly: a small but steady decrease)
    assert.is_true(log[2]['main/loss'] < log[1]['main/loss'])
    assert.is_true(log[3]['main/loss'] < 0.99 * log[1]['main/loss'], log[1]['main/loss'] .. ' -> ' .. log[3]['main/loss'])
    H.rmdir(out)
  end)

  it('rejects a bad --out-type naming the option', function()
    example_fails('examples/word2vec/train_word2vec.lua --out-type foo',
      "%-%-out%-type must be 'hsm', 'ns' or 'original'")
  end)
end)
