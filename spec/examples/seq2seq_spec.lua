-- A shortened run of examples/seq2seq (tag `examples`): on the first 640
-- English-Japanese pairs the loss falls, the BLEU extension reports a
-- score in [0, 1], sample translations are printed at the validation
-- interval and five at the end, and --eval-only reproduces the BLEU of a
-- snapshot.  (BLEU itself: spec/examples/bleu_spec.lua.)
local H = require 'examples.helpers'
local example_ok, example_fails, tmpdir = H.example_ok, H.example_fails, H.tmpdir

local function have_enja() return H.have_dataset('small_parallel_enja/train.en.000') end

describe('#examples seq2seq', function()
  it('the loss falls, BLEU is reported, translations are printed', function()
    if not have_enja() then pending('small_parallel_enja is not under CHAINER_DATASET_ROOT') return end
    local out = tmpdir()
    local cmd = 'examples/seq2seq/seq2seq.lua --train-size 640 --validation-size 20 --unit 64 --layer 1 ' ..
      '--batchsize 32 --epoch 4 --log-interval 20 --validation-interval 40 --noprogress --threads 1'
    local text = example_ok(cmd .. ' --seed 1 --out ' .. out)
    assert.matches('Dataset loaded.\nSource vocabulary size: %d+\nTarget vocabulary size: %d+\nTrain data size: 640\n' ..
      'Train source unknown ratio: 0.00%%\nTrain target unknown ratio: 0.00%%\nValidation data: 20\n', text)
    local log = H.log(out)
    assert.are.equal(4, #log)
    assert.are.equal(80, log[4].iteration)
    assert.is_true(log[4]['main/loss'] < 0.8 * log[1]['main/loss'], log[1]['main/loss'] .. ' -> ' .. log[4]['main/loss'])
    assert.is_true(log[4]['main/perp'] < 0.5 * log[1]['main/perp'])
    -- BLEU at iterations 40 and 80 (the validation interval)
    assert.is_nil(log[1]['validation/main/bleu'])
    for _, k in ipairs({ 2, 4 }) do
      local b = log[k]['validation/main/bleu']
      assert.is_true(b ~= nil and b >= 0 and b <= 1, tostring(b))
    end
    -- one sample per validation interval (2) and five at the end
    local n = 0
    for _ in text:gmatch('# source : [^\n]+\n# result : [^\n]*\n# expect : [^\n]+\n') do n = n + 1 end
    assert.are.equal(7, n)
    assert.is_not_nil(io.open(out .. '/snapshot_epoch_80'), 'snapshot_epoch_80')
    -- --eval-only on the last snapshot: the same BLEU, five translations, no training
    local ev = example_ok(cmd .. ' --out ' .. out .. '/ev --resume ' .. out .. '/snapshot_epoch_80 --eval-only')
    local b = tonumber(ev:match('validation/main/bleu: ([%d%.e%-]+) %(iteration 80%)'))
    assert.is_not_nil(b, ev)
    assert.near(log[4]['validation/main/bleu'], b, 1e-5 * math.max(b, 1e-3))
    local m = 0
    for _ in ev:gmatch('# source : ') do m = m + 1 end
    assert.are.equal(5, m)
    H.rmdir(out)
  end)

  it('reports a missing corpus file by name', function()
    example_fails('examples/seq2seq/seq2seq.lua /nonexistent/src /nonexistent/trg',
      "seq2seq: cannot open '/nonexistent/src'")
  end)
end)
